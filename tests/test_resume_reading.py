"""Reading a town's memories back a chunk of rows at a time: every text, embedding, access and
order reads back exactly as written, whatever the text holds and however raw, sparse and
compressed embeddings mix in a chunk."""

from __future__ import annotations

import zlib
from datetime import datetime, timedelta

import numpy as np
import pytest

from townbot.llm.embedding import HashingEmbedder
from townbot.mind.memory import Memory, MemoryStream
from townbot.store import memories
from townbot.store.database import Store, StoreError, TickChanges

NINE = datetime(2023, 2, 13, 9, 0)
DIM = 64
TEXTS = ["The stove is on", "Café crème, naïve résumé 🍰", "a\x1eb\x1fc", "", "line\nbreak",
         "Ann said 'hi', \"twice\"; [1, 2]", "\x00 nul inside"]


def embedding(kind: str, seed: int) -> np.ndarray:
    """A sparse hashing vector, a dense one (stored raw), or the -0.0 edge."""
    if kind == "sparse":
        return np.asarray(HashingEmbedder(DIM).embed([f"words {seed} and more {seed * 7}"])[0],
                          dtype=np.float32)
    if kind == "dense":
        return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    signed = np.zeros(DIM, dtype=np.float32)
    signed[[seed % DIM, 3]] = -0.0, 0.5
    return signed


def written(count: int) -> list[tuple[str, Memory, np.ndarray]]:
    """Memories of three agents interleaved, with every kind of text and embedding."""
    kinds = ("sparse", "dense", "signed", "sparse")
    rows = []
    for i in range(count):
        agent = ("Ann", "Bob", "Cy")[i % 3]
        seq = i // 3
        when = NINE + timedelta(minutes=10 * (i // 5))
        evidence = (seq - 1,) if seq and i % 4 == 0 else ()
        rows.append((agent, Memory(seq, "observation" if i % 2 else "reflection",
                                   f"{TEXTS[i % len(TEXTS)]} {i}", when, when, 1 + i % 9, evidence),
                     embedding(kinds[i % len(kinds)], i)))
    return rows


async def town_with(tmp_path, rows) -> tuple[Store, int]:
    store = await Store.open(tmp_path / "town.db")
    town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", DIM, {}, {})
    await store.save_tick(TickChanges(town.id, 1, new_memories=rows))
    return store, town.id


@pytest.mark.parametrize("chunk", [1, 4, 5, 4096])
async def test_memories_read_back_exactly_in_chunks_of_any_size(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(memories, "MEMORY_CHUNK", chunk)
    rows = written(40)
    store, town = await town_with(tmp_path, rows)
    stored = await store.memories(town)
    expected = sorted(rows, key=lambda row: row[0])
    assert [(s.agent, s.memory) for s in stored] == [(a, m) for a, m, _ in expected]
    assert [s.vector.tobytes() for s in stored] == [v.tobytes() for _, _, v in expected]
    assert [s.memory for s in await store.memories(town, "Bob")] == \
        [m for a, m, _ in rows if a == "Bob"]
    await store.close()


async def test_logged_accesses_override_the_rows_in_every_chunk(tmp_path, monkeypatch):
    monkeypatch.setattr(memories, "MEMORY_CHUNK", 4)
    rows = written(24)
    store, town = await town_with(tmp_path, rows)
    later = NINE + timedelta(days=1)
    touched = [m for a, m, _ in rows if a == "Bob"][1::2]
    for memory in touched:
        memory.last_accessed, memory.importance = later, 9
    await store.save_tick(TickChanges(town, 2, touched=[("Bob", touched)]))
    for memory in touched[:2]:
        memory.last_accessed = later + timedelta(hours=1)
    await store.save_tick(TickChanges(town, 3, touched=[("Bob", touched[:2])]))
    assert [s.memory for s in await store.memories(town, "Bob")] == \
        [m for a, m, _ in rows if a == "Bob"]
    await store.close()


async def test_a_chunk_with_an_old_zlib_embedding_reads_back_for_every_agent(tmp_path):
    rows = written(12)
    store, town = await town_with(tmp_path, rows)
    await store.db.execute("UPDATE memories SET embedding = ? WHERE agent = 'Cy' AND seq = 1",
                           (zlib.compress(rows[5][2].tobytes()),))
    stored = await store.memories(town)
    assert [s.vector.tobytes() for s in stored] == \
        [v.tobytes() for _, _, v in sorted(rows, key=lambda row: row[0])]
    await store.close()


@pytest.mark.parametrize(("blob", "readable"), [
    (b"s\x01\x02", False),  # sparse, cut short
    (b"s" + bytes(6), True),  # one entry: index 0, value 0.0
    (b"s\xff\x00" + bytes(4), False),  # index 255 of 64
    (b"", False),
])
async def test_a_damaged_embedding_in_a_chunk_is_a_clear_error(tmp_path, blob, readable):
    store, town = await town_with(tmp_path, written(6))
    await store.db.execute("UPDATE memories SET embedding = ? WHERE id = 2", (blob,))
    if readable:
        assert not (await store.memories(town, "Bob"))[0].vector.any()
    else:
        with pytest.raises(StoreError, match=f"memories of Bob have embeddings that are not {DIM} "
                                             "numbers: the database is damaged"):
            await store.memories(town)
    await store.close()


@pytest.mark.parametrize("damage", [
    "UPDATE memories SET importance = 'x' WHERE id = 2",
    "UPDATE memories SET created = 'yesterday' WHERE id = 2",
    "UPDATE memories SET evidence = '[1,' WHERE id = 2",
])
async def test_a_damaged_column_is_a_clear_error(tmp_path, damage):
    store, town = await town_with(tmp_path, written(6))
    await store.db.execute(damage)
    with pytest.raises(StoreError, match="cannot be read .*the database is damaged"):
        await store.memories(town)
    await store.close()


def test_stored_memories_take_their_positions_and_int_importance():
    """The store makes memories with their positions as ids and int importance, which a stream
    then keeps as they are; any others are set as adding them would."""
    stream = MemoryStream(DIM)
    stream.extend_stored([Memory(0, "plan", "a", NINE, NINE, 3)], np.zeros((1, DIM), np.float32))
    odd = [Memory(7, "plan", "b", NINE, NINE, np.int64(4)), Memory(1, "plan", "c", NINE, NINE, 5)]
    stream.extend_stored(odd, np.zeros((2, DIM), np.float32))
    assert [(m.id, m.importance, type(m.importance)) for m in stream.memories] == \
        [(0, 3, int), (1, 4, int), (2, 5, int)]
    assert stream.arrays()[1].tolist() == [3, 4, 5]
