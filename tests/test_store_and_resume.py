"""The store: migrations, WAL, one atomic transaction per tick, resume, and a killed process."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, open_engine

from townbot.mind.memory import Memory, MemoryStream
from townbot.store import database
from townbot.store.database import Store, StoreError
from townbot.store.migrations import MIGRATIONS, migrate


async def test_new_database_is_migrated_to_the_latest_version_in_wal_mode(tmp_path):
    store = await Store.open(tmp_path / "fresh.db")
    assert await store.schema_version() == len(MIGRATIONS)
    async with store.db.execute("PRAGMA journal_mode") as cursor:
        assert (await cursor.fetchone())[0] == "wal"
    await migrate(store.db, store.path)  # migrating twice changes nothing
    assert await store.schema_version() == len(MIGRATIONS)
    await store.close()


async def test_a_database_from_a_newer_townbot_is_refused(tmp_path):
    path = tmp_path / "future.db"
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(StoreError, match="newer than this townbot"):
        await Store.open(path)


async def test_resume_continues_where_the_last_run_stopped(world, tmp_path):
    db = tmp_path / "town.db"
    first = await open_engine(world, db)
    for _ in range(8):
        await first.tick()
    memories = {name: len(mind.stream) for name, mind in first.minds.items()}
    bodies = {name: body.to_dict() for name, body in first.bodies.items()}
    objects = dict(first.objects)
    now = first.clock.now
    await first.store.close()

    second = await open_engine(world, db)
    assert second.clock.now == now
    assert {n: len(m.stream) for n, m in second.minds.items()} == memories
    assert {n: b.to_dict() for n, b in second.bodies.items()} == bodies
    assert second.objects == objects
    await second.tick()
    assert (await second.store.town()).tick == 9
    await second.store.close()


async def test_a_resumed_memory_stream_is_the_one_that_was_saved(world, tmp_path, monkeypatch):
    """Resuming reads memories a chunk at a time into each stream's arrays: the streams equal
    those of the run that saved them, and those made by adding every stored memory one by one,
    also when chunks split one resident's memories (here 3 rows per chunk)."""
    db = tmp_path / "town.db"
    first = await open_engine(world, db)
    for _ in range(6):
        await first.tick()
    saved = {name: mind.stream for name, mind in first.minds.items()}
    one_by_one = {name: MemoryStream(stream.dim) for name, stream in saved.items()}
    for stored in await first.store.memories(first.town.id):
        m = stored.memory
        one_by_one[stored.agent].add(m.kind, m.text, m.created, m.importance, stored.vector,
                                     m.evidence, last_accessed=m.last_accessed)
    await first.store.close()

    monkeypatch.setattr(database, "MEMORY_CHUNK", 3)
    second = await open_engine(world, db)
    for name, stream in second.minds.items():
        resumed = stream.stream
        assert len(resumed) > 3
        for expected in (saved[name], one_by_one[name]):
            assert resumed.memories == expected.memories
            for ours, theirs in zip(resumed.arrays(), expected.arrays(), strict=True):
                assert np.array_equal(ours, theirs)
            assert np.array_equal(resumed.kind_mask(("plan", "reflection")),
                                  expected.kind_mask(("plan", "reflection")))
            assert all(resumed.latest_with(m.text) == expected.latest_with(m.text)
                       for m in expected.memories)
        assert resumed.take_changes() == ([], []), "nothing read back counts as new"
    await second.store.close()


def test_stored_memories_extend_a_stream_as_adding_them_one_by_one_would():
    """Bulk appends across the arrays' doubling give the same stream as single adds."""
    random = np.random.default_rng(0)
    start = datetime(2023, 2, 13, 7, 0)
    kinds = ("observation", "plan", "reflection", "conversation", "thought")
    rows = [(kinds[i % 5], f"memory {i % 150}", start + timedelta(minutes=10 * (i // 3)), 1 + i % 10,
             random.standard_normal(8).astype(np.float32), (i - 1,) if i % 7 == 0 and i else ())
            for i in range(300)]
    one_by_one, in_chunks = MemoryStream(8), MemoryStream(8)
    for kind, text, moment, importance, vector, evidence in rows:
        one_by_one.add(kind, text, moment, importance, vector, evidence)
    one_by_one.take_changes()
    for first in range(0, len(rows), 70):
        chunk = rows[first:first + 70]
        in_chunks.extend_stored([Memory(0, kind, text, moment, moment, importance, evidence)
                                 for kind, text, moment, importance, _, evidence in chunk],
                                np.stack([row[4] for row in chunk]))
    assert in_chunks.memories == one_by_one.memories
    assert in_chunks._capacity == one_by_one._capacity == 512
    for ours, theirs in zip(in_chunks.arrays(), one_by_one.arrays(), strict=True):
        assert np.array_equal(ours, theirs)
    assert in_chunks.latest_with("memory 10") == one_by_one.latest_with("memory 10")
    assert in_chunks.take_changes() == ([], [])
    with pytest.raises(ValueError, match="unknown memory kind 'dream'"):
        in_chunks.extend_stored([Memory(0, "dream", "x", start, start, 1)], np.zeros((1, 8), np.float32))


async def test_a_failed_tick_commits_nothing(world, tmp_path, monkeypatch):
    engine = await open_engine(world, tmp_path / "town.db")
    await engine.tick()
    before = await engine.store.memories(engine.town.id)
    events_before = await engine.store.events(engine.town.id)

    def disk_full(*_args, **_kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(database, "tick_write", disk_full)
    with pytest.raises(sqlite3.OperationalError):
        await engine.tick()
    assert (await engine.store.town()).tick == 1
    assert len(await engine.store.memories(engine.town.id)) == len(before)
    assert len(await engine.store.events(engine.town.id)) == len(events_before)
    await engine.store.close()


def _committed_tick(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as raw:
            row = raw.execute("SELECT tick FROM towns").fetchone()
            return row[0] if row else -1
    except sqlite3.Error:
        return -1


def test_a_process_killed_mid_run_leaves_a_consistent_resumable_town(tmp_path):
    db = tmp_path / "killed.db"
    command = [sys.executable, "-m", "townbot", "sim", "--days", "2", "--db", str(db),
               "--no-transcript"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while _committed_tick(db) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    killed_at = _committed_tick(db)
    assert killed_at >= 5

    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for agent, count, top in raw.execute(
                "SELECT agent, COUNT(*), MAX(seq) FROM memories GROUP BY agent"):
            assert top == count - 1, f"{agent}'s memory ids have a gap"
        assert raw.execute("SELECT COUNT(*) FROM outbox WHERE tick >= ?",
                           (killed_at,)).fetchone()[0] == 0

    resumed = subprocess.run([sys.executable, "-m", "townbot", "sim", "--hours", "1", "--db",
                              str(db), "--no-transcript"], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert _committed_tick(db) == killed_at + 6
