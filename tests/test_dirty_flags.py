"""The dirty-flag contract: whoever changes a part of a mind, or a body, marks it; a commit
encodes and writes only what is marked; after a failed commit the town reloads, so the marks
it cleared lose nothing."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import open_engine

from townbot.mind import state
from townbot.mind.state import MindState, ReflectionState
from townbot.store import database
from townbot.store.database import TickChanges, UsageLog
from townbot.town import commands
from townbot.town.body import Body

STOVE = "Isabella Rodriguez's apartment: kitchen: stove"


def test_a_loaded_part_is_clean_and_a_marked_but_unchanged_part_is_not_written():
    mind = MindState.from_dict(MindState().to_dict())
    assert not any(part.dirty for part in mind.parts())
    assert mind.take_changes() == {}
    mind.reflection.importance_since_reflection = 5
    mind.reflection.mark()
    assert set(mind.take_changes()) == {"reflection"}
    mind.reflection.mark()
    assert mind.take_changes() == {}, "marked, but as already stored"
    assert not mind.reflection.dirty


def test_a_change_without_a_mark_is_caught_when_checking(monkeypatch):
    monkeypatch.setattr(state, "CHECK_UNMARKED", True)
    mind = MindState.from_dict(MindState(reflection=ReflectionState(4)).to_dict())
    mind.reflection.importance_since_reflection += 1
    with pytest.raises(AssertionError, match="the reflection part changed without being marked"):
        mind.take_changes()


def test_a_body_is_dirty_only_when_a_field_really_changes():
    body = Body.from_dict(Body("Hobbs Cafe", "cafe", "sleeping").to_dict())
    assert body.take_change() is None
    body.action, body.sector = "sleeping", "Hobbs Cafe"  # the same values
    assert body.take_change() is None
    body.action = "baking bread"
    assert '"baking bread"' in (body.take_change() or "")
    assert body.take_change() is None
    body.action, body.action = "washing up", "baking bread"  # changed and put back
    assert body.take_change() is None
    assert Body("Hobbs Cafe", "cafe").take_change() is not None  # made afresh: not yet written


@pytest.fixture
async def town(world, tmp_path):
    engine = await open_engine(world, tmp_path / "town.db")
    for _ in range(6):  # past 7:00, so some residents are up and have planned their day
        await engine.tick()
    written: list[TickChanges] = []
    save = engine.store.save_tick

    async def recording(changes: TickChanges, usage: UsageLog | None = None) -> None:
        written.append(changes)
        await save(changes, usage)

    engine.store.save_tick = recording  # type: ignore[method-assign]
    yield engine, written
    await engine.store.close()


def parts_of(changes: TickChanges) -> set[tuple[str, str]]:
    """The parts a commit wrote."""
    return {(agent, part) for agent, part, _ in changes.mind_parts}


async def reloads_as_in_memory(engine) -> None:
    """What the database holds is exactly the town in memory: no mark was missed."""
    stored = await engine.store.agents(engine.town.id)
    for name, mind in engine.minds.items():
        assert MindState.from_dict(stored[name][1]) == mind.state, name
        assert Body.from_dict(stored[name][0]) == engine.bodies[name], name


ISABELLA, KLAUS = "Isabella Rodriguez", "Klaus Mueller"


async def test_a_command_writes_the_parts_it_changed_and_no_others(town):
    engine, written = town
    awake = next(n for n, b in sorted(engine.bodies.items()) if b.action != "sleeping")

    await commands.change_object(engine, STOVE, "burning")
    assert parts_of(written[-1]) == set() and written[-1].bodies == {}
    assert written[-1].objects == {STOVE: ("burning", written[-1].objects[STOVE][1])}

    await commands.seed(engine, ISABELLA, "I will bake a cake for Klaus.")
    assert {part for agent, part in parts_of(written[-1]) if agent != ISABELLA} == set()
    assert (ISABELLA, "memory_queue") in parts_of(written[-1])

    await commands.remember_interview(engine, KLAUS, "Ada", "What are you reading?", "A book on bees.")
    assert {agent for agent, _ in parts_of(written[-1])} == {KLAUS}

    _, listened = await commands.announce(engine, "The library opens late today.", None)
    listeners = {agent for agent, _, _ in written[-1].new_memories}
    assert len(listeners) == listened > 0
    assert {agent for agent, _ in parts_of(written[-1])} <= listeners

    thought, changed = await commands.whisper(engine, awake, "You want to visit the park this afternoon.")
    assert (awake, "memory_queue") in parts_of(written[-1])
    if changed:
        assert (awake, "planning") in parts_of(written[-1])

    await commands.apply_scenario(engine, [(KLAUS, "I should call Maria.")], [(STOVE, "off")], None)
    assert {agent for agent, _ in parts_of(written[-1])} == {KLAUS}

    await commands.arrive(engine, "test:ada", "Ada", "a reporter", "Johnson Park", "park")
    assert parts_of(written[-1]) == set() and written[-1].bodies == {}
    events, _ = await commands.speak(engine, "Ada", "Hello there!", [ISABELLA], None, [])
    assert {agent for agent, _ in parts_of(written[-1])} == {ISABELLA}

    await commands.take_over(engine, "test:kim", KLAUS)
    assert parts_of(written[-1]) == set()
    await commands.walk(engine, KLAUS, "Hobbs Cafe", "cafe")
    assert set(written[-1].bodies) == {KLAUS} and parts_of(written[-1]) == set()
    await commands.leave(engine, "test:kim")
    await reloads_as_in_memory(engine)


async def test_a_tick_writes_only_what_changed(town):
    engine, written = town
    await engine.tick()
    changes = written[-1]
    sleeping = {n for n, b in engine.bodies.items() if b.action == "sleeping"}
    assert sleeping, "someone is still asleep at 7:30"
    assert not sleeping & set(changes.bodies)
    assert len(changes.mind_parts) < len(engine.minds) * len(MindState().parts())
    await reloads_as_in_memory(engine)


async def test_after_a_failed_commit_the_town_reloads_and_the_next_commit_loses_nothing(
        town, monkeypatch):
    engine, _ = town

    def disk_full(*_args, **_kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    with monkeypatch.context() as patch:
        patch.setattr(database, "tick_write", disk_full)
        with pytest.raises(sqlite3.OperationalError):
            await engine.tick()  # the minds marked and cleared their parts, then the commit failed
    assert engine.clock.tick == 6
    await reloads_as_in_memory(engine)  # the town went back to its last commit
    for _ in range(2):
        await engine.tick()
    await reloads_as_in_memory(engine)
    assert engine.clock.tick == 8
