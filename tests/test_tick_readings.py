"""What a tick reads: a scene gathered once a tick shows each perceiver what a perception of
its own would; the current block is the first block covering the time."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from townbot.llm.offline import OfflineModel
from townbot.mind.agent import AgentMind
from townbot.mind.memory import MemoryStream
from townbot.mind.plans import PlanBlock
from townbot.mind.reacting import Sighting
from townbot.mind.state import MindState
from townbot.town.body import Body
from townbot.town.mishaps import is_alarming
from townbot.town.perception import Scene, describe, is_free_to_talk, shown

NINE = datetime(2023, 2, 13, 9, 0)
GAP = timedelta(hours=2)


def own_perception(name: str, bodies: dict[str, Body], objects: dict[str, str],
                   defaults: dict[str, str], bandwidth: int) -> list[Sighting]:
    """Perception by its rules, for one perceiver, without anything shared."""
    me = bodies[name]
    if me.walking or me.sector is None:
        return []
    here = sorted((n, b) for n, b in bodies.items() if (b.sector, b.arena) == (me.sector, me.arena))
    seen = [Sighting(describe(n, b), "agent", shown(n, b), b.action, available=is_free_to_talk(b))
            for n, b in here if n != name][:bandwidth]
    in_use = {(b.object_path, b.object_state) for b in bodies.values()}
    room = me.arena if "'s " in me.arena else f"the {me.arena}"
    for path in sorted(p for p, s in objects.items() if s != defaults.get(p)):
        state = objects[path]
        arena, _, thing = path[len(f"{me.sector}: "):].rpartition(": ")
        in_room = path.startswith(f"{me.sector}: {me.arena}: ")
        trouble = path.startswith(f"{me.sector}: ") and is_alarming(state)  # seen from any room
        where = room if in_room else arena if "'s " in arena else f"the {arena}"
        if len(seen) < bandwidth and (in_room or trouble) and not (
                path == me.object_path and state == me.object_state):
            seen.append(Sighting(f"The {thing} in {where} is \"{state}\"", "object",
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
