"""Interviews know the moment (issue 33 item 2, issue 34 item 5), through TownService, the use
case play, Discord and the Python API share: the time, what the resident is doing and today's
plan, or that today is not planned yet. At 07:00 on the day after the party Klaus (who wakes at
8:30) still holds yesterday's plan; it must not reach the answer as today's. An answer claiming
a talk no memory backs is refused and repaired, then defaulted, and counted."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date, datetime
from pathlib import Path

import httpx2
import pytest
from fake_server import FakeOpenAIServer, prompt_of, purpose_of

from townbot.llm.local_embedding import MiniLMEmbedder
from townbot.llm.offline import OfflineModel
from townbot.llm.openai_client import OpenAIModel
from townbot.llm.recording import ReplayModel
from townbot.llm.settings import load_settings
from townbot.llm.stack import build_model_stack
from townbot.mind.plans import PlanBlock
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.town.service import Person, TownService
from townbot.world.model import World

KLAUS = "Klaus Mueller"
ASKER = Person("test:reporter", "A reporter")
PARTY = PlanBlock(datetime(2023, 2, 14, 17), datetime(2023, 2, 14, 19),
                  "attend the Valentine's Day party at Hobbs Cafe", "Hobbs Cafe", "cafe")
RECORDING = Path(__file__).parent / "real_replies" / "qwen-0.5b-hour.jsonl"
TODAYS_PARTY = re.compile(r"(tonight|today|this evening|at [56] ?pm)[^.]*party|party[^.]*"
                          r"(tonight|today|this evening)", re.IGNORECASE)


async def town_after_the_party(world: World, db: Path, model) -> TownService:  # noqa: ANN001
    """Wednesday 07:00, the morning after the party; Klaus asleep with Tuesday's plan."""
    await model.prepare()  # a server's embedding size is learned before the town is founded
    engine = await Engine.open(world, await Store.open(db), model)
    engine.clock.tick = engine.clock.ticks_for(days=2)  # Monday 07:00 -> Wednesday 07:00
    planning = engine.minds[KLAUS].state.planning
    planning.day, planning.blocks = date(2023, 2, 14), [PARTY]
    planning.mark()
    assert engine.bodies[KLAUS].action == "sleeping" and engine.clock.now.hour == 7
    return TownService(engine)


def fake_openai(answer) -> tuple[OpenAIModel, FakeOpenAIServer]:  # noqa: ANN001
    server = FakeOpenAIServer(answer)
    settings = load_settings({"TOWNBOT_CHAT_MODEL": "fake", "TOWNBOT_BASE_URL": "http://fake.test/v1",
                              "TOWNBOT_EMBEDDING_MODEL": "fake-embed"}, Path("/nonexistent.toml"))
    return OpenAIModel(settings, http_client=httpx2.AsyncClient(transport=server.transport())), server


def reads_its_plan(body: dict) -> str:
    """A model that recites any plan line about the party, else says it has not planned."""
    prompt = prompt_of(body)
    if purpose_of(body) != "answer":
        return json.dumps({"scores": [3] * prompt.count("\n") or [3]})
    planned = re.search(r"^- .*party.*$", prompt, re.MULTILINE)
    text = ("At 6 pm tonight I'll be at the Valentine's Day party at Hobbs Cafe." if planned
            else "I haven't planned today yet - I'm still asleep.")
    return json.dumps({"text": text})


async def test_before_waking_the_interview_knows_today_is_not_planned(world, tmp_path):
    model, server = fake_openai(reads_its_plan)
    service = await town_after_the_party(world, tmp_path / "t.db", build_model_stack(model))
    try:
        outcome = await service.interview(ASKER, KLAUS, "What will you be doing at 6 pm today?")
    finally:
        await service.engine.store.close()
        await model.close()
    prompt = next(prompt_of(r) for r in server.chat_requests if purpose_of(r) == "answer")
    assert "It is Wednesday February 15, 7:00 am. Right now Klaus is sleeping." in prompt
    assert "Klaus has not planned today yet" in prompt
    assert "party" not in prompt.split("What Klaus remembers")[0]
    assert outcome.data["answer"] == "I haven't planned today yet - I'm still asleep."


async def test_once_planned_the_interview_recites_todays_plan(world, tmp_path):
    model, server = fake_openai(reads_its_plan)
    service = await town_after_the_party(world, tmp_path / "t.db", build_model_stack(model))
    planning = service.engine.minds[KLAUS].state.planning
    planning.day = date(2023, 2, 15)  # the same plan, as today's: now it is recited
    planning.blocks = [PlanBlock(datetime(2023, 2, 15, 17), datetime(2023, 2, 15, 19),
                                 PARTY.activity, "Hobbs Cafe", "cafe")]
    planning.mark()
    try:
        outcome = await service.interview(ASKER, KLAUS, "What will you be doing at 6 pm today?")
    finally:
        await service.engine.store.close()
        await model.close()
    assert "party" in outcome.data["answer"]


@pytest.mark.parametrize("kind", ["offline", "recorded 0.5B replies"])
async def test_an_interview_before_waking_never_speaks_of_the_party_as_todays(world, tmp_path,
                                                                              kind):
    """The offline model answers plan questions from the plan it is given; the recorded real
    replies (tests/real_replies, replayed through the whole stack) are what a small model said."""
    inner = OfflineModel() if kind == "offline" else ReplayModel(RECORDING,
                                                                 embedder=MiniLMEmbedder())
    model = build_model_stack(inner)
    service = await town_after_the_party(world, tmp_path / "t.db", model)
    answers = []
    try:
        for question in ("What will you be doing at 6 pm today?", "What are your plans today?",
                         "What are you doing right now?"):
            answers.append((await service.interview(ASKER, KLAUS, question)).data["answer"])
    finally:
        await service.engine.store.close()
    for answer in answers:
        assert not TODAYS_PARTY.search(answer), answer
        assert "attend the Valentine's Day party" not in answer


TALKS_WITH_TOM = "This morning I had a long talk with Tom Moreno about the election."


def invents_a_talk(then: str):  # noqa: ANN201
    """Claims a talk with Tom Moreno, whom Klaus has never met; asked again, says `then`."""
    def answer(body: dict) -> str:
        prompt = prompt_of(body)
        if purpose_of(body) != "answer" and "was refused" not in prompt and "Klaus" not in prompt[:80]:
            return json.dumps({"scores": [3] * 20})
        repairing = "no memory of meeting or talking with Tom Moreno" in prompt
        return json.dumps({"text": then if repairing else TALKS_WITH_TOM})
    return answer


@pytest.mark.parametrize(("then", "outcome"), [
    ("I've mostly been at my desk writing; I haven't spoken with anyone yet today.", "repaired"),
    (TALKS_WITH_TOM, "fallback")])
async def test_a_claimed_talk_no_memory_backs_is_refused_and_repaired(world, tmp_path, then,
                                                                      outcome):
    model, server = fake_openai(invents_a_talk(then))
    stack = build_model_stack(model)
    service = await town_after_the_party(world, tmp_path / "t.db", stack)
    before = Counter(stack.report().outcomes)
    try:
        answer = (await service.interview(ASKER, KLAUS, "Who have you talked with lately?")
                  ).data["answer"]
    finally:
        await service.engine.store.close()
        await model.close()
    assert "Tom Moreno" not in answer
    counted = Counter(stack.report().outcomes) - before
    assert counted[outcome] == 1 and counted["repaired" if outcome == "fallback" else "fallback"] == 0
    if outcome == "repaired":
        assert answer == then


async def test_the_guards_are_a_town_setting(world, tmp_path):
    """Off (as the evaluation asks), the claimed talk stands and a stranger is asked about."""
    model, _ = fake_openai(invents_a_talk(TALKS_WITH_TOM))
    service = await town_after_the_party(world, tmp_path / "t.db", build_model_stack(model))
    service.engine.settings = type(service.engine.settings)(interview_guards=False)
    try:
        answer = (await service.interview(ASKER, KLAUS, "Who is Rosa Lindqvist?")).data["answer"]
    finally:
        await service.engine.store.close()
        await model.close()
    assert answer == TALKS_WITH_TOM
