"""A town keeps ticking through a thousand injected faults, and loses no memory."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fake_server import FakeOpenAIServer, minimal_answer, prompt_of, purpose_of, schema_of
from faults import FAULTS, FaultRates, FaultyModel, FaultyTransport

from townbot.llm.checking import Checked
from townbot.llm.metering import Recorded
from townbot.llm.offline import OfflineModel
from townbot.llm.openai_client import Backoff, OpenAIModel
from townbot.llm.port import LanguageModel
from townbot.llm.settings import load_settings
from townbot.llm.stack import build_model_stack, find_layer
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.world.model import World

EVERY_FAULT = FaultRates(rate_limit=0.1, server_error=0.1, timeout=0.1, malformed=0.1, cut_off=0.1)
WANTED_FAULTS = 1000
MOST_TICKS = 400  # a bound on the loop; far more than the faults need

def checked(model: LanguageModel) -> Checked:
    layer = find_layer(model, Checked)
    assert layer is not None
    return layer


def plausible_answer(body: dict[str, Any]) -> str:
    """One score per numbered memory for importance; the smallest fitting answer otherwise."""
    if purpose_of(body) == "importance":
        count = len(re.findall(r"^\d+\. ", prompt_of(body), re.MULTILINE))
        return json.dumps({"scores": [4] * count})
    return json.dumps(minimal_answer(schema_of(body)))


async def tick_until_faults(engine: Engine, injected) -> int:
    ticks = 0
    while sum(injected.values()) < WANTED_FAULTS and ticks < MOST_TICKS:
        await engine.tick()
        ticks += 1
    return ticks


async def assert_no_memory_lost(world: World, store: Store, engine: Engine, model: Recorded) -> None:
    stored: dict[str, int] = {}
    for memory in await store.memories(engine.town.id):
        stored[memory.agent] = stored.get(memory.agent, 0) + 1
    in_memory = {name: len(mind.stream) for name, mind in engine.minds.items()}
    assert stored == in_memory
    resumed = await Engine.open(world, store, model)
    assert {name: len(mind.stream) for name, mind in resumed.minds.items()} == in_memory
    assert resumed.clock.tick == engine.clock.tick


async def test_a_town_on_a_failing_server_keeps_ticking_through_a_thousand_faults(world: World,
                                                                                  tmp_path: Path):
    server = FakeOpenAIServer(plausible_answer)
    transport = FaultyTransport(server.transport(), EVERY_FAULT, seed=3)
    settings = load_settings({"TOWNBOT_CHAT_MODEL": "fake-chat", "TOWNBOT_BASE_URL": "http://fake.test/v1",
                              "TOWNBOT_EMBEDDING_MODEL": "fake-embed"}, Path("/nonexistent.toml"))
    inner = OpenAIModel(settings, http_client=httpx2.AsyncClient(transport=transport),
                        backoff=Backoff(base=0.0005, cap=0.001))
    model = build_model_stack(inner)
    await model.prepare()
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, model)

    ticks = await tick_until_faults(engine, transport.injected)

    assert sum(transport.injected.values()) >= WANTED_FAULTS, f"only {transport.injected} in {ticks} ticks"
    assert set(transport.injected) == set(FAULTS)
    outcomes = {row["outcome"] for row in await store.usage_rows(engine.town.id)}
    assert {"ok", "repaired", "fallback"} <= outcomes
    assert inner.stats.retries > 0 and checked(model).problems["cut_off"] > 0
    await assert_no_memory_lost(world, store, engine, model)
    await model.close()
    await store.close()


async def test_a_town_on_a_failing_offline_model_keeps_ticking_through_a_thousand_faults(world: World,
                                                                                         tmp_path: Path):
    faulty = FaultyModel(OfflineModel(), EVERY_FAULT, seed=5)
    model = build_model_stack(faulty)
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, model)

    await tick_until_faults(engine, faulty.injected)

    assert sum(faulty.injected.values()) >= WANTED_FAULTS
    rows = await store.usage_rows(engine.town.id)
    assert {"failed", "repaired", "fallback", "ok"} <= {row["outcome"] for row in rows}
    events = await store.events(engine.town.id)
    assert sum(e.kind == "action" for e in events) > 100, "residents go on acting"
    await assert_no_memory_lost(world, store, engine, model)
    await store.close()


def test_fault_rates_read_from_a_command_line_and_refuse_impossible_shares():
    rates = FaultRates.parse("latency=0.5, rate_limit=0.2,timeout=0.1")
    assert (rates.latency, rates.rate_limit, rates.timeout, rates.cut_off) == (0.5, 0.2, 0.1, 0.0)
    with pytest.raises(ValueError, match="add up to at most 1"):
        FaultRates(rate_limit=0.6, server_error=0.6)
    with pytest.raises(ValueError, match="unknown fault 'lag'"):
        FaultRates.parse("lag=1")
