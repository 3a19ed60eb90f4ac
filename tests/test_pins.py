"""Pins: each test here fails when one rule a user would notice is changed (found by mutation
runs, see docs/reliability.md): the paper's normalisations, the service's roles, rate limits and
text limits, the honesty instruction, the budget's rules, and what the model client sends."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from pathlib import Path

import httpx2
import numpy as np
import pytest

from townbot.llm import openai_client
from townbot.llm.budget import SPENT, Budget
from townbot.llm.fake_server import FakeOpenAIServer
from townbot.llm.openai_client import Backoff, OpenAIModel
from townbot.llm.port import Ask
from townbot.llm.purposes import PlaceChoice
from townbot.llm.settings import Caps, load_settings
from townbot.llm.stack import build_model_stack
from townbot.mind.memory import MemoryStream
from townbot.mind.retrieval import retrieve
from townbot.town import admission, requests
from townbot.town import service as service_module

NOW = datetime(2023, 2, 14, 12, 0)
QUERY = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


def stream_of(*memories: tuple[str, int, float, list[float]]) -> MemoryStream:
    stream = MemoryStream(dim=4)
    for text, importance, hours_ago, vector in memories:
        stream.add("observation", text, NOW - timedelta(hours=hours_ago), importance,
                   np.array(vector, dtype=np.float32))
    stream.take_changes()
    return stream


def scored(stream: MemoryStream) -> dict[str, tuple[float, float, float]]:
    return {s.memory.text: (s.recency, s.importance, s.relevance)
            for s in retrieve(stream, QUERY, NOW, touch=False)}


# --- retrieval: every term min-max normalised over the candidates (paper 4.1) ----------------


def test_relevance_is_min_max_normalised_not_the_raw_cosine():
    stream = stream_of(("close", 5, 1, [0.95, 0.31, 0, 0]), ("closer", 5, 1, [0.99, 0.14, 0, 0]),
                       ("between", 5, 1, [0.97, 0.24, 0, 0]))
    relevance = {text: round(r, 3) for text, (_, _, r) in scored(stream).items()}
    assert relevance["close"] == 0.0 and relevance["closer"] == 1.0
    assert 0.0 < relevance["between"] < 1.0


def test_importance_is_min_max_normalised_not_divided_by_ten():
    stream = stream_of(("low", 2, 1, [1, 0, 0, 0]), ("mid", 5, 1, [1, 0, 0, 0]),
                       ("high", 8, 1, [1, 0, 0, 0]))
    importance = {text: i for text, (_, i, _) in scored(stream).items()}
    assert importance == {"low": 0.0, "mid": 0.5, "high": 1.0}


def test_a_term_equal_for_every_candidate_counts_one_half():
    stream = stream_of(("a", 4, 3, [1, 0, 0, 0]), ("b", 4, 3, [0, 1, 0, 0]))
    assert {text: (r, i) for text, (r, i, _) in scored(stream).items()} == \
        {"a": (0.5, 0.5), "b": (0.5, 0.5)}


# --- the service's rules, as docs/rules.md states them ---------------------------------------


def test_moderator_only_use_cases_are_the_documented_ones():
    assert set(admission.MODERATOR_ONLY) == {"seed", "scenario", "announce", "pause", "resume",
                                             "speed", "memories", "takeover", "event_status",
                                             "web_rotate", "web_close"}


def test_default_rate_limits_are_the_documented_ones():
    assert {case: (rate.count, rate.seconds) for case, rate in
            admission.DEFAULT_RATES.items()} == {
        "whisper": (3, 60), "set": (5, 60), "interview": (5, 60), "say": (10, 60),
        "join": (3, 60), "leave": (3, 60), "go": (10, 60), "announce": (5, 60),
        "scenario": (3, 60)}


def test_text_limits_are_the_documented_ones():
    assert requests.LIMITS == {"name": 40, "description": 120, "say": 500, "whisper": 300,
                               "interview": 500, "state": 80, "seed": 600,
                               "announce": 500, "query": 200}


@pytest.mark.parametrize("what", sorted(requests.LIMITS))
def test_each_text_limit_admits_its_length_and_refuses_one_more(what):
    limit = requests.LIMITS[what]
    assert requests.bounded("x" * limit, what) == "x" * limit
    with pytest.raises(service_module.TownError, match=f"{limit + 1} characters long; the limit "
                                                      f"is {limit}"):
        requests.bounded("x" * (limit + 1), what)


def test_the_audit_log_keeps_the_documented_600_characters_of_an_argument():
    assert admission.AUDIT_TEXT == 600


def every_use_case(town: service_module.TownService, person: service_module.Person) -> dict:
    """Each use case but pause and resume, called by `person` (not in the town)."""
    other = service_module.Person("test:other", "Other")
    return {"join": town.join(person, "Mo", "a visitor", "Johnson Park"),
            "say": town.say(person, "hello"), "go": town.go(person, "Johnson Park"),
            "leave": town.leave(person), "takeover": town.takeover(person, other, "Klaus"),
            "whisper": town.whisper(person, "Klaus", "tea"),
            "interview": town.interview(person, "Klaus", "How are you?"),
            "set": town.set_object(person, "<Hobbs Cafe: cafe: piano> is out of tune"),
            "look": town.look(person, "Hobbs Cafe: cafe: piano"),
            "seed": town.seed(person, "Klaus", "tea"),
            "scenario": town.load_scenario(person, "valentines-party"),
            "announce": town.announce(person, "Hello!"), "speed": town.speed(person, 1),
            "status": town.status(person), "where": town.where(person),
            "profile": town.profile(person, "Klaus"),
            "memories": town.memories(person, "Klaus", "tea"),
            "event_status": town.event_status(person)}


async def refused(call, reason: str) -> bool:
    try:
        await call
    except service_module.TownError as refusal:
        return reason in str(refusal)
    return False


async def test_a_member_is_refused_exactly_the_documented_moderator_only_use_cases(engine):
    town = service_module.TownService(engine)
    member = service_module.Person("test:member", "Member")
    calls = every_use_case(town, member) | {"pause": town.pause(member),
                                            "resume": town.resume(member)}
    refusals = {case for case, call in calls.items()
                if await refused(call, f"only moderators may use {case}; ask a moderator")}
    assert refusals == {"seed", "scenario", "announce", "pause", "resume", "speed", "memories",
                        "takeover", "event_status"}


async def test_a_paused_town_refuses_exactly_the_use_cases_that_change_it(engine):
    town = service_module.TownService(engine)
    moderator = service_module.Person("test:mod", "Mod", moderator=True)
    await town.pause(moderator)
    refusals = {case for case, call in every_use_case(town, moderator).items()
                if await refused(call, "the town is paused; a moderator can resume it")}
    assert refusals == {"join", "say", "go", "takeover", "whisper", "interview", "set", "seed",
                        "scenario", "announce"}
    await town.resume(moderator)
    assert not town.paused


# --- the honesty instruction ------------------------------------------------------------------


def test_the_answer_prompt_tells_the_resident_to_admit_being_simulated():
    from townbot.prompting import render
    text = render("answer", summary="S", moment="N", first_name="Klaus", context="C",
                  asker="A", question='"Are you real?"')
    flat = " ".join(text.split())
    assert "You are Klaus." in flat  # the prompt speaks to the resident: answers in the first person
    assert "You are a simulated character in a computer program and say so honestly when asked" in flat


# --- the budget ---------------------------------------------------------------------------------


def usage_row(day: int, purpose: str = "react", outcome: str = "ok", tokens: int = 10) -> dict:
    return {"purpose": purpose, "outcome": outcome, "game_day": day, "prompt_tokens": tokens,
            "completion_tokens": 0}


def test_a_daily_cap_is_restored_on_resume_for_that_day_only():
    budget = Budget(Caps(calls_per_day=5))
    budget.restore([usage_row(2)] * 5 + [usage_row(2, "embedding")] * 50)
    assert budget.level(2) == SPENT
    assert budget.admit(False, 2) == "over_budget"
    assert budget.admit(False, 3) is None, "the next game day opens again"


async def test_embeddings_are_never_refused_even_with_every_cap_spent():
    server = FakeOpenAIServer(lambda body: '{"choice": "Hobbs Cafe"}')
    budget = Budget(Caps(calls_per_town=1, tokens_per_town=1))
    budget.restore([usage_row(1, tokens=100)] * 3)
    model = build_model_stack(OpenAIModel(_settings(TOWNBOT_EMBEDDING_MODEL="fake-embed"),
                                     http_client=httpx2.AsyncClient(transport=server.transport()),
                                     backoff=Backoff(base=0.001, cap=0.002)), budget=budget)
    vectors = await model.embed(["Isabella is planning a party", "Klaus is writing"])
    assert vectors.shape[0] == 2 and np.abs(vectors).sum() > 0
    assert server.embedding_requests, "the embedding server was asked"


# --- what the client sends ----------------------------------------------------------------------


def _settings(**env: str):
    base = {"TOWNBOT_CHAT_MODEL": "fake-chat", "TOWNBOT_BASE_URL": "http://fake.test/v1"}
    return load_settings({**base, **env}, Path("/nonexistent/townbot.toml"))


def place_ask() -> Ask[PlaceChoice]:
    return Ask(purpose="choose_sector", prompt="Where should Isabella go?", schema=PlaceChoice,
               agent="Isabella Rodriguez", default=lambda: PlaceChoice(choice="Hobbs Cafe"))


async def test_retry_after_is_honoured_up_to_its_cap(monkeypatch):
    server = FakeOpenAIServer(lambda body: '{"choice": "Hobbs Cafe"}')
    waits: list[float] = []
    fronts = ["7", "120"]

    async def handle(request: httpx2.Request) -> httpx2.Response:
        if fronts:
            return httpx2.Response(429, headers={"retry-after": fronts.pop(0)},
                                   json={"error": {"message": "slow down", "type": "rate"}})
        return await server.handle(request)

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(openai_client.asyncio, "sleep", no_wait)
    model = OpenAIModel(_settings(), http_client=httpx2.AsyncClient(
        transport=httpx2.MockTransport(handle)), backoff=Backoff(base=0.001, cap=0.002))
    await build_model_stack(model).ask(place_ask())
    assert waits == [7.0, 30.0]
    monkeypatch.setattr(openai_client.asyncio, "sleep", asyncio.sleep)


@pytest.mark.parametrize(("url", "sent", "not_sent"), [
    ("https://api.openai.com/v1", "max_completion_tokens", "max_tokens"),
    ("http://localhost:11434/v1", "max_tokens", "max_completion_tokens")])
async def test_the_answer_length_goes_under_the_name_each_server_knows(url, sent, not_sent):
    server = FakeOpenAIServer(lambda body: '{"choice": "Hobbs Cafe"}')
    settings = _settings(TOWNBOT_BASE_URL=url, TOWNBOT_API_KEY="sk-test", TOWNBOT_MAX_TOKENS="321")
    model = OpenAIModel(settings, http_client=httpx2.AsyncClient(transport=server.transport()),
                        backoff=Backoff(base=0.001, cap=0.002))
    await build_model_stack(model).ask(place_ask())
    body = server.chat_requests[-1]
    assert body[sent] == 321 and not_sent not in body
