"""The engine's short cuts give what the long way gives: a part's kept encoding is the JSON of
its dict, also after what it holds changes; retrieval hands back plain numbers."""

from __future__ import annotations

import json
import random
from datetime import date, datetime, timedelta

import pytest

from townbot.mind.attention import sort_sightings
from townbot.mind.plans import PlanBlock, PlanStep
from townbot.mind.reacting import Sighting
from townbot.mind.state import (
    AttentionState,
    MemoryQueue,
    Pending,
    PlanState,
    ReactionState,
    ReflectionState,
)
from townbot.town.body import FIELDS, Body

NINE = datetime(2023, 2, 13, 9, 0)


def as_json(part) -> str:
    return json.dumps(part.to_dict())


def test_a_plan_encodes_as_the_json_of_its_dict_after_every_kind_of_change():
    step = PlanStep(NINE, NINE + timedelta(minutes=20), 'making "café" ☕', "counter", "in use",
                    "☕")
    block = PlanBlock(NINE, NINE + timedelta(hours=1), "opening the cafe", "Hobbs Cafe", "cafe",
                      [step])
    plan = PlanState(date(2023, 2, 13), ["open at 8 am"], [block, PlanBlock(
        NINE + timedelta(hours=1), NINE + timedelta(hours=2), "a walk \\ outside")],
        ['news: "party"'], NINE)
    assert plan.encode() == as_json(plan)
    step.end = NINE + timedelta(minutes=30)  # steps and blocks change in place
    assert plan.encode() == as_json(plan)
    block.sector = block.arena = None
    block.resumed = True
    assert plan.encode() == as_json(plan)
    block.steps = []
    plan.day, plan.last_revision = None, None
    assert plan.encode() == as_json(plan)


def test_steps_and_blocks_written_out_by_hand_are_what_json_dumps_writes():
    odd = ["", "tab\there", "line\nbreak", "\x1f unit", "lone \ud800", "ünïcödé 🎉", '"quoted"',
           "back\\slash", "</script>"]
    for text in odd:
        step = PlanStep(NINE, NINE + timedelta(minutes=5), text, text, text, text)
        block = PlanBlock(NINE, NINE + timedelta(hours=1), text, text, None, [step])
        assert step.json() == json.dumps(step.to_dict()), text
        assert block.json() == json.dumps(block.to_dict()), text


def test_parts_and_sight_logs_written_out_by_hand_are_what_json_dumps_writes():
    odd = ["", "tab\there", "line\nbreak", "lone \ud800", "ünïcödé 🎉", '"quoted"', "back\\slash"]
    queue = MemoryQueue([Pending("observation", text, (1, 22) if n % 2 else (), NINE)
                         for n, text in enumerate(odd)], [3, 4], NINE)
    reacting = ReactionState({text: NINE for text in odd}, {odd[1]: NINE}, None)
    for part in (queue, reacting, MemoryQueue(), ReactionState(), ReflectionState(17)):
        assert part.encode() == as_json(part)
    attention = AttentionState({}, None)
    assert attention.take_log() is None  # stored whole first: its log starts
    for n, text in enumerate(odd):
        attention.sights[text] = NINE + timedelta(minutes=n % 2)
    del attention.sights[odd[0]]
    attention.last_step = odd[3]
    rows = attention.take_log()
    assert [row.change for row in rows] == [json.dumps(change) for change in (
        ["2023-02-13 09:01", odd[1::2], [odd[0]], odd[3]], ["2023-02-13 09:00", odd[2::2], [], None])]
    del attention.sights[odd[1]]
    assert [row.change for row in attention.take_log()] == [json.dumps(["", [], [odd[1]], None])]


def test_a_queue_kept_encoded_follows_its_unscored_ids_however_they_change():
    rng = random.Random(5)
    queue = MemoryQueue()
    for change in range(600):
        choice = rng.random()
        if choice < 0.6:  # a memory stored, its score to come
            queue.unscored.append(rng.randrange(10**6))
        elif choice < 0.7:  # a batch scored
            queue.unscored = []
        elif choice < 0.8 and queue.unscored:  # changed in place
            queue.unscored[rng.randrange(len(queue.unscored))] = rng.randrange(10)
        elif choice < 0.9 and queue.unscored:
            queue.unscored.pop(0)
        else:
            queue.unscored = [*queue.unscored, 7, 8]
        assert queue.encode() == as_json(queue), change
    queue.unscored.append(True)  # not a whole number: as json.dumps writes it
    assert queue.encode() == as_json(queue)


def test_a_body_written_out_by_hand_is_what_json_dumps_writes():
    body = Body("Cafe", "bar", action='making "café" ☕', object_state="lone \ud800")
    assert body.take_change() == json.dumps(body.to_dict())
    assert body.take_change() is None  # unchanged since
    body.visitor, body.sector = "tab\there", None
    assert body.take_change() == json.dumps(body.to_dict())


def test_a_body_changed_a_few_fields_at_a_time_is_written_as_json_dumps_writes_it():
    rng = random.Random(5)
    values = [None, "Cafe", "bar", "sleeping", "😴", 'a "quoted" café', "", "walking to Cafe"]
    body = Body.from_dict(Body("Park", "bench", "sitting").to_dict())
    stored = body.to_dict()
    for _ in range(500):
        for name in rng.sample(FIELDS, rng.randint(0, 3)):
            setattr(body, name, rng.choice(values))
        written = body.take_change()
        if body.to_dict() == stored:
            assert written is None
        else:  # only the fields that changed were encoded again
            assert written == json.dumps(body.to_dict())
            stored = body.to_dict()


def test_a_block_kept_encoded_follows_its_steps_as_they_change():
    step = PlanStep(NINE, NINE + timedelta(minutes=20), "pouring", "", "", "☕")
    first = PlanBlock(NINE, NINE + timedelta(hours=1), "work", "Cafe", "bar", [step])
    second = PlanBlock(NINE, NINE + timedelta(hours=1), "work", "Cafe", "bar", [step])
    for block in (first, second):
        assert block.json() == json.dumps(block.to_dict())
    step.action = "wiping"  # a step kept by two blocks changes: both encode it anew
    for block in (first, second):
        assert block.json() == json.dumps(block.to_dict()) and "wiping" in block.json()
    first.steps.append(PlanStep(NINE, NINE, "closing", "", "", ""))  # the list grows in place
    assert first.json() == json.dumps(first.to_dict())
    first.steps[0].end = NINE + timedelta(minutes=45)
    first.resumed = True
    assert first.json() == json.dumps(first.to_dict())
    assert second.json() == json.dumps(second.to_dict())


def test_an_attention_part_encodes_as_the_json_of_its_dict_as_sights_come_and_go():
    part = AttentionState({"Maria is singing \"hi\"": NINE, "Ünal is reading": NINE}, None)
    assert part.encode() == as_json(part)
    gap = timedelta(hours=6)
    for hour, seen in ((1, ["Ünal is reading", "the stove is on"]), (2, ["Maria is singing \"hi\""]),
                       (7, ["the stove is on"]), (14, []), (15, ["Ünal is reading"])):
        sightings = [Sighting(text, "agent", text, "here") for text in seen]
        sort_sightings(part.sights, sightings, NINE + timedelta(hours=hour), gap)
        part.last_step = f"step {hour}"
        assert part.encode() == as_json(part), hour
    assert list(part.sights) == ["Ünal is reading"]
    part.sights.pop("Ünal is reading")
    assert part.encode() == as_json(part) and part == AttentionState({}, "step 15")
    with pytest.raises(TypeError):
        part.sights.update({"anything": NINE})


async def test_every_part_of_a_running_town_encodes_as_the_json_of_its_dict(engine):
    for _ in range(12):  # 7:00 to 9:00: plans made, decomposed, sights seen
        await engine.tick()
    for mind in engine.minds.values():
        for part in mind.state.parts():
            assert part.encode() == as_json(part), (mind.name, part.name)

