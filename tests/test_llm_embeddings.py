"""Embeddings through an OpenAI-compatible /embeddings endpoint: batched, cached, unit length,
recorded per town, and re-embedded on request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2
import numpy as np
import pytest
from fake_server import FakeOpenAIServer, counted_tokens, minimal_answer, schema_of

from townbot.cli import main
from townbot.llm.checking import Checked
from townbot.llm.metering import Recorded
from townbot.llm.offline import OfflineModel
from townbot.llm.openai_client import Backoff, OpenAIModel
from townbot.llm.port import LanguageModel, ModelConfigError, ModelError
from townbot.llm.settings import load_settings
from townbot.llm.stack import build_model_stack, find_layer
from townbot.platforms.maintenance import reembed_town
from townbot.store.database import Store, StoreError
from townbot.town.engine import Engine
from townbot.world.model import World

FAST = Backoff(base=0.001, cap=0.002)
TEXTS = ["Isabella is opening Hobbs Cafe", "Klaus is reading about gentrification",
         "the coffee machine is brewing coffee", "Maria is streaming a game", "the bed is made"]

def checked(model: LanguageModel) -> Checked:
    layer = find_layer(model, Checked)
    assert layer is not None
    return layer


def embedding_model(transport: httpx2.AsyncBaseTransport, **env: str) -> Recorded:
    settings = load_settings({"TOWNBOT_CHAT_MODEL": "fake-chat", "TOWNBOT_BASE_URL": "http://fake.test/v1",
                              "TOWNBOT_EMBEDDING_MODEL": "fake-embed", **env},
                             Path("/nonexistent/townbot.toml"))
    client = httpx2.AsyncClient(transport=transport)
    return build_model_stack(OpenAIModel(settings, http_client=client, backoff=FAST))


def never_chats(body: dict) -> str:
    raise AssertionError("no chat expected")


def smallest_answers(body: dict) -> str:
    return json.dumps(minimal_answer(schema_of(body)))


async def test_the_dimension_is_learnt_from_the_server_before_the_town_opens():
    server = FakeOpenAIServer(never_chats, embedding_dim=48)
    model = embedding_model(server.transport())
    assert model.embedding_dim == 0
    await model.prepare()
    assert (model.embedding_model, model.embedding_dim) == ("fake-embed", 48)
    await model.close()


async def test_texts_are_sent_in_batches_and_come_back_unit_length_in_order():
    server = FakeOpenAIServer(never_chats, embedding_dim=32)
    model = embedding_model(server.transport(), TOWNBOT_EMBEDDING_BATCH="2")
    await model.prepare()
    vectors = await model.embed(TEXTS)
    batches = [r["input"] for r in server.embedding_requests[1:]]  # the first was the probe
    assert sorted(len(b) for b in batches) == [1, 2, 2]
    assert all(r["encoding_format"] == "float" for r in server.embedding_requests)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0), "the fake sends vectors of length 3"
    expected = server.embedder.vector(TEXTS[3])
    assert np.allclose(vectors[3], expected / np.linalg.norm(expected))
    [record] = model.usage.drain()
    assert (record.purpose, record.outcome, record.estimated) == ("embedding", "ok", False)
    assert record.prompt_tokens == sum(counted_tokens(t) for t in TEXTS)
    await model.close()


async def test_a_text_is_embedded_once_and_every_hit_is_counted():
    server = FakeOpenAIServer(never_chats)
    model = embedding_model(server.transport())
    await model.prepare()
    first = await model.embed(TEXTS[:3] + [TEXTS[0]])
    second = await model.embed(TEXTS[:2])
    sent = [text for r in server.embedding_requests[1:] for text in r["input"]]
    assert sent == TEXTS[:3], "each text went to the server once"
    assert np.array_equal(first[0], first[3]) and np.array_equal(first[:2], second)
    outcomes = [r.outcome for r in model.usage.drain()]
    assert outcomes.count("cached") == 3 and outcomes.count("ok") == 1
    await model.close()


async def test_texts_the_server_cannot_embed_get_zero_vectors_and_are_tried_again_later():
    server = FakeOpenAIServer(never_chats, embedding_dim=16)
    down = {"on": False}

    async def handle(request: httpx2.Request) -> httpx2.Response:
        if down["on"]:
            return httpx2.Response(503, json={"error": {"message": "overloaded"}})
        return await server.handle(request)

    model = embedding_model(httpx2.MockTransport(handle), TOWNBOT_MAX_RETRIES="1")
    await model.prepare()
    down["on"] = True
    vectors = await model.embed(TEXTS[:2])
    assert vectors.shape == (2, 16) and not vectors.any()
    assert [r.outcome for r in model.usage.drain()] == ["failed", "failed"]
    assert "2 texts could not be embedded" in checked(model).last_failure
    down["on"] = False
    assert np.allclose(np.linalg.norm(await model.embed(TEXTS[:2]), axis=1), 1.0)
    await model.close()


async def test_a_server_that_changes_dimension_mid_town_is_a_clear_error():
    server = FakeOpenAIServer(never_chats, embedding_dim=16)
    model = embedding_model(server.transport())
    await model.prepare()
    server.embedder.dim = 24
    with pytest.raises(ModelConfigError, match="returned vectors of 24 dimensions, not the 16"):
        await model.embed(["something new"])
    await model.close()


async def test_configured_dimensions_are_asked_for_and_need_no_probe():
    server = FakeOpenAIServer(never_chats, embedding_dim=64)
    model = embedding_model(server.transport(), TOWNBOT_EMBEDDING_DIMENSIONS="64")
    await model.prepare()
    assert model.embedding_dim == 64 and not server.embedding_requests
    await model.embed(["one text"])
    assert server.embedding_requests[0]["dimensions"] == 64
    await model.close()


async def test_reembed_moves_a_town_to_another_embedding_model(world: World, tmp_path: Path):
    db = tmp_path / "town.db"
    store = await Store.open(db)
    engine = await Engine.open(world, store, build_model_stack(OfflineModel()))
    for _ in range(3):
        await engine.tick()
    memories_before = await store.memories(engine.town.id)

    server = FakeOpenAIServer(never_chats, embedding_dim=40)
    model = embedding_model(server.transport())
    await model.prepare()
    with pytest.raises(StoreError, match="embedded with offline-hashing-256"):
        await Engine.open(world, store, model)
    town = await store.town()
    assert await reembed_town(store, town, model) == len(memories_before)

    town = await store.town()
    assert (town.embedding_model, town.embedding_dim) == ("fake-embed", 40)
    after = await store.memories(town.id)
    assert [(m.agent, m.memory.text) for m in after] == [(m.agent, m.memory.text) for m in memories_before]
    assert all(m.vector.shape == (40,) for m in after)
    assert any(r["purpose"] == "reembed" for r in await store.usage_rows(town.id)), "the cost is metered"
    resumed = await Engine.open(world, store, model)
    assert sum(len(m.stream) for m in resumed.minds.values()) == len(after)
    await model.close()
    await store.close()


async def found_town_on_fake_embeddings(world: World, db: Path) -> int:
    """A town founded and ticked once on the fake server's 40-dimension embeddings."""
    store = await Store.open(db)
    model = embedding_model(FakeOpenAIServer(smallest_answers, embedding_dim=40).transport())
    await model.prepare()
    engine = await Engine.open(world, store, model)
    await engine.tick()
    count = len(await store.memories(engine.town.id))
    await model.close()
    await store.close()
    return count


def test_the_reembed_command_brings_a_town_back_to_the_offline_embedder(world: World, tmp_path: Path,
                                                                         capsys):
    db = tmp_path / "town.db"
    count = asyncio.run(found_town_on_fake_embeddings(world, db))
    assert main(["sim", "--hours", "0.5", "--db", str(db), "--no-transcript"]) == 2
    assert "embedded with fake-embed (40 dimensions)" in capsys.readouterr().err

    assert main(["reembed", "--db", str(db)]) == 0  # no model configured: the offline embedder
    out = capsys.readouterr().out
    assert f"re-embedded {count} memories with offline-hashing-256 (256 dimensions)" in out
    assert "they were embedded with fake-embed (40)" in out
    assert main(["sim", "--hours", "0.5", "--db", str(db), "--no-transcript"]) == 0


async def test_a_reembed_the_server_cannot_finish_changes_nothing(world: World, tmp_path: Path):
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, build_model_stack(OfflineModel()))
    await engine.tick()
    before = await store.memories(engine.town.id)
    server = FakeOpenAIServer(never_chats, embedding_dim=40)
    batches = {"served": 0}

    async def fails_after_the_probe_and_one_batch(request: httpx2.Request) -> httpx2.Response:
        if batches["served"] >= 2:
            return httpx2.Response(503, json={"error": {"message": "overloaded"}})
        batches["served"] += 1
        return await server.handle(request)

    model = embedding_model(httpx2.MockTransport(fails_after_the_probe_and_one_batch),
                            TOWNBOT_EMBEDDING_BATCH="8", TOWNBOT_MAX_RETRIES="1",
                            TOWNBOT_CONCURRENCY="1")
    await model.prepare()
    with pytest.raises(ModelError, match="(not be embedded|10 calls in a row).*nothing was changed"):
        await reembed_town(store, await store.town(), model)
    town = await store.town()
    assert (town.embedding_model, town.embedding_dim) == ("offline-hashing-256", 256)
    after = await store.memories(town.id)
    assert all(np.array_equal(a.vector, b.vector) for a, b in zip(before, after, strict=True))
    await model.close()
    await store.close()
