"""The tick's short cuts give what the long way gives: a sight table kept with its index
forgets what a scan of it forgets, in the same order; a scene shared by everyone in an arena
shows each of them what a perception of its own would (its objects found by bisection); the
block found by time in a plan is the first block covering that time; the clock's readings
follow the tick; the engine's gathering of tasks runs, fails and is cancelled as
asyncio.gather."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime, timedelta

import pytest

from townbot.llm.offline import OfflineModel
from townbot.llm.port import CallContext
from townbot.mind.agent import AgentMind
from townbot.mind.attention import SightIndex, note, sort_sightings
from townbot.mind.memory import MemoryStream
from townbot.mind.plans import PlanBlock
from townbot.mind.reacting import Sighting
from townbot.mind.state import MindState, SightTable
from townbot.town.body import Body
from townbot.town.engine import ClockReadings, gathered
from townbot.town.perception import Scene, describe, is_free_to_talk, shown
from townbot.world.clock import GameClock
from townbot.world.model import split_path

NINE = datetime(2023, 2, 13, 9, 0)
GAP = timedelta(hours=2)


def test_an_indexed_sight_table_forgets_as_a_scanned_one_does():
    rng = random.Random(7)
    texts = [f"person {n} is doing {m}" for n in range(12) for m in range(3)]
    scanned, indexed, index = SightTable(), SightTable(), SightIndex()
    now = NINE
    for tick in range(300):
        now += timedelta(minutes=rng.choice([0, 10, 10, 10, 30, 60]))  # a moment may repeat
        seen = [Sighting(text, "agent", text, "here") for text in rng.sample(texts, rng.randint(0, 8))]
        assert sort_sightings(scanned, seen, now, GAP) == sort_sightings(indexed, seen, now, GAP,
                                                                         index)
        if tick % 3 == 0:  # the resident's own doings are noted between perceptions
            own = f"me doing {tick % 7}"
            assert note(scanned, own, now, GAP) == note(indexed, own, now, GAP, index)
        if tick % 50 == 49:  # changed behind the index's back: it reads the table again
            gone = rng.choice(list(scanned))
            scanned.pop(gone), indexed.pop(gone)
        assert list(indexed.items()) == list(scanned.items()), tick
        assert indexed.take_changes() == scanned.take_changes(), tick  # what a commit logs


def test_a_perception_stamped_at_once_is_its_sights_noted_one_at_a_time():
    rng = random.Random(11)
    texts = [f"person {n} is doing {m}" for n in range(6) for m in range(3)]
    at_once, one_by_one, index = SightTable(), SightTable(), SightIndex()
    plain: dict[str, datetime] = {}  # a plain dict takes the same stamps
    now = NINE
    for tick in range(200):
        now += timedelta(minutes=rng.choice([0, 10, 10, 30, 60]))
        seen = [Sighting(text, "agent", text, "here")  # a text may come twice
                for text in rng.choices(texts, k=rng.randint(0, 7))]
        fresh, same = sort_sightings(at_once, seen, now, GAP, index)
        new = [note(one_by_one, s.text, now, GAP) for s in seen]
        sort_sightings(one_by_one, [], now, GAP)  # forgets as the perception does
        assert fresh == [s for s, is_new in zip(seen, new, strict=True) if is_new], tick
        assert same == [s for s, is_new in zip(seen, new, strict=True) if not is_new], tick
        assert sort_sightings(plain, seen, now, GAP) == (fresh, same), tick
        assert list(at_once.items()) == list(one_by_one.items()) == list(plain.items()), tick
        assert at_once.take_changes() == one_by_one.take_changes(), tick


def test_an_index_reads_a_table_again_when_time_goes_back_or_the_table_is_another():
    def twins() -> tuple[SightTable, SightTable]:
        entries = {"old": NINE, "older": NINE - timedelta(hours=1), "new": NINE + timedelta(hours=1)}
        return SightTable(entries), SightTable(entries)

    index = SightIndex()
    for moment in (NINE + timedelta(hours=2), NINE - timedelta(hours=3),  # back in time
                   NINE + timedelta(minutes=190)):
        scanned, indexed = twins()  # another table each time
        note(scanned, "seen", moment, GAP), note(indexed, "seen", moment, GAP, index)
        sort_sightings(scanned, [], moment + timedelta(minutes=10), GAP)
        sort_sightings(indexed, [], moment + timedelta(minutes=10), GAP, index)
        assert list(indexed.items()) == list(scanned.items()), moment
        assert indexed.take_changes() == scanned.take_changes(), moment


def own_perception(name: str, bodies: dict[str, Body], objects: dict[str, str],
                   defaults: dict[str, str], bandwidth: int) -> list[Sighting]:
    """Perception by its rules, for one perceiver, without anything shared."""
    me = bodies[name]
    if me.walking or me.sector is None:
        return []
    here = sorted((n, b) for n, b in bodies.items() if (b.sector, b.arena) == (me.sector, me.arena))
    seen = [Sighting(describe(n, b), "agent", shown(n, b), b.action, available=is_free_to_talk(b))
            for n, b in here if n != name][:bandwidth]
    in_use = {(b.object_path, b.object_state) for _, b in here}
    room = me.arena if "'s " in me.arena else f"the {me.arena}"
    for path in sorted(p for p, s in objects.items() if s != defaults.get(p)):
        state = objects[path]
        if len(seen) < bandwidth and path.startswith(f"{me.sector}: {me.arena}: ") and not (
                path == me.object_path and state == me.object_state):
            seen.append(Sighting(f"The {split_path(path)[2]} in {room} is \"{state}\"", "object",
                                 path, state, attended=(path, state) in in_use))
    return seen


def test_a_shared_scene_shows_everyone_what_their_own_perception_would():
    rng = random.Random(3)
    # Names that begin with another's (and sort either side of it): an arena's objects are
    # those whose path starts with its own, as each perception finds them.
    places = [("Cafe", "kitchen"), ("Cafe", "Maria's room"), ("Park", "garden"),
              ("Cafe", "kitchen2"), ("Cafe", "kitchen: back")]
    objects = {f"{s}: {a}: {thing}": "idle" for s, a in places for thing in ("stove", "lamp", "tap")}
    for trial in range(40):
        bodies = {}
        for n in range(rng.randint(1, 14)):
            sector, arena = rng.choice(places)
            body = Body(sector, arena, rng.choice(["reading", "sleeping", "talking with X"]),
                        visitor="a guest" if rng.random() < 0.1 else None)
            if rng.random() < 0.1:
                body.set_travel(sector, arena, NINE)
            if rng.random() < 0.4:
                body.object_path = rng.choice(list(objects))
                body.object_state = rng.choice(["idle", "on"])
            bodies[f"person {n:02d}"] = body
        state = {path: rng.choice(["idle", "idle", "on", "burning"]) for path in objects}
        defaults = dict.fromkeys(objects, "idle")
        bandwidth = rng.randint(1, 9)
        scene = Scene(bodies, state, defaults)
        for name in rng.sample(list(bodies), len(bodies)):  # in any order
            assert scene.perceive(name, bandwidth) == own_perception(
                name, bodies, state, defaults, bandwidth), (trial, name)


def test_the_clock_readings_follow_the_tick():
    clock = GameClock(NINE, tick_minutes=10)
    readings = ClockReadings(clock, None)
    assert readings.now() == NINE and readings.context() == CallContext(game_day=1)
    clock.tick = 6 * 24  # a day on: read again, as the engine's restore sets it
    assert readings.now() == NINE + timedelta(days=1)
    assert readings.context() == CallContext(game_day=2)
    clock.advance()
    assert readings.now() == clock.now


def test_the_current_block_is_the_first_block_covering_the_time(world):
    rng = random.Random(5)
    mind = AgentMind(world.personas["Klaus Mueller"], OfflineModel(), MemoryStream(8), MindState())
    for trial in range(200):
        blocks, start = [], NINE
        for n in range(rng.randint(0, 12)):  # mostly in order; sometimes gaps or overlaps
            start += timedelta(minutes=rng.choice([0, 30, 60, 90]) - (30 if rng.random() < 0.1 else 0))
            blocks.append(PlanBlock(start, start + timedelta(minutes=rng.choice([0, 30, 60, 120])),
                                    f"block {n}"))
        if rng.random() < 0.2:
            rng.shuffle(blocks)
        mind.state.planning.blocks = blocks
        for minute in sorted(rng.sample(range(-60, 900, 5), 30)):  # a day's steps, in order
            moment = NINE + timedelta(minutes=minute)
            expected = next((b for b in blocks if b.covers(moment)), None)
            assert mind.current_block(moment) is expected, (trial, minute)


async def _run_mix(gather, rng: random.Random) -> tuple[list, list[str]]:
    """Coroutines that finish at once, wait on loop passes or on an inner gather, as minds'
    steps do, gathered by `gather`; what it returns and the order in which every step ran."""
    log: list[str] = []

    async def inner(name: str) -> None:
        log.append(name)

    async def step(n: int, kind: int, passes: int) -> int:
        log.append(f"{n} starts")
        if kind == 1:
            await asyncio.gather(inner(f"{n} reflects"), inner(f"{n} acts"))
        for _ in range(passes if kind == 2 else 0):
            await asyncio.sleep(0)
            log.append(f"{n} goes on")
        log.append(f"{n} ends")
        return n * 10

    async def bystander() -> None:  # already scheduled when the tick gathers
        log.append("bystander")
        await asyncio.sleep(0)
        log.append("bystander again")

    waiting = asyncio.get_running_loop().create_task(bystander())
    kinds = [(rng.choice([0, 0, 0, 1, 2]), rng.randint(1, 3)) for _ in range(rng.randint(0, 9))]
    results = await gather([step(n, kind, passes) for n, (kind, passes) in enumerate(kinds)])
    await waiting
    return list(results), log


async def test_gathered_runs_its_tasks_as_asyncio_gather_does():
    for trial in range(60):
        by_gather = await _run_mix(lambda coros: asyncio.gather(*coros), random.Random(trial))
        assert await _run_mix(gathered, random.Random(trial)) == by_gather, trial


async def test_gathered_fails_as_asyncio_gather_does():
    async def failing(n: int, passes: int) -> int:
        for _ in range(passes):
            await asyncio.sleep(0)
        if n % 3 == 1:
            raise ValueError(n)
        return n

    for trial in range(40):
        rng = random.Random(trial)
        passes = [rng.choice([0, 0, 1, 2]) for _ in range(rng.randint(1, 8))]
        outcomes = []
        for gather in (lambda coros: asyncio.gather(*coros), gathered):
            try:
                outcomes.append(await gather([failing(n, p) for n, p in enumerate(passes)]))
            except ValueError as error:
                outcomes.append(error.args)
            for _ in range(4):  # the tasks left running finish (a failure does not stop them)
                await asyncio.sleep(0)
        assert outcomes[0] == outcomes[1], trial


async def test_cancelling_gathered_cancels_its_tasks():
    for passes_before_cancel in (0, 1, 2):
        started: list[asyncio.Task] = []

        async def waits(at_once: bool, started: list[asyncio.Task] = started) -> None:
            started.append(asyncio.current_task())  # type: ignore[arg-type]
            if not at_once:
                await asyncio.Event().wait()

        outer = asyncio.get_running_loop().create_task(
            gathered(waits(n % 2 == 0) for n in range(4)))
        for _ in range(passes_before_cancel):
            await asyncio.sleep(0)
        outer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await outer
        await asyncio.sleep(0)
        # Cancelled before its first step, it made no tasks; after, those still waiting end.
        expected = [False, True, False, True] if passes_before_cancel else []
        assert [task.cancelled() for task in started] == expected
        assert all(task.done() for task in started)
