"""Packed copies of full chunks of memory rows (townbot.store.packs): a town read from its packs
is exactly the town read from its rows (memories, ids, order, embeddings, the columns a stream
keeps, accesses logged before and after packing), whatever the chunk holds; a town from before
packs migrates and resumes the same; re-embedding drops them; a damaged pack is passed over."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import numpy as np
import pytest
from conftest import accesses_as_before_migration_10
from test_resume_reading import DIM, NINE, embedding, town_with, written

from townbot.mind.memory import Memory
from townbot.store import database
from townbot.store.database import Store, StoreError, TickChanges, replace_embeddings
from townbot.town.engine import SavedTown

AGENTS = ("Ann", "Bob", "Cy")


async def streams(store: Store, town: int) -> dict:
    row = await store.town(town)
    assert row is not None
    return await SavedTown._streams(store, row, AGENTS)


def assert_same(ours: dict, theirs: dict) -> None:
    assert ours.keys() == theirs.keys()
    for name in ours:
        a, b = ours[name], theirs[name]
        assert a.memories == b.memories, name
        assert [m.id for m in a.memories] == list(range(len(a)))
        for mine, other in zip(a.arrays(), b.arrays(), strict=True):
            assert mine.dtype == other.dtype and mine.tobytes() == other.tobytes(), name
        assert np.array_equal(a.kind_mask(("plan", "reflection")), b.kind_mask(("plan", "reflection")))
        assert a._latest_by_text == b._latest_by_text
        assert a.take_changes() == ([], [])


async def pack_count(store: Store, sparse: bool | None = None) -> int:
    where = "" if sparse is None else f" WHERE head LIKE '%\"sparse\": {str(sparse).lower()}%'"
    async with store.db.execute(f"SELECT count(*) FROM memory_packs{where}") as cursor:
        return (await cursor.fetchone())[0]


async def touch(store: Store, town: int, rows: list, tick: int, agent: str, hours: int) -> None:
    touched = [m for a, m, _ in rows if a == agent][tick % 2::2]
    for memory in touched:
        memory.last_accessed, memory.importance = NINE + timedelta(hours=hours), 1 + tick
    await store.save_tick(TickChanges(town, tick, touched=[(agent, touched)]))


@pytest.mark.parametrize("chunk", [1, 4, 5, 7])
async def test_packs_read_back_as_the_rows_do(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(database, "MEMORY_CHUNK", chunk)
    rows = written(40)
    store, town = await town_with(tmp_path, rows)
    await touch(store, town, rows, 2, "Bob", 30)
    from_rows = await streams(store, town)
    assert await store.pack_memories() == -(-40 // chunk)
    assert await store.pack_memories() == 0, "a chunk is packed once"
    if chunk == 1:
        assert await pack_count(store, sparse=True) and await pack_count(store, sparse=False)
    assert_same(await streams(store, town), from_rows)
    more = written(50)[40:]  # rows after the packs, some in the last packed chunk
    rows += more
    await store.save_tick(TickChanges(town, 5, new_memories=more))
    mixed = await streams(store, town)
    assert await store.pack_memories() == -(-50 // chunk) - 40 // chunk
    packed = await streams(store, town)
    await store.db.execute("DELETE FROM memory_packs")
    from_rows = await streams(store, town)
    assert_same(mixed, from_rows)
    assert_same(packed, from_rows)
    await store.pack_memories()
    await touch(store, town, rows, 3, "Cy", 50)  # logged after packing: read over the packs
    await touch(store, town, rows, 4, "Bob", 70)
    stored = await store.memories(town)
    assert [(s.agent, s.memory) for s in stored] == \
        [(a, m) for a, m, _ in sorted(rows, key=lambda row: row[0])]
    assert [s.vector.tobytes() for s in stored] == \
        [v.tobytes() for _, _, v in sorted(rows, key=lambda row: row[0])]
    packed = await streams(store, town)
    await store.db.execute("DELETE FROM memory_packs")
    assert_same(packed, await streams(store, town))
    await store.close()


async def test_a_writer_packs_full_chunks_as_it_closes_and_a_reader_reads_them(tmp_path, monkeypatch):
    monkeypatch.setattr(database, "MEMORY_CHUNK", 4)
    rows = written(18)
    store, town = await town_with(tmp_path, rows)
    from_rows = await streams(store, town)
    await store.close()
    reader = await Store.open(tmp_path / "town.db", read_only=True)
    assert await pack_count(reader) == 5, "the last chunk's rows so far too"
    assert_same(await streams(reader, town), from_rows)
    await reader.close()


async def test_a_town_from_before_packs_migrates_and_resumes_the_same(tmp_path, monkeypatch):
    monkeypatch.setattr(database, "MEMORY_CHUNK", 3)
    rows = written(20)
    store, town = await town_with(tmp_path, rows)
    await touch(store, town, rows, 2, "Ann", 10)
    from_rows = await streams(store, town)
    await store._close()  # as a townbot before packs leaves it: no packs ...
    with sqlite3.connect(tmp_path / "town.db") as raw:  # ... and no table for them
        raw.execute("DROP TABLE memory_packs")
        accesses_as_before_migration_10(raw)
        raw.execute("ALTER TABLE llm_usage DROP COLUMN cached_tokens")  # added by migration 12
        raw.execute("PRAGMA user_version = 7")
    store = await Store.open(tmp_path / "town.db")
    assert await pack_count(store) == 0
    assert_same(await streams(store, town), from_rows)
    await store.close()
    store = await Store.open(tmp_path / "town.db")
    assert await pack_count(store) == 7
    assert_same(await streams(store, town), from_rows)
    await store.close()


async def test_re_embedding_drops_the_packs(tmp_path, monkeypatch):
    monkeypatch.setattr(database, "MEMORY_CHUNK", 2)
    rows = written(8)
    store, town = await town_with(tmp_path, rows)
    assert await store.pack_memories() == 4
    fresh = [(a, m.id, embedding("sparse", 100 + i)) for i, (a, m, _) in enumerate(rows)]
    await replace_embeddings(store, town, "other", DIM, fresh, tick=2)
    assert await pack_count(store) == 0
    stored = await store.memories(town)
    assert [s.vector.tobytes() for s in stored] == \
        [v.tobytes() for _, _, v in sorted(fresh, key=lambda row: row[0])]
    await store.close()


@pytest.mark.parametrize("damage", [
    "UPDATE memory_packs SET data = substr(data, 1, length(data) - 1)",
    "UPDATE memory_packs SET head = '{\"parts\": 3}'",
    "UPDATE memory_packs SET texts = texts || 'x'",
    "UPDATE memory_packs SET data = zeroblob(length(data))",
])
async def test_a_damaged_pack_is_passed_over_for_its_rows(tmp_path, monkeypatch, damage):
    monkeypatch.setattr(database, "MEMORY_CHUNK", 4)
    rows = written(12)
    store, town = await town_with(tmp_path, rows)
    from_rows = await streams(store, town)
    await store.pack_memories()
    await store.db.execute(damage)
    assert_same(await streams(store, town), from_rows)
    await store.close()


async def test_rows_out_of_order_are_not_packed_and_still_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(database, "MEMORY_CHUNK", 6)
    store, town = await town_with(tmp_path, written(12))
    await store.db.execute("UPDATE memories SET seq = 5 WHERE id = 4")
    assert await store.pack_memories() == 1, "the second chunk only"
    await store.save_tick(TickChanges(town, 2, new_memories=[
        ("Dee", Memory(0, "plan", "later", NINE, NINE, 1), embedding("sparse", 1))]))
    assert await store.pack_memories() == 1, "the third chunk so far"
    with pytest.raises(StoreError, match="not stored in order"):
        await store.memories(town)
    await store.close()


@pytest.mark.parametrize("chunk", [4, 7])
async def test_a_hashing_towns_packs_keep_its_embeddings(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(database, "MEMORY_CHUNK", chunk)
    rows = [(a, m, embedding("sparse" if i % 9 else "signed", i))
            for i, (a, m, _) in enumerate(written(30))]
    store, town = await town_with(tmp_path, rows)
    from_rows = await streams(store, town)
    assert await store.pack_memories() == await pack_count(store, sparse=True) == -(-30 // chunk)
    assert_same(await streams(store, town), from_rows)
    await store.close()


async def latest(store: Store, town: int) -> dict:
    return {agent: (logged.seqs.tolist(), logged.times, logged.importance.tolist())
            for agent, logged in (await store._latest_accesses(town, "", (town,))).items()}


async def test_accesses_packed_at_close_read_back_as_the_log_does(tmp_path, monkeypatch):
    monkeypatch.setattr(database, "MEMORY_CHUNK", 4)
    rows = written(30)
    store, town = await town_with(tmp_path, rows)
    for tick, agent in enumerate(["Bob", "Cy", "Bob", "Ann"], 2):
        await touch(store, town, rows, tick, agent, 10 * tick)
    from_log = await latest(store, town)
    streams_from_log = await streams(store, town)
    await store.close()
    store = await Store.open(tmp_path / "town.db")
    async with store.db.execute("SELECT upto, (SELECT max(id) FROM memory_access) FROM "
                                "access_packs") as cursor:
        assert [tuple(row) for row in await cursor.fetchall()] == [(4, 4)]  # a row a tick
    assert await latest(store, town) == from_log
    assert_same(await streams(store, town), streams_from_log)
    changes = store.db.total_changes
    assert await store.pack_memories() == 0 and await store.pack_accesses() is None
    assert store.db.total_changes == changes, "packs up to date: nothing written"
    await touch(store, town, rows, 7, "Cy", 90)  # logged after the pack: read over it
    await store.save_tick(TickChanges(town, 8, compact=True))  # drops only overridden rows
    after = await latest(store, town)
    await store.db.execute("DELETE FROM access_packs")
    assert after == await latest(store, town)
    assert [s.memory for s in await store.memories(town, "Cy")] == [m for a, m, _ in rows if a == "Cy"]
    await store.close()


@pytest.mark.parametrize("damage", [
    "UPDATE access_packs SET data = substr(data, 1, length(data) - 1)",
    "UPDATE access_packs SET head = '{\"agents\": [[\"Bob\", 1]], \"times\": []}'",
    "UPDATE access_packs SET data = zeroblob(length(data))",
])
async def test_a_damaged_access_pack_is_passed_over_for_the_log(tmp_path, damage):
    rows = written(12)
    store, town = await town_with(tmp_path, rows)
    await touch(store, town, rows, 2, "Bob", 20)
    await touch(store, town, rows, 3, "Bob", 30)
    from_log = await latest(store, town)
    await store.close()
    store = await Store.open(tmp_path / "town.db")
    await store.db.execute(damage)
    assert await latest(store, town) == from_log
    await store.close()
