"""What a tick writes, kept small: re-accessed memories are appended to a log (the latest
entry wins, superseded ones are dropped once a game day), long mind parts and embeddings that
shrink are compressed, and a new town uses small pages. All of it reads back exactly."""

from __future__ import annotations

import json
import shutil
import sqlite3
import zlib
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from conftest import open_engine

from townbot.llm.embedding import HashingEmbedder
from townbot.llm.port import UsageRecord
from townbot.mind.memory import Memory
from townbot.store.database import (
    PAGE_SIZE,
    ConversationRecord,
    Store,
    StoreError,
    TickChanges,
)
from townbot.store.memories import pack_vectors, unpack_vectors
from townbot.store.migrations import MIGRATIONS
from townbot.store.towns import PACK_OVER, unpack
from townbot.world.events import TownEvent

NINE, TEN = datetime(2023, 2, 13, 9, 0), datetime(2023, 2, 13, 10, 0)
FIXTURE = Path(__file__).parent / "fixtures" / "town_v2.db"


def rows(db: Path, query: str) -> list[tuple]:
    with sqlite3.connect(db) as raw:
        return raw.execute(query).fetchall()


async def test_a_touched_memory_is_logged_and_the_latest_access_wins(tmp_path):
    db = tmp_path / "town.db"
    store = await Store.open(db)
    town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 4, {}, {})
    memory = Memory(0, "observation", "The stove is on", NINE, NINE, 3)
    await store.save_tick(TickChanges(town.id, 1, new_memories=[
        ("Ann", memory, np.ones(4, dtype=np.float32))]))
    for tick, (when, importance) in enumerate([(NINE, 6), (TEN, 6)], start=2):
        memory.last_accessed, memory.importance = when, importance
        await store.save_tick(TickChanges(town.id, tick, touched=[("Ann", [memory])]))
    assert rows(db, "SELECT last_accessed, importance FROM memories") == \
        [("2023-02-13 09:00", 3)], "the memory's own row is not rewritten"
    assert len(rows(db, "SELECT * FROM memory_access")) == 2
    [loaded] = await store.memories(town.id)
    assert (loaded.memory.last_accessed, loaded.memory.importance) == (TEN, 6)

    await store.save_tick(TickChanges(town.id, 4, compact=True))
    assert rows(db, "SELECT seqs, times, importances FROM memory_access") == \
        [("0", "2023-02-13 10:00", "6")], "compacting keeps only the latest entry of each memory"
    [again] = await store.memories(town.id, "Ann")
    assert again.memory == loaded.memory
    await store.close()


async def test_a_tick_logs_a_row_per_resident_which_reads_back_as_its_memories(tmp_path):
    """Migration 10: a resident's memories touched in a tick share a row (positions,
    times, importances); compacting leaves one row per resident with the latest of each."""
    db = tmp_path / "town.db"
    store = await Store.open(db)
    town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 4, {}, {})
    mine = {name: [Memory(seq, "observation", f"{name} {seq}", NINE, NINE, 3) for seq in range(4)]
            for name in ("Ann", "Bob")}
    await store.save_tick(TickChanges(town.id, 1, new_memories=[
        (name, m, np.ones(4, dtype=np.float32)) for name, memories in mine.items()
        for m in memories]))
    ann, bob = mine["Ann"], mine["Bob"]
    ann[0].last_accessed, ann[2].last_accessed, ann[2].importance = TEN, TEN, 9
    bob[1].importance = 7
    await store.save_tick(TickChanges(town.id, 2, touched=[
        ("Ann", [ann[0], ann[2], ann[3]]), ("Bob", [bob[1]])]))
    ann[2].last_accessed, ann[2].importance = datetime(2023, 2, 13, 11, 0), 4
    await store.save_tick(TickChanges(town.id, 3, touched=[("Ann", [ann[2]])]))
    assert rows(db, "SELECT agent, seqs, times, importances FROM memory_access") == [
        ("Ann", "0, 2, 3", "2023-02-13 10:00\x1f2023-02-13 10:00\x1f2023-02-13 09:00", "3, 9, 3"),
        ("Bob", "1", "2023-02-13 09:00", "7"), ("Ann", "2", "2023-02-13 11:00", "4")]
    expected = [m for name in ("Ann", "Bob") for m in mine[name]]
    assert [s.memory for s in await store.memories(town.id)] == expected
    await store.close()

    store = await Store.open(db)
    bob[3].last_accessed = TEN
    await store.save_tick(TickChanges(town.id, 4, touched=[("Bob", [bob[3]])], compact=True))
    assert rows(db, "SELECT agent, seqs, times, importances FROM memory_access") == [
        ("Ann", "0, 2, 3", "2023-02-13 10:00\x1f2023-02-13 11:00\x1f2023-02-13 09:00", "3, 4, 3"),
        ("Bob", "1, 3", "2023-02-13 09:00\x1f2023-02-13 10:00", "7, 3")]
    assert [s.memory for s in await store.memories(town.id)] == expected
    await store.close()


async def test_migration_11_puts_the_parts_of_a_kind_side_by_side(world, tmp_path):
    db = tmp_path / "town.db"
    engine = await open_engine(world, db)
    await engine.tick()
    await engine.store.close()
    with sqlite3.connect(db) as raw:  # each agent's parts side by side, as before
        raw.execute("CREATE TABLE by_agent AS SELECT * FROM mind_parts ORDER BY agent, part")
        raw.execute("DELETE FROM mind_parts")
        raw.execute("INSERT INTO mind_parts SELECT * FROM by_agent")
        raw.execute("DROP TABLE by_agent")
        raw.execute("ALTER TABLE llm_usage DROP COLUMN cached_tokens")  # added by migration 12
        raw.execute("PRAGMA user_version = 10")
    before = rows(db, "SELECT * FROM mind_parts ORDER BY town_id, agent, part")
    store = await Store.open(db)
    assert await store.schema_version() == len(MIGRATIONS)
    await store.close()
    assert rows(db, "SELECT part, agent FROM mind_parts ORDER BY rowid") == \
        sorted(rows(db, "SELECT part, agent FROM mind_parts"))
    assert rows(db, "SELECT * FROM mind_parts ORDER BY town_id, agent, part") == before


async def test_long_parts_are_stored_compressed_and_read_back_the_same(world, tmp_path):
    engine = await open_engine(world, tmp_path / "town.db")
    for _ in range(3):
        await engine.tick()
    minds = {name: mind.state for name, mind in engine.minds.items()}
    await engine.store.close()
    stored = rows(tmp_path / "town.db", "SELECT agent, part, state FROM mind_parts ORDER BY rowid")
    assert [part for _, part, _ in stored] == sorted(part for _, part, _ in stored), \
        "rows of a kind of part side by side (migration 11)"
    for agent, part, value in stored:
        assert isinstance(value, bytes) == (len(unpack(value)) > PACK_OVER)
        assert {p.name: p for p in minds[agent].parts()}[part].to_dict() == json.loads(unpack(value))
    assert any(isinstance(value, bytes) for _, _, value in stored), "a plan's blocks are long"
    resumed = await open_engine(world, tmp_path / "town.db")
    assert {name: mind.state for name, mind in resumed.minds.items()} == minds
    await resumed.store.close()


async def test_bodies_are_stored_as_json_and_compressed_ones_still_read_back(world, tmp_path):
    engine = await open_engine(world, tmp_path / "town.db")
    await engine.tick()
    bodies = {name: body.to_dict() for name, body in engine.bodies.items()}
    await engine.store.close()
    stored = dict(rows(tmp_path / "town.db", "SELECT agent, body FROM bodies"))
    assert {name: json.loads(text) for name, text in stored.items()} == bodies
    with sqlite3.connect(tmp_path / "town.db") as raw:  # as a town written before stored them
        raw.executemany("UPDATE bodies SET body = ? WHERE agent = ?",
                        [(zlib.compress(text.encode(), 6), name) for name, text in stored.items()])
    resumed = await open_engine(world, tmp_path / "town.db")
    assert {name: body.to_dict() for name, body in resumed.bodies.items()} == bodies
    await resumed.store.close()


async def test_a_new_town_has_small_pages_and_an_old_one_keeps_its_own(world, tmp_path):
    store = await Store.open(tmp_path / "new.db")
    await store.close()
    assert rows(tmp_path / "new.db", "PRAGMA page_size") == [(PAGE_SIZE,)]
    shutil.copy(FIXTURE, tmp_path / "old.db")
    before = rows(tmp_path / "old.db", "PRAGMA page_size")
    engine = await open_engine(world, tmp_path / "old.db")
    await engine.tick()
    await engine.store.close()
    assert rows(tmp_path / "old.db", "PRAGMA page_size") == before == [(4096,)]


def sparse_and_dense(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """A hashing embedder's vector (mostly zeros) and a dense one, as a real model's."""
    sparse = np.asarray(HashingEmbedder(dim).embed(["The stove is on in the kitchen"])[0],
                        dtype=np.float32)
    dense = np.random.default_rng(0).standard_normal(dim).astype(np.float32)
    return sparse, dense


def test_an_embedding_is_packed_only_when_that_pays_and_reads_back_bit_for_bit():
    sparse, dense = sparse_and_dense(256)
    assert len(pack_vectors([sparse])[0]) < 256, "a hashing vector shrinks to a fraction"
    assert pack_vectors([dense])[0] == dense.tobytes(), "a dense vector stays raw"
    signed = np.zeros(256, dtype=np.float32)
    signed[[3, 200]] = -0.0, 0.5
    read = unpack_vectors("Ann", pack_vectors([sparse, dense, signed]), 256)
    assert read.tobytes() == np.stack([sparse, dense, signed]).tobytes()


def test_an_embedding_is_sparse_up_to_three_quarters_of_its_raw_bytes():
    """At 256 dimensions 127 non-zero entries are stored sparse and 128 raw, a zero vector is
    SPARSE alone, -0.0 is kept."""
    edge = [np.zeros(256, dtype=np.float32) for _ in range(3)]
    edge[0][:127], edge[1][:128], edge[2][7] = 1.5, 1.5, -0.0
    batch = [*edge, np.zeros(256, dtype=np.float32)]
    packed = pack_vectors(batch)
    assert [len(blob) for blob in packed] == [1 + 6 * 127, 4 * 256, 1 + 6, 1]
    assert packed[-1] == b"s"
    assert unpack_vectors("Ann", packed, 256).tobytes() == np.stack(batch).tobytes()


async def test_embeddings_zlib_packed_by_the_first_schema_5_read_back(tmp_path):
    store = await Store.open(tmp_path / "town.db")
    town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 256, {}, {})
    sparse, _ = sparse_and_dense(256)
    await store.save_tick(TickChanges(town.id, 1, new_memories=[
        ("Ann", Memory(0, "observation", "The stove is on", NINE, NINE, 3), sparse)]))
    await store.db.execute("UPDATE memories SET embedding = ?", (zlib.compress(sparse.tobytes()),))
    [stored] = await store.memories(town.id)
    assert stored.vector.tobytes() == sparse.tobytes()
    await store.close()


async def test_packed_embeddings_read_back_as_the_very_floats_written(tmp_path):
    store = await Store.open(tmp_path / "town.db")
    town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 256, {}, {})
    sparse, dense = sparse_and_dense(256)
    await store.save_tick(TickChanges(town.id, 1, new_memories=[
        ("Ann", Memory(0, "observation", "The stove is on", NINE, NINE, 3), sparse),
        ("Ann", Memory(1, "observation", "Bob is here", NINE, NINE, 2), dense)]))
    first, second = await store.memories(town.id)
    assert first.vector.tobytes() == sparse.tobytes() and second.vector.tobytes() == dense.tobytes()
    await store.close()
    assert [kind for (kind,) in rows(tmp_path / "town.db", "SELECT length(embedding) < 1024 "
                                     "FROM memories ORDER BY seq")] == [1, 0]


async def test_a_damaged_embedding_is_a_clear_error(tmp_path):
    store = await Store.open(tmp_path / "town.db")
    town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 4, {}, {})
    await store.save_tick(TickChanges(town.id, 1, new_memories=[
        ("Ann", Memory(0, "observation", "The stove is on", NINE, NINE, 3),
         np.ones(4, dtype=np.float32))]))
    await store.db.execute("UPDATE memories SET embedding = x'0102'")
    with pytest.raises(StoreError, match="embeddings that are not 4 numbers: the database is "
                                         "damaged"):
        await store.memories(town.id)
    await store.close()


def town_of_schema_4(db: Path, vectors: dict[tuple[str, int], np.ndarray]) -> None:
    """A town as townbot wrote it at schema 4: raw embeddings, memories in the order given,
    bodies in the agents rows, one logged access."""
    with sqlite3.connect(db) as raw:
        for script in MIGRATIONS[:4]:
            raw.executescript(script)
        raw.execute("PRAGMA user_version = 4")
        raw.execute("INSERT INTO towns (id, name, start, tick_minutes, model, embedding_model, "
                    "embedding_dim) VALUES (1, 'T', '2023-02-13 07:00', 10, 'm', 'e', 256)")
        for name in ("Ann", "Bob"):
            raw.execute("INSERT INTO agents VALUES (1, ?, ?, '{}')",
                        (name, f'{{"sector": "{name}\'s house"}}',))
        raw.executemany("INSERT INTO memories (town_id, agent, seq, kind, text, created, "
                        "last_accessed, importance, embedding) VALUES (1, ?, ?, 'observation', "
                        "?, '2023-02-13 09:00', '2023-02-13 09:00', 3, ?)",
                        [(agent, seq, f"{agent} saw {seq}", vector.tobytes())
                         for (agent, seq), vector in vectors.items()])
        raw.execute("INSERT INTO memory_access (town_id, agent, seq, last_accessed, importance) "
                    "VALUES (1, 'Ann', 1, '2023-02-13 10:00', 8)")


async def test_a_town_of_schema_4_is_carried_forward_whole(tmp_path):
    """Migrations 5 and 6: the raw embeddings written before read back as they were, beside
    packed ones written after; memories keep each agent's order without their index; bodies
    move to their own table."""
    db = tmp_path / "town.db"
    sparse, dense = sparse_and_dense(256)
    written = {("Bob", 0): dense, ("Ann", 0): sparse, ("Ann", 1): dense, ("Bob", 1): sparse}
    town_of_schema_4(db, written)

    store = await Store.open(db)
    assert await store.schema_version() == len(MIGRATIONS) >= 7
    stored = await store.memories(1)
    assert [(s.agent, s.memory.id, s.memory.text, s.vector.tobytes()) for s in stored] == [
        (agent, seq, f"{agent} saw {seq}", written[agent, seq].tobytes())
        for agent, seq in sorted(written)]
    assert (stored[1].memory.last_accessed, stored[1].memory.importance) == (TEN, 8)
    assert {name: body for name, (body, _) in (await store.agents(1)).items()} == \
        {"Ann": {"sector": "Ann's house"}, "Bob": {"sector": "Bob's house"}}

    await store.save_tick(TickChanges(1, 2, bodies={"Ann": '{"sector": "Cafe"}'}, new_memories=[
        ("Ann", Memory(2, "observation", "Bob is here", TEN, TEN, 2), sparse)]))
    assert (await store.agents(1))["Ann"][0] == {"sector": "Cafe"}
    assert [(s.memory.id, s.vector.tobytes()) for s in await store.memories(1, "Ann")] == \
        [(0, sparse.tobytes()), (1, dense.tobytes()), (2, sparse.tobytes())]
    await store.close()
    assert rows(db, "PRAGMA index_list(memories)") == [], "no index for a tick to rewrite"
    assert rows(db, "SELECT length(embedding) FROM memories WHERE seq = 2") == \
        [(len(pack_vectors([sparse])[0]),)]


async def test_memories_stored_out_of_order_are_a_clear_error(tmp_path):
    store = await Store.open(tmp_path / "town.db")
    town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 4, {}, {})
    await store.save_tick(TickChanges(town.id, 1, new_memories=[
        ("Ann", Memory(seq, "observation", f"seen {seq}", NINE, NINE, 3),
         np.ones(4, dtype=np.float32)) for seq in (0, 1)]))
    await store.db.execute("UPDATE memories SET seq = 5 WHERE seq = 0")
    with pytest.raises(StoreError, match="memories of Ann in .* are not stored in order"):
        await store.memories(town.id)
    await store.close()


async def test_usage_records_are_stored_in_order(tmp_path):
    """A usage write, however long its backlog, stores every record in order."""
    store = await Store.open(tmp_path / "town.db")
    try:
        town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 8, {}, {})
        for count in (1, 3, 1007):
            await store.add_usage(town.id, [
                (index, UsageRecord("react", f"agent {index}", 1, "m", index, 2, False, 1.5, "ok"))
                for index in range(count)])
        await store.add_usage(town.id, [])
        stored = await store.usage_rows(town.id)
    finally:
        await store.close()
    assert [(row["tick"], row["agent"], row["prompt_tokens"]) for row in stored] == [
        (index, f"agent {index}", index) for count in (1, 3, 1007)
        for index in range(count)]



async def test_a_tick_is_written_whole_and_a_failure_in_it_writes_nothing(tmp_path):
    db = tmp_path / "town.db"
    store = await Store.open(db)
    town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 4, {}, {})
    memory = Memory(0, "observation", "The stove is on", NINE, NINE, 3)
    talk = ConversationRecord("2023-02-13 09:00", "2023-02-13 09:10", "Cafe", "bar", ("Ann", "Bo"),
                              (("Ann", "Hi", "2023-02-13 09:00"), ("Bo", "Hello", "2023-02-13 09:10")))
    await store.save_tick(TickChanges(town.id, 1, new_memories=[
        ("Ann", memory, np.ones(4, dtype=np.float32))], conversations=[talk, talk],
        events=[TownEvent("2023-02-13 09:00", "cafe", "speech", "Ann", "Hi")]))
    assert rows(db, "SELECT conversation_id, seq, text FROM utterances") == \
        [(1, 0, "Hi"), (1, 1, "Hello"), (2, 0, "Hi"), (2, 1, "Hello")]

    # A text SQLite cannot take fails the tick after its first statements ran: they are
    # rolled back, and the next tick is written whole.
    memory.last_accessed = TEN
    with pytest.raises(UnicodeEncodeError):
        await store.save_tick(TickChanges(town.id, 2, touched=[("Ann", [memory])], events=[
            TownEvent("2023-02-13 10:00", "cafe", "speech", "Ann", "lone \ud800")]))
    assert not store.db.in_transaction
    assert rows(db, "SELECT tick FROM towns") == [(1,)]
    assert rows(db, "SELECT count(*) FROM memory_access") == [(0,)]
    assert rows(db, "SELECT count(*) FROM outbox") == [(1,)]
    await store.save_tick(TickChanges(town.id, 2, touched=[("Ann", [memory])]))
    [loaded] = await store.memories(town.id)
    assert loaded.memory.last_accessed == TEN and rows(db, "SELECT tick FROM towns") == [(2,)]
    await store.close()
