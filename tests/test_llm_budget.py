"""Budget caps, the answer cache and the usage summary, as an operator sees them."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path

import httpx2
from fake_server import FakeOpenAIServer

from townbot.cli import main
from townbot.llm.budget import Budget
from townbot.llm.offline import OfflineModel
from townbot.llm.openai_client import OpenAIModel
from townbot.llm.port import Ask
from townbot.llm.purposes import ImportanceScores, PlaceAndArea
from townbot.llm.purposes.choose_place import PlaceQuestion
from townbot.llm.settings import Caps, load_settings
from townbot.llm.stack import build_model_stack
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.town.launch import TownFiles, open_engine
from townbot.town.usage import render_usage, summarise
from townbot.world.model import Persona, World

ROOT = Path(__file__).resolve().parents[1]


ISABELLA = Persona("Isabella Rodriguez", 34, ("friendly",), "She runs Hobbs Cafe.", "Running the cafe.",
                   420, 1380, "Hobbs Cafe", "cafe", (), ())
WHERE_TO = PlaceQuestion(ISABELLA, "go out", datetime(2023, 2, 13, 9),
                         {"Hobbs Cafe": ["cafe"], "Johnson Park": ["park"]}, ("Hobbs Cafe", "cafe"),
                         hint=("Johnson Park", "park"))


def choice_ask(optional: bool = False) -> Ask[PlaceAndArea]:
    """Where to (an optional ask is of a purpose the offline model does not know)."""
    ask = WHERE_TO.ask("Isabella Rodriguez")
    return dataclasses.replace(ask, default=lambda: PlaceAndArea(place="Hobbs Cafe", area="cafe"),
                               **({"purpose": "emoji", "optional": True, "context": {}}
                                  if optional else {}))


async def test_optional_asks_are_skipped_first_then_every_ask_gets_its_default():
    budget = Budget(Caps(calls_per_day=10, soft_fraction=0.5))
    model = build_model_stack(OfflineModel(), budget=budget)
    answers = [await model.ask(choice_ask(optional=i % 2 == 1)) for i in range(20)]
    outcomes = [r.outcome for r in model.usage.drain()]
    # Five calls reach the model; from there optional asks are skipped and essential ones go on.
    assert outcomes[:5] == ["ok"] * 5
    assert "skipped" in outcomes[5:] and outcomes.count("ok") == 10
    assert outcomes[-1] == "over_budget"
    assert answers[-1].place == "Hobbs Cafe" and answers[0].place == "Johnson Park"
    assert "cap reached, 10 of 10 calls on game day 1" in budget.status(1)
    assert "residents follow their plans" in budget.status(1)
    next_day = dataclasses.replace(choice_ask(), game_day=2)
    assert (await model.ask(next_day)).place == "Johnson Park", "a daily cap opens again"


async def test_a_token_cap_counts_what_the_server_reports():
    server = FakeOpenAIServer(lambda body: '{"choice": "Johnson Park"}')
    settings = load_settings({"TOWNBOT_CHAT_MODEL": "fake", "TOWNBOT_BASE_URL": "http://fake.test/v1"},
                             Path("/nonexistent.toml"))
    budget = Budget(Caps(tokens_per_town=20))
    client = httpx2.AsyncClient(transport=server.transport())
    model = build_model_stack(OpenAIModel(settings, http_client=client), budget=budget)
    while len(server.chat_requests) < 10 and budget.level(1) != "spent":
        await model.ask(choice_ask())
    assert budget.day_tokens.total() >= 20 and len(server.chat_requests) < 10
    assert (await model.ask(choice_ask())).place == "Hobbs Cafe"
    assert model.usage.drain()[-1].outcome == "over_budget"
    await model.close()


async def test_a_town_over_its_budget_keeps_ticking_on_its_plans(world: World, tmp_path: Path):
    budget = Budget(Caps(calls_per_day=60))
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, build_model_stack(OfflineModel(), budget=budget))
    late_events = []
    for tick in range(12):
        events = await engine.tick()
        if tick >= 6:
            late_events += [e for e in events if e.kind == "action"]
    rows = await store.usage_rows(engine.town.id)
    called = [r for r in rows if r["outcome"] in ("ok", "repaired", "fallback", "failed")]
    assert len(called) <= 60
    assert sum(r["outcome"] == "over_budget" for r in rows) > 0
    assert late_events, "residents still act after the cap"
    summary = summarise(rows)
    assert summary["budget_defaults"] > 0
    assert "answered by defaults under the budget" in render_usage(summary)
    await store.close()


async def test_a_resumed_town_remembers_what_it_has_spent(tmp_path: Path, monkeypatch):
    db = str(tmp_path / "town.db")
    monkeypatch.setenv("TOWNBOT_MAX_CALLS_PER_TOWN", "100000")
    monkeypatch.chdir(tmp_path)  # no townbot.toml here
    files = TownFiles(str(ROOT / "world.yaml"), str(ROOT / "personas"))
    engine = await open_engine(files, db)
    await engine.tick()
    spent = engine.model.report().budget.day_calls.total()
    await engine.store.close()
    resumed = await open_engine(files, db)
    assert spent > 0 and resumed.model.report().budget.day_calls.total() == spent
    await resumed.store.close()


async def test_the_same_importance_question_is_answered_from_the_cache():
    server = FakeOpenAIServer(lambda body: '{"scores": [6]}')
    settings = load_settings({"TOWNBOT_CHAT_MODEL": "fake", "TOWNBOT_BASE_URL": "http://fake.test/v1"},
                             Path("/nonexistent.toml"))
    client = httpx2.AsyncClient(transport=server.transport())
    model = build_model_stack(OpenAIModel(settings, http_client=client))

    def rate(agent: str) -> Ask[ImportanceScores]:
        return Ask(purpose="importance", prompt="Rate: 1. Isabella is planning a party",
                   schema=ImportanceScores, agent=agent, default=lambda: ImportanceScores(scores=[3]))

    first = await model.ask(rate("Klaus Mueller"))
    first.scores.append(1)  # a caller changing its answer does not change the cache
    assert (await model.ask(rate("Klaus Mueller"))).scores == [6]
    await model.ask(rate("Maria Lopez"))
    assert len(server.chat_requests) == 2, "another resident is another question"
    summary = summarise([r._asdict() for r in model.usage.drain()])
    assert summary["cache_hits"] == 1 and summary["calls"] == 2
    assert "cache hits: 1" in render_usage(summary)
    await model.close()


def test_usage_command_prints_calls_per_agent_day_and_a_price(tmp_path: Path, monkeypatch, capsys):
    db = tmp_path / "town.db"
    monkeypatch.chdir(tmp_path)
    assert main(["sim", "--hours", "1", "--db", str(db), "--no-transcript"]) == 0
    capsys.readouterr()
    assert main(["usage", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "/agent-day" in out and "importance" in out
    assert "per agent per game day" in out and "price: nothing (the offline model runs locally)" in out


def test_prices_give_an_estimate_for_a_real_model():
    settings = load_settings({"TOWNBOT_CHAT_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "sk-test",
                              "TOWNBOT_SMALL_MODEL": "gpt-4.1-nano", "TOWNBOT_EMBEDDING_MODEL": "emb",
                              "TOWNBOT_PRICE_PROMPT": "0.15", "TOWNBOT_PRICE_COMPLETION": "0.60",
                              "TOWNBOT_SMALL_PRICE_PROMPT": "0.10", "TOWNBOT_SMALL_PRICE_COMPLETION": "0.40",
                              "TOWNBOT_PRICE_EMBEDDING": "0.02"}, Path("/nonexistent.toml"))

    def row(purpose: str, model: str, prompt: int, completion: int) -> dict:
        return {"purpose": purpose, "model": model, "prompt_tokens": prompt, "completion_tokens": completion,
                "outcome": "ok", "agent": "Klaus Mueller", "game_day": 1, "estimated": 0}

    rows = [row("day_plan", "gpt-4o-mini", 1_000_000, 100_000),
            row("importance", "gpt-4.1-nano", 1_000_000, 0),
            row("embedding", "emb", 500_000, 0), row("day_plan", "another-model", 10, 0)]
    summary = summarise(rows, settings)
    assert abs(summary["price"] - (0.15 + 0.06 + 0.10 + 0.01)) < 1e-9
    line = render_usage(summary)
    assert "estimated price: $0.3200" in line
    assert "plus 10 tokens of models without a configured price" in line
    assert json.dumps(summary)  # plain data, ready for other front ends
