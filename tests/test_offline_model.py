"""The deterministic offline model, asked exactly as the mind asks it: Ask + the real schemas."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from townbot.llm.offline import OfflineModel, social
from townbot.llm.port import Ask
from townbot.llm.purposes import (
    DayPlan,
    Decomposition,
    HourlySchedule,
    ImportanceScores,
    PlaceAndArea,
    PlaceChoice,
)
from townbot.llm.purposes.choose_place import PlaceQuestion
from townbot.llm.purposes.common import Question, Recalled
from townbot.llm.purposes.day_plan import DayPlanQuestion
from townbot.llm.purposes.decompose import DecomposeQuestion
from townbot.llm.purposes.hourly_schedule import ScheduleQuestion
from townbot.llm.purposes.importance import ImportanceQuestion
from townbot.llm.purposes.insights import insights_on
from townbot.llm.purposes.takeaways import TakeawaysQuestion
from townbot.llm.purposes.utterance import UtteranceQuestion
from townbot.wording import progressive
from townbot.world.clock import parse_clock
from townbot.world.errors import DataError
from townbot.world.loading import load_world
from townbot.world.model import Persona, RoutineStep, World

ROOT = Path(__file__).resolve().parents[1]
WORLD_YAML = ROOT / "world.yaml"
PERSONAS = ROOT / "personas"
MONDAY = datetime(2023, 2, 13, 8, 0)

SCHEMAS = {"importance": ImportanceScores, "day_plan": DayPlan,
           "hourly_schedule": HourlySchedule, "choose_place": PlaceAndArea,
           "decompose": Decomposition}


def _no_default():
    raise AssertionError("the offline model fell back to the default answer")


@cache
def town() -> World:
    return load_world(WORLD_YAML, PERSONAS)


def question_of(purpose: str, context: dict[str, Any]) -> Question:
    """The purpose's typed question, from the parts each test varies."""
    if purpose == "importance":
        return ImportanceQuestion("Klaus Mueller", "a student", tuple(context["texts"]))
    if purpose == "day_plan":
        return DayPlanQuestion(context["persona"], "", MONDAY, "", ())
    if purpose == "hourly_schedule":
        return ScheduleQuestion(context["persona"], MONDAY, (), (), {})
    if purpose == "choose_place":
        return PlaceQuestion(town().personas["Klaus Mueller"], context["activity"], MONDAY,
                             context["places"], tuple(context["current"] or ("", "")),
                             tuple(context["hint"] or ("", "")))
    persona = town().personas.get(context["agent"], town().personas["Isabella Rodriguez"])
    return DecomposeQuestion(persona, context["activity"], "somewhere: here",
                             datetime.fromisoformat(context["start"]), context["minutes"],
                             tuple(context["objects"]))


async def ask(model: OfflineModel, purpose: str, **context: Any):
    answer = await model.ask(replace(question_of(purpose, context).ask(), default=_no_default))
    assert isinstance(answer, SCHEMAS[purpose])
    return answer


@pytest.fixture(scope="module")
def world() -> World:
    return load_world(WORLD_YAML, PERSONAS)


@pytest.fixture()
def model() -> OfflineModel:
    return OfflineModel(seed=0)


def load_with_routine(tmp_path: Path, steps: list[tuple[str, str]]) -> Persona:
    """Giorgio Rossi (wakes 07:00, sleeps 23:00) with another routine, loaded like any town."""
    personas = tmp_path / "personas"
    shutil.copytree(PERSONAS, personas)
    path = personas / "giorgio_rossi.yaml"
    head, _, rest = path.read_text(encoding="utf-8").partition("routine:\n")
    _, _, tail = rest.partition("memories:\n")
    routine = "".join(f'  - at: "{at}"\n    do: {do}\n'
                      f'    where: "Giorgio Rossi\'s apartment: main room"\n' for at, do in steps)
    path.write_text(f"{head}routine:\n{routine}memories:\n{tail}", encoding="utf-8")
    return load_world(WORLD_YAML, personas).personas["Giorgio Rossi"]


ITEM_TIME = re.compile(r" at (\d{1,2}):(\d{2}) (am|pm)$")


def item_minute(item: str) -> int:
    match = ITEM_TIME.search(item)
    assert match, f"plan item without a time: {item!r}"
    hours, minutes, half = int(match[1]), int(match[2]), match[3]
    return (hours % 12 + (12 if half == "pm" else 0)) * 60 + minutes


# ---------------------------------------------------------------- determinism


async def test_same_seed_same_request_same_answer(world: World) -> None:
    persona = world.personas["Isabella Rodriguez"]
    objects = list(world.arena("Hobbs Cafe", "cafe").objects)
    requests = [
        ("importance", {"texts": ["Isabella is serving coffee", "the stove is on fire"]}),
        ("day_plan", {"persona": persona}),
        ("hourly_schedule", {"persona": persona}),
        ("choose_place", {"activity": "buy groceries", "places": places_of(world),
                          "hint": None, "current": None}),
        ("decompose", {"activity": "serve coffee and chat with the morning regulars",
                       "minutes": 60, "objects": objects, "agent": persona.name,
                       "start": "2023-02-13T08:00:00"}),
    ]
    for purpose, context in requests:
        first = await ask(OfflineModel(seed=42), purpose, **context)
        second = await ask(OfflineModel(seed=42), purpose, **context)
        assert first.model_dump() == second.model_dump(), purpose


async def test_the_seed_varies_the_wording(world: World) -> None:
    objects = list(world.arena("Hobbs Cafe", "cafe").objects)
    answers = {seed: [] for seed in (0, 1)}
    for seed in answers:
        for activity in ("serve coffee", "write a chapter", "paint", "study", "cook dinner"):
            answer = await ask(OfflineModel(seed=seed), "decompose", activity=activity,
                               minutes=60, objects=objects, agent="A", start="2023-02-13T08:00:00")
            answers[seed].append(answer.model_dump())
    assert answers[0] != answers[1]


async def test_unknown_purpose_gets_the_safe_default(model: OfflineModel) -> None:
    default = PlaceChoice(choice="home")
    answer = await model.ask(Ask(purpose="no_such_purpose", prompt="?", schema=PlaceChoice,
                                 default=lambda: default))
    assert answer is default


# ---------------------------------------------------------------- importance


async def test_importance_ranks_a_fire_above_brushing_teeth(model: OfflineModel) -> None:
    texts = ["Isabella Rodriguez is brushing her teeth",
             "the stove in the kitchen is burning and there is a fire",
             "Klaus Mueller is reading a book"]
    answer = await ask(model, "importance", texts=texts)
    assert len(answer.scores) == len(texts)
    brushing, fire, reading = answer.scores
    assert fire > brushing
    assert fire > reading
    assert all(1 <= score <= 10 for score in answer.scores)


async def test_importance_ranks_the_party_above_routine(model: OfflineModel) -> None:
    answer = await ask(model, "importance", texts=[
        "Isabella Rodriguez is planning a Valentine's Day party at Hobbs Cafe",
        "Sam Moore is running for mayor",
        "the bed is made",
        "Isabella Rodriguez is eating breakfast"])
    party, mayor, bed, breakfast = answer.scores
    assert party > breakfast > bed
    assert mayor > breakfast


async def test_importance_of_no_texts_is_no_scores(model: OfflineModel) -> None:
    assert (await ask(model, "importance", texts=[])).scores == []


async def test_importance_of_a_shower_is_mundane(model: OfflineModel) -> None:
    shower, teeth, talk = (await ask(model, "importance", texts=[
        "Klaus Mueller is taking a shower",
        "Klaus Mueller is brushing his teeth",
        "Klaus Mueller had a conversation with Maria Lopez about her thesis"])).scores
    assert shower < talk
    assert shower == teeth


# ---------------------------------------------------------------- day plan and schedule


async def test_day_plan_from_a_twelve_step_routine(world: World, model: OfflineModel) -> None:
    persona = world.personas["Isabella Rodriguez"]
    assert len(persona.routine) == 12
    items = (await ask(model, "day_plan", persona=persona)).items
    assert 3 <= len(items) <= 8
    minutes = [item_minute(item) for item in items]
    assert minutes == sorted(minutes) and len(set(minutes)) == len(minutes)
    assert minutes[0] == persona.wakes
    routine_minutes = {step.minute for step in persona.routine}
    assert set(minutes) <= routine_minutes
    plan_text = " ".join(items)
    for step in persona.routine:
        assert step.activity in plan_text, f"the plan lost {step.activity!r}"


async def test_every_resident_gets_a_day_plan_in_time_order(world: World,
                                                            model: OfflineModel) -> None:
    for persona in world.personas.values():
        items = (await ask(model, "day_plan", persona=persona)).items
        minutes = [item_minute(item) for item in items]
        assert 3 <= len(items) <= 8, persona.name
        assert minutes == sorted(minutes), persona.name


async def test_day_plan_for_a_valid_two_step_routine(tmp_path: Path,
                                                     model: OfflineModel) -> None:
    persona = load_with_routine(tmp_path, [("07:00", "wake up and think about prime numbers"),
                                           ("23:00", "go to bed")])
    assert len(persona.routine) == 2  # the loader accepts this persona
    items = (await ask(model, "day_plan", persona=persona)).items
    assert 3 <= len(items) <= 8


async def test_hourly_schedule_covers_the_waking_day(world: World, model: OfflineModel) -> None:
    for persona in world.personas.values():
        blocks = (await ask(model, "hourly_schedule", persona=persona)).blocks
        starts = [parse_clock(block.start) for block in blocks]
        assert starts == sorted(starts) and len(set(starts)) == len(starts), persona.name
        first, last = persona.routine[0].minute, persona.routine[-1].minute
        assert starts[0] == first, persona.name
        assert sum(block.minutes for block in blocks) == last - first, persona.name
        for block, next_start in zip(blocks, starts[1:] + [last], strict=True):
            assert parse_clock(block.start) + block.minutes == next_start, persona.name


async def test_hourly_schedule_splits_long_steps_into_blocks_of_about_two_hours(
        world: World, model: OfflineModel) -> None:
    persona = world.personas["Isabella Rodriguez"]
    blocks = (await ask(model, "hourly_schedule", persona=persona)).blocks
    morning = [b for b in blocks if "serve coffee and chat with the morning regulars"
               in b.activity]
    assert [b.start for b in morning] == ["08:00", "10:00"]
    assert all(b.minutes == 120 for b in morning)
    assert all(b.minutes <= 150 for b in blocks)


async def test_hourly_schedule_with_steps_three_minutes_apart(tmp_path: Path,
                                                             model: OfflineModel) -> None:
    steps = [("07:00", "wake up"), ("07:03", "get dressed"), ("12:00", "eat lunch"),
             ("23:00", "go to bed")]
    with pytest.raises(DataError, match="less than 5 minutes"):
        load_with_routine(tmp_path, steps)
    routine = tuple(RoutineStep(parse_clock(at), do, "Hobbs Cafe", "cafe") for at, do in steps)
    persona = replace(town().personas["Giorgio Rossi"], routine=routine)
    blocks = (await ask(model, "hourly_schedule", persona=persona)).blocks
    assert sum(block.minutes for block in blocks) == 16 * 60


# ---------------------------------------------------------------- choosing places


def places_of(world: World, sectors: list[str] | None = None) -> dict[str, list[str]]:
    return {s: list(world.sectors[s].arenas) for s in sectors or world.sectors}


async def test_choose_place_takes_the_routine_hint_when_offered(world: World,
                                                                model: OfflineModel) -> None:
    for hint in (("Hobbs Cafe", "cafe"), ("Johnson Park", "park"),
                 ("Oak Hill College", "library")):
        answer = await ask(model, "choose_place", activity="buy groceries and medicine",
                           places=places_of(world), hint=list(hint),
                           current=["Lin family's house", "kitchen"])
        assert (answer.place, answer.area) == hint


async def test_choose_place_never_answers_outside_the_places(world: World,
                                                             model: OfflineModel) -> None:
    places = places_of(world, ["Hobbs Cafe", "Johnson Park", "The Willows Market and Pharmacy"])
    activities = ["buy groceries", "go to bed", "paint in the park", "have coffee",
                  "study at the library of Oak Hill College", ""]
    for activity in activities:
        for hint, current in [(None, None), (["Oak Hill College", "library"],
                                             ["Moore family's house", "kitchen"]),
                              (["Nowhere", "nothing"], ["Nowhere else", "void"])]:
            answer = await ask(model, "choose_place", activity=activity, places=places,
                               hint=hint, current=current)
            assert answer.area in places[answer.place], (activity, hint, answer)


async def test_choose_place_follows_the_activity_words(world: World,
                                                       model: OfflineModel) -> None:
    places = places_of(world, ["Hobbs Cafe", "Johnson Park", "Oak Hill College"])
    answer = await ask(model, "choose_place", activity="walk around the park", places=places,
                       hint=None, current=None)
    assert answer.place == "Johnson Park"


async def test_choose_place_prefers_the_area_the_resident_is_in(model: OfflineModel) -> None:
    places = {"Hobbs Cafe": ["cafe", "kitchen", "bathroom"], "Johnson Park": ["park"]}
    answer = await ask(model, "choose_place", activity="serve coffee", places=places,
                       hint=["Hobbs Cafe", "storeroom"], current=["Hobbs Cafe", "kitchen"])
    assert (answer.place, answer.area) == ("Hobbs Cafe", "kitchen")


# ---------------------------------------------------------------- decomposition


@pytest.mark.parametrize(("sector", "arena", "activity"), [
    ("Hobbs Cafe", "cafe", "open the doors, serve coffee and chat with the morning regulars"),
    ("Hobbs Cafe", "kitchen", "eat a fast lunch in the back"),
    ("Isabella Rodriguez's apartment", "bathroom", "wake up, shower and get dressed"),
    ("Oak Hill College", "library", "continue to research sources for her thesis"),
    ("Johnson Park", "park", "take a walk in the park"),
])
@pytest.mark.parametrize("minutes", [5, 7, 13, 30, 45, 60, 75, 90])
async def test_decompose_fills_the_block_with_offered_objects(
        world: World, model: OfflineModel, sector: str, arena: str, activity: str,
        minutes: int) -> None:
    objects = list(world.arena(sector, arena).objects)
    steps = (await ask(model, "decompose", activity=activity, minutes=minutes, objects=objects,
                       agent="Isabella Rodriguez", start="2023-02-13T08:00:00")).steps
    assert steps
    assert all(step.object in objects for step in steps)
    assert all(step.minutes in (5, 10, 15) for step in steps)
    assert sum(step.minutes for step in steps) == max(5, round(minutes / 5) * 5)
    assert all(step.action.strip() and step.object_state.strip() for step in steps)


async def test_decompose_picks_fitting_objects(world: World, model: OfflineModel) -> None:
    bathroom = list(world.arena("Isabella Rodriguez's apartment", "bathroom").objects)
    steps = (await ask(model, "decompose", activity="wake up, shower and get dressed",
                       minutes=30, objects=bathroom, agent="Isabella Rodriguez",
                       start="2023-02-13T06:00:00")).steps
    used = {step.object for step in steps}
    assert "shower" in used
    kitchen = list(world.arena("Hobbs Cafe", "kitchen").objects)
    steps = (await ask(model, "decompose", activity="bake the morning pastries",
                       minutes=45, objects=kitchen, agent="Isabella Rodriguez",
                       start="2023-02-13T07:15:00")).steps
    assert all(step.object in kitchen for step in steps)


@pytest.mark.parametrize("activity", ["go to bed", "sleep", "going to sleep"])
async def test_sleeping_happens_in_bed(world: World, model: OfflineModel, activity: str) -> None:
    objects = list(world.arena("Isabella Rodriguez's apartment", "main room").objects)
    assert "bed" in objects
    steps = (await ask(model, "decompose", activity=activity, minutes=60, objects=objects,
                       agent="Isabella Rodriguez", start="2023-02-13T22:30:00")).steps
    assert steps[0].object == "bed"
    assert "sleep" in steps[0].action
    assert steps[0].emoji == "😴"


async def test_reading_before_sleep_is_not_sleeping(world: World, model: OfflineModel) -> None:
    persona = world.personas["Giorgio Rossi"]
    step = next(s for s in persona.routine if s.activity == "read a book before sleep")
    objects = list(world.arena(step.sector, step.arena).objects)
    steps = (await ask(model, "decompose", activity=step.activity, minutes=60, objects=objects,
                       agent=persona.name, start="2023-02-13T22:00:00")).steps
    assert not any("sleeping" in s.action for s in steps)
    assert sum(s.minutes for s in steps) == 60


async def test_decompose_a_long_block(world: World, model: OfflineModel) -> None:
    objects = list(world.arena("Hobbs Cafe", "cafe").objects)
    steps = (await ask(model, "decompose", activity="serve coffee to customers", minutes=480,
                       objects=objects, agent="Isabella Rodriguez",
                       start="2023-02-13T08:00:00")).steps
    assert sum(s.minutes for s in steps) == 480


# ---------------------------------------------------------------- embeddings


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


async def test_embeddings_are_unit_length_and_deterministic(model: OfflineModel) -> None:
    texts = ["Isabella Rodriguez is planning a Valentine's Day party",
             "Klaus Mueller is reading about urban gentrification", "", "the"]
    vectors = await model.embed(texts)
    assert vectors.shape == (4, model.embedding_dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    again = await OfflineModel(seed=99).embed(texts)
    assert np.array_equal(vectors, again)
    assert (await model.embed([])).shape == (0, model.embedding_dim)


async def test_shared_words_mean_closer_embeddings(model: OfflineModel) -> None:
    party, party_again, sprint, taxes = await model.embed([
        "Isabella Rodriguez is planning a Valentine's Day party at Hobbs Cafe",
        "the Valentine's Day party at Hobbs Cafe is on February 14",
        "Wolfgang Schulz runs sprint drills on the college track",
        "Yuriko Yamamoto prepares tax returns for her clients"])
    related = cosine(party, party_again)
    assert related > 0.2
    assert related > cosine(party, sprint)
    assert related > cosine(party, taxes)
    assert cosine(sprint, taxes) < related


# ---------------------------------------------------------------- progressive wording


@pytest.mark.parametrize(("plan", "doing"), [
    ("wake up, wash and get dressed", "waking up, washing and getting dressed"),
    ("open the cafe, then serve coffee", "opening the cafe, then serving coffee"),
    ("sit down and read", "sitting down and reading"),
    ("have lunch and chat with Isabella", "having lunch and chatting with Isabella"),
    ("write a chapter of her thesis", "writing a chapter of her thesis"),
    ("plan the show", "planning the show"),
    ("go to bed", "going to bed"),
    ("tie up the boat", "tying up the boat"),
    ("pick up milk, fruit and baking supplies", "picking up milk, fruit and baking supplies"),
    ("close the cafe, wash up and prepare dough for tomorrow",
     "closing the cafe, washing up and preparing dough for tomorrow"),
])
def test_progressive(plan: str, doing: str) -> None:
    assert progressive(plan) == doing


def test_progressive_second_clause_of_shipped_routines() -> None:
    assert progressive("clean up frames and add effects") == \
        "cleaning up frames and adding effects"
    assert progressive("wake up, wash and shave") == "waking up, washing and shaving"


# --- the social patterns ----------------------------------------------------------------------

def test_first_person_stays_first_person_and_back() -> None:
    said = social.first_person("John Lin is curious about the election and wonders who will "
                               "run.", "John Lin")
    assert said == "I'm curious about the election and wonder who will run."
    assert social.third_person(said, "John Lin") == ("John Lin is curious about the election "
                                                     "and wonders who will run.")


def test_reflections_do_not_nest() -> None:
    texts = ["Klaus Mueller has been taking in: Klaus Mueller is sleeping",
             "Klaus Mueller is reading a book"]
    found = insights_on("Klaus Mueller", "What is on his mind?", texts,
                        ["reflection", "observation"])
    assert all(i.text.count("taking in") <= 1 for i in found)
    assert not any("taking in: Klaus Mueller has been" in i.text for i in found)


def test_nobody_is_told_their_own_news_and_each_listener_hears_it_once() -> None:
    party = Recalled("Isabella Rodriguez is hosting a party on February 14, from 5 pm to 7 pm "
                     "(heard from Klaus Mueller)", 8, "conversation")
    context = {"speaker": "Maria Lopez", "memories": [party], "already_said": [],
               "history": [("Maria Lopez", "Hi!"), ("Isabella Rodriguez", "Hello!")],
               "relationship": "Maria knows Isabella."}
    to_host = UtteranceQuestion(**context, partner="Isabella Rodriguez").offline(0)
    assert "party" not in to_host.text
    history = [("Maria Lopez", "Hi!"), ("Ayesha Khan", "Hello!")]
    asked = UtteranceQuestion(**{**context, "partner": "Ayesha Khan", "history": history}
                              ).offline(0)
    assert "Isabella's party" in asked.text and asked.text.endswith("?")  # going already?
    going = UtteranceQuestion(**{**context, "partner": "Ayesha Khan",
                                 "already_said": [asked.text],
                                 "history": [*history, ("Maria Lopez", asked.text),
                                             ("Ayesha Khan", "Yes! I'm going - see you there.")]}
                              ).offline(0)
    assert "hosting a party" not in going.text  # never invited to what they will attend
    history += [("Maria Lopez", asked.text), ("Ayesha Khan", "No, Maria - what's that about?")]
    to_friend = UtteranceQuestion(**{**context, "partner": "Ayesha Khan", "history": history,
                                     "already_said": [asked.text]}).offline(0)
    assert "hosting a party" in to_friend.text
    told = UtteranceQuestion(**{**context, "partner": "Ayesha Khan", "history": history,
                                "already_said": [asked.text, to_friend.text]}).offline(0)
    assert "hosting a party" not in told.text


def test_each_piece_of_news_in_a_line_is_remembered_on_its_own() -> None:
    line = ("Oh, I'm eating. Have you heard? Sam Moore intends to run for mayor. Have you heard? "
            "Isabella Rodriguez intends to host a Valentine's Day party on February 14, from 5 pm "
            "until 7 pm. Right, back to eating for me. Good talking, Tom!")
    facts = TakeawaysQuestion(("Tom Moreno",), (("Jane Moreno", line),)).offline(0).learned[0].facts
    assert facts == ["Sam Moore intends to run for mayor. (heard from Jane Moreno)",
                     "Isabella Rodriguez intends to host a Valentine's Day party on February 14, "
                     "from 5 pm until 7 pm. (heard from Jane Moreno)"]


async def test_a_rule_that_fails_costs_one_answer_counted_as_a_fallback_not_the_tick(caplog):
    """The offline rules misreading a question (here a remembered entry whose text is None)
    answer with the ask's default; through the real stack that is a counted fallback, and the
    error is logged for whoever looks into it."""
    from townbot.llm.purposes.utterance import default_line
    from townbot.llm.stack import build_model_stack

    model = OfflineModel(seed=0)
    stack = build_model_stack(model)
    question = UtteranceQuestion("Klaus Mueller", "Maria Lopez")
    misread = replace(question, memories=(Recalled(None, 5, "observation"),))
    request = replace(question.ask("Klaus Mueller"), context=misread)
    with caplog.at_level("WARNING", logger="townbot.llm.offline.model"):
        answer = await stack.ask(request)
    assert answer == default_line()
    assert stack.report().fallbacks == {"utterance": 1}
    assert "offline rules for utterance failed: TypeError(" in caplog.text
    assert await model.ask(request) == answer  # asked directly: the default too, no error
