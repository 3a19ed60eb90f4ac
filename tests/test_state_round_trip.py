"""Every stateful part survives save and load exactly, from one table; keys from an older
version are tolerated; a town saved by the previous version (schema 2) opens and goes on."""

from __future__ import annotations

import json
import shutil
from datetime import date, datetime
from pathlib import Path

import numpy as np
import pytest
from conftest import open_engine

from townbot.mind.plans import PlanBlock, PlanStep
from townbot.mind.state import (
    PART_TYPES,
    AttentionState,
    ConversationState,
    MemoryQueue,
    MindState,
    Pending,
    PlaceKnowledge,
    PlanState,
    ReactionState,
    ReflectionState,
    Refusal,
    SummaryState,
)
from townbot.town.body import Body
from townbot.town.service import Person, TownService

FIXTURE = Path(__file__).parent / "fixtures" / "town_v2.db"
NINE = datetime(2023, 2, 13, 9, 0)
TEN = datetime(2023, 2, 13, 10, 10)
OLDER = {"from_an_older_version": [1, 2], "seen": {"a sight": "2023-02-13 09:00"}}

BLOCK = PlanBlock(NINE, TEN, "opening the cafe", "Hobbs Cafe", "cafe",
                  [PlanStep(NINE, TEN, "unlocking the door", "cafe counter", "in use", "🔑")])
PARTS = [
    PlanState(date(2023, 2, 13), ["open the cafe at 8 am"], [BLOCK], ["a party tomorrow"], TEN),
    PlaceKnowledge({"Hobbs Cafe": ["cafe", "kitchen"]},
                   {"Hobbs Cafe: kitchen": Refusal(TEN, "the kitchen | is full")}),
    AttentionState({"The stove is burning": NINE}, "Hobbs Cafe|cafe|opening the cafe"),
    MemoryQueue([Pending("thought", "I should call Maria", (3, 4), NINE)], [7, 8], TEN),
    SummaryState({"core": "kind", "occupation": "runs a cafe", "feeling": "busy",
                  "at": "2023-02-13 08:00"}),
    ReflectionState(42),
    ReactionState({"Maria Lopez": NINE}, {"Klaus Mueller": TEN}, TEN),
    ConversationState({"Maria Lopez": ["The party is at 5 pm."]}),
]


def through_json(data: dict) -> dict:
    return json.loads(json.dumps(data))


def test_the_table_covers_every_part():
    assert {type(p) for p in PARTS} == set(PART_TYPES)


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.name)
def test_a_part_survives_save_and_load_and_tolerates_older_keys(part):
    stored = through_json(part.to_dict())
    assert type(part).from_dict(stored) == part
    assert type(part).from_dict({**stored, **OLDER}) == part
    assert type(part).from_dict({}) == type(part)(), "an older mind without the part's keys"


def test_a_whole_mind_and_a_body_survive_save_and_load():
    mind = MindState(*PARTS)  # type: ignore[arg-type]
    assert MindState.from_dict(through_json({**mind.to_dict(), **OLDER})) == mind
    body = Body("Hobbs Cafe", None, "walking", "🚶", None, None, "Johnson Park", "park",
                "2023-02-13 10:20", None, "a traveller")
    assert Body.from_dict(through_json({**body.to_dict(), **OLDER})) == body


def test_only_marked_parts_are_written_again():
    mind = MindState(*PARTS)  # type: ignore[arg-type]
    first = mind.take_changes()
    assert set(first) == {p.name for p in PARTS}, "parts made afresh were never saved"
    assert mind.take_changes() == {}
    mind.reflection.importance_since_reflection += 1
    mind.reflection.mark()
    assert set(mind.take_changes()) == {"reflection"}


async def test_a_town_its_memories_and_its_people_survive_save_and_load(world, tmp_path):
    engine = await open_engine(world, tmp_path / "town.db")
    service = TownService(engine)
    for _ in range(8):
        await service.tick()
    await service.join(Person("test:alex", "Alex"), "Alex", "a traveller", "Hobbs Cafe")
    minds = {n: m.state for n, m in engine.minds.items()}
    memories = {n: [(m.id, m.kind, m.text, m.created, m.last_accessed, m.importance,
                     m.evidence) for m in mind.stream.memories]
                for n, mind in engine.minds.items()}
    vectors = {n: np.stack([mind.stream.vector(m.id) for m in mind.stream.memories])
               for n, mind in engine.minds.items()}
    bodies, objects, town = dict(engine.bodies), dict(engine.objects), await engine.store.town()
    await engine.store.close()

    resumed = await open_engine(world, tmp_path / "town.db")
    assert {n: m.state for n, m in resumed.minds.items()} == minds
    assert {n: [(m.id, m.kind, m.text, m.created, m.last_accessed, m.importance, m.evidence)
                for m in mind.stream.memories] for n, mind in resumed.minds.items()} == memories
    for name, mind in resumed.minds.items():
        stored = np.stack([mind.stream.vector(m.id) for m in mind.stream.memories])
        assert np.allclose(stored, vectors[name])
    assert resumed.bodies == bodies and resumed.objects == objects
    assert resumed.town == town and resumed.clock.tick == town.tick == 8
    assert "test:alex" in resumed.people
    await resumed.store.close()


async def test_a_town_saved_by_the_previous_version_opens_and_goes_on(world, tmp_path):
    """tests/fixtures/town_v2.db was saved by townbot at schema 2 (main at a9a4109): 25
    residents to 10:10 on day one, with a visitor who spoke, a whisper, a seed, an object
    changed and a resident taken over."""
    db = tmp_path / "town.db"
    shutil.copy(FIXTURE, db)
    engine = await open_engine(world, db)
    assert await engine.store.schema_version() >= 3
    assert engine.clock.tick == 19 and len(engine.minds) == 25
    klaus = engine.minds["Klaus Mueller"].state
    assert klaus.planning.day == date(2023, 2, 13) and klaus.planning.blocks
    assert klaus.reflection.importance_since_reflection == 37
    assert klaus.reacting.last_considered == {"Ayesha Khan": NINE}
    assert {row.name for row in engine.people.values()} == {"Alex Visitor", "Tom Moreno"}
    before = {n: len(m.stream) for n, m in engine.minds.items()}
    stored_before = await engine.store.agents(engine.town.id)
    service = TownService(engine)
    for _ in range(6):
        await service.tick()
    await service.say(Person("test:alex", "Alex"), "Isabella, what a lovely morning!")
    assert engine.clock.tick == 25
    assert all(len(m.stream) >= before[n] for n, m in engine.minds.items())
    await engine.store.close()

    resumed = await open_engine(world, db)
    assert resumed.clock.tick == 25
    stored = await resumed.store.agents(resumed.town.id)
    assert set(stored) == set(stored_before)
    assert "Alex Visitor" in {row.name for row in resumed.people.values()}
    await resumed.store.close()
