"""Interviews as the paper runs them (issue 11, items 5 and 6), pinned with a scripted model:
each ablation removes every memory of its kinds, from retrieval and from the summary; the answer
sees the summary and today's plan; a person the agent has no memory of gets "I don't know them"
without a model call."""

from __future__ import annotations

from datetime import datetime

import pytest
from scripted import ScriptedModel

from townbot.mind.answering import (
    Ablation,
    answer_as,
    claimed_meetings,
    interview_as,
    plan_lines,
    self_knowledge,
    unmet_claims,
)
from townbot.mind.memory import MemoryStream
from townbot.mind.plans import PlanBlock

NOON = datetime(2023, 2, 14, 12, 0)
KIND_TEXTS = {
    "observation": "Sam Moore saw the tomatoes ripening in the community garden",
    "conversation": "Sam Moore talked with Jane Moreno about the garden fence",
    "thought": "Sam Moore plans to run for mayor and to tell his neighbours",
    "reflection": "Sam Moore cares deeply about the people of Smallville",
    "plan": "Sam Moore's plan for Tuesday February 14: water the garden; campaign at the cafe",
}
CONDITIONS = {
    "full": (Ablation(), set(KIND_TEXTS)),
    "no reflections": (Ablation(reflections=False), set(KIND_TEXTS) - {"reflection"}),
    "no reflections or plans": (Ablation(reflections=False, plans=False),
                                {"observation", "conversation", "thought"}),
    "no memories": (Ablation(observations=False, reflections=False, plans=False), set()),
}


async def stream_of_every_kind(model) -> MemoryStream:
    stream = MemoryStream(256)
    texts = list(KIND_TEXTS.items())
    vectors = await model.embed([t for _, t in texts])
    for (kind, text), vector in zip(texts, vectors, strict=True):
        stream.add(kind, text, datetime(2023, 2, 13, 8, 0), 5, vector)
    stream.take_changes()
    return stream


def summary_from_context(request):
    seen = " ".join(request.context.core + request.context.occupation
                    + request.context.feeling)
    return {"core": "steady", "occupation": "gardener", "feeling": seen[:290] or "nothing"}


@pytest.mark.parametrize("condition", CONDITIONS)
async def test_each_ablation_removes_its_kinds_from_retrieval_and_summary(world, condition):
    access, allowed = CONDITIONS[condition]
    model = ScriptedModel({"summary": summary_from_context,
                           "answer": lambda r: {"text": "Let me think."}})
    stream = await stream_of_every_kind(model)
    sam = world.personas["Sam Moore"]
    full_summary = "Name: Sam Moore (age 65). FULL SUMMARY FROM EVERY MEMORY"
    plan = ("7:00 am to 10:00 am: water the garden",)
    await answer_as(model, sam, full_summary, stream, "What have you been up to?", NOON,
                    access=access, plan=plan, count=20)
    request = model.asked("answer")[0]
    used_kinds = {m.kind for m in stream.memories if m.text in request.context.memories}
    assert used_kinds == allowed
    for kind, text in KIND_TEXTS.items():
        assert (text in request.prompt) == (kind in allowed), (kind, condition)
    if access.full:
        assert full_summary in request.prompt and not model.asked("summary")
    else:
        assert full_summary not in request.prompt
    if condition == "no memories":
        assert not model.asked("summary"), "only the persona's own description is left"
        assert sam.background.split(".")[0] in request.prompt
    elif not access.full:
        summarised = {m.kind for m in stream.memories
                      if m.text[:40] in " ".join(model.asked("summary")[0].prompt.splitlines())}
        assert summarised <= allowed
    assert ("water the garden" in request.prompt) == access.plans


async def test_ablated_summary_leaves_access_times_alone(world):
    model = ScriptedModel({"summary": summary_from_context})
    stream = await stream_of_every_kind(model)
    before = [m.last_accessed for m in stream.memories]
    await self_knowledge(model, world.personas["Sam Moore"], stream, NOON,
                         Ablation(reflections=False), summary="full")
    assert [m.last_accessed for m in stream.memories] == before
    assert stream.take_changes() == ([], [])


async def test_the_answer_sees_the_summary_and_todays_plan(world):
    model = ScriptedModel({"answer": lambda r: {"text": "At six I'll be at the cafe."}})
    stream = await stream_of_every_kind(model)
    blocks = [PlanBlock(datetime(2023, 2, 14, 17), datetime(2023, 2, 14, 19),
                        "host the Valentine's Day party", "Hobbs Cafe", "cafe")]
    await answer_as(model, world.personas["Sam Moore"], "Name: Sam Moore. A retired officer.",
                    stream, "What will you be doing at 6pm today?", NOON, plan=plan_lines(blocks))
    prompt = model.asked("answer")[0].prompt
    assert "A retired officer." in prompt
    assert "5:00 pm to 7:00 pm: host the Valentine's Day party (Hobbs Cafe)" in prompt
    assert "Tuesday February 14, 12:00 pm" in prompt


@pytest.mark.parametrize("question", ["Who is Tamara Taylor?", "Do you know of Kane Martinez?",
                                      "What would you get Tamara for her birthday?"])
async def test_a_person_without_any_memory_gets_i_dont_know_them_and_no_call(world, question):
    model = ScriptedModel({"answer": lambda r: {"text": "Tamara is my best friend!"}})
    stream = await stream_of_every_kind(model)
    people = list(world.personas)
    knowledge = await self_knowledge(model, world.personas["Sam Moore"], stream, NOON, Ablation(),
                                     summary="Name: Sam Moore.")
    answered = await interview_as(model, world.personas["Sam Moore"], knowledge, stream,
                                  question, NOON, people=people)
    assert "I don't know them" in answered.text
    assert answered.memory_ids == () and not model.asked("answer")


async def test_a_person_known_only_through_a_hidden_kind_is_unknown_under_that_ablation(world):
    model = ScriptedModel({"answer": lambda r: {"text": "Jane is a neighbour of mine."}})
    stream = await stream_of_every_kind(model)
    sam, people = world.personas["Sam Moore"], list(world.personas)
    known = await answer_as(model, sam, "Name: Sam Moore.", stream, "Who is Jane Moreno?", NOON,
                            people=people)
    hidden = await answer_as(model, sam, "Name: Sam Moore.", stream, "Who is Jane Moreno?", NOON,
                             people=people, access=Ablation(observations=False))
    assert known == "Jane is a neighbour of mine." and len(model.asked("answer")) == 1
    assert "I don't know them" in hidden


PEOPLE = ["Tom Moreno", "John Lin", "Sam Moore", "Jane Moreno"]


@pytest.mark.parametrize(("answer", "claimed"), [
    ("This morning I had a long conversation with Tom Moreno about the election.", ["Tom Moreno"]),
    ("Yes, I know Sam well - we talked at the cafe yesterday.", ["Sam Moore"]),
    ("I talked with Ana Ruiz at the market.", ["Ana Ruiz"]),
    ("I met Tom.", ["Tom Moreno"]),
    ("I have never met Tom Moreno.", []),
    ("I'd like to talk to Sam about the garden.", []),
    ("Tom Moreno is my neighbour; I know him well.", []),
    ('Sam told everyone "I talked with Tom Moreno yesterday".', []),
])
def test_claimed_meetings_are_the_speakers_own_past_claims(answer, claimed):
    assert claimed_meetings(answer, PEOPLE, "John Lin") == claimed


async def test_a_claim_is_backed_by_a_memory_of_meeting_not_by_a_mention(world):
    model = ScriptedModel()
    stream = await stream_of_every_kind(model)  # Sam talked with Jane about the fence
    kinds = Ablation().kinds()
    assert unmet_claims("I chatted with Jane Moreno yesterday.", PEOPLE, "Sam Moore", stream,
                        kinds) == []
    vector = (await model.embed(["Sam Moore knows Tom Moreno from the pub"]))[0]
    stream.add("observation", "Sam Moore knows Tom Moreno from the pub", NOON, 3, vector)
    assert unmet_claims("I spoke with Tom Moreno this morning.", PEOPLE, "Sam Moore", stream,
                        kinds) == ["Tom Moreno"]
    assert unmet_claims("I chatted with Jane Moreno.", PEOPLE, "Sam Moore", stream,
                        Ablation(observations=False).kinds()) == ["Jane Moreno"]


async def test_the_offline_model_is_also_given_what_it_knows_of_whom_it_is_asked_about(world):
    """Beside the retrieved memories (all a language model sees), the answer's context holds
    the memories naming the person asked about, the news the agent was told and its home, each
    only of the kinds the ablation allows: the offline model reads nothing else."""
    model = ScriptedModel({"answer": lambda r: {"text": "A book on justice, I think."},
                           "summary": summary_from_context})
    klaus = world.personas["Klaus Mueller"]
    stream = MemoryStream(256)
    texts = [("observation", "Ayesha Khan is writing a chapter of her thesis"),
             ("conversation", "Sam Moore intends to run for mayor. (heard from Ayesha Khan)"),
             ("conversation", f"Klaus Mueller talked with Maria Lopez at {klaus.home_sector}: "
                              "kitchen. Maria: Hi Klaus!"),
             ("observation", "Klaus Mueller lives next door to Wolfgang Schulz in the dorm.")]
    vectors = await model.embed([t for _, t in texts])
    for (kind, text), vector in zip(texts, vectors, strict=True):
        stream.add(kind, text, datetime(2023, 2, 14, 9, 0), 5, vector)
    question = "If you were getting Ayesha Khan a birthday present, what would it be?"
    people = ["Ayesha Khan", "Maria Lopez", "Klaus Mueller"]
    await answer_as(model, klaus, "Klaus", stream, question, NOON, people=people)
    context = model.asked("answer")[0].context
    assert context.about_people == {"Ayesha Khan": [texts[1][1], texts[0][1]]}
    assert texts[1][1] in context.known
    assert context.home == klaus.home_sector and context.met_at_home == ("Maria Lopez",)
    assert context.living == (texts[3][1],)
    await answer_as(model, klaus, "Klaus", stream, question, NOON, people=people,
                    access=Ablation(observations=False), guarded=False)  # asked all the same
    ablated = model.asked("answer")[1].context
    assert ablated.about_people == {"Ayesha Khan": []} and ablated.known == ()
    assert ablated.met_at_home == () and ablated.living == ()
