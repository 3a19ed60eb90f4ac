"""The Store: every read and write of a town's database goes through here. Its parts live by
what they keep: the schema and its migrations (store/migrations.py), the town, its residents
and its posts (store/towns.py), usage and audit rows (store/usage.py), what one commit writes
(store/ticks.py), and memories (store/memories.py). The store keeps what it is given: minds and bodies come
as JSON made by their own modules."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable
from operator import itemgetter
from pathlib import Path

import aiosqlite
import numpy as np

from townbot.llm.port import UsageRecord
from townbot.store.disk import (
    check_database_file,
    check_townbot_schema,
    os_write_error,
    read_only_uri,
    remove_database_files,
    schema_version,
    sqlite_write_error,
)
from townbot.store.errors import StoreError
from townbot.store.memories import (
    ACCESS_INSERT,
    MEMORY_INSERT,
    MemoryChunk,
    StoredMemory,
    access_rows,
    compact_accesses,
    memory_chunks,
    memory_rows,
    write_embeddings,
)
from townbot.store.migrations import check_version, migrate
from townbot.store.ticks import ConversationRecord, TickChanges, TickWrite, begin_writing
from townbot.store.towns import (
    TOWN_FLAGS,
    VISITOR_UPSERT,
    TownRow,
    TownTables,
    VisitorRow,
    conversations,
    pack,
)
from townbot.store.usage import AUDIT_INSERT, USAGE_INSERT, AuditEntry, UsageLog, UsageTables, usage_values
from townbot.store.writer_lock import WriterLock

__all__ = ["AuditEntry", "ConversationRecord", "Store", "StoreError", "TickChanges", "TickWrite",
           "TownRow", "UsageLog", "VisitorRow", "conversations", "replace_embeddings"]

# A commit writes whole pages to the WAL (and again at checkpoint), and a tick changes many
# small rows on different pages (a part of a mind here, an index entry there): 1 KiB pages
# write a quarter of the bytes 4 KiB pages do for each of them. Towns made before keep theirs.
PAGE_SIZE = 1024
# The WAL is copied into the database (checkpointed) when it holds this many bytes of pages
# rather than SQLite's default 1000 pages: a page rewritten by many ticks in between (a mind
# part, a body, an index leaf) is copied once (benchmarks/speed.py measures the bytes
# written). A longer WAL costs readers and recovery next to nothing; its file goes at close.
WAL_BYTES = 32 * 2**20


def tick_write(changes: TickChanges, records: list[tuple[int, UsageRecord]]) -> TickWrite:
    """The statements and rows of one tick's commit, the usage `records` (tick, record) first."""
    town, write = changes.town_id, TickWrite()
    write.many(USAGE_INSERT, usage_values(town, records))
    write.one("UPDATE towns SET tick = ? WHERE id = ?", (changes.next_tick, town))
    write.many("UPDATE bodies SET body = ? WHERE town_id = ? AND agent = ?",
               [(body, town, name) for name, body in changes.bodies.items()])
    # in order of part, as the rows are kept (see migration 11): new ones join their kind
    write.many("INSERT INTO mind_parts (town_id, agent, part, state) VALUES (?, ?, ?, ?) "
               "ON CONFLICT (town_id, agent, part) DO UPDATE SET state = excluded.state",
               [(town, agent, part, pack(state)) for agent, part, state
                in sorted(changes.mind_parts, key=itemgetter(1))])
    write.many(MEMORY_INSERT, memory_rows(town, changes.new_memories))
    write.many(ACCESS_INSERT, access_rows(town, changes.touched))
    if changes.compact:
        write.steps.append(lambda db: compact_accesses(db, town))
    write.many("INSERT INTO objects (town_id, path, state, updated) VALUES (?, ?, ?, ?) "
               "ON CONFLICT (town_id, path) DO UPDATE SET state = excluded.state, "
               "updated = excluded.updated",
               [(town, path, state, when) for path, (state, when) in changes.objects.items()])
    write.many("INSERT INTO outbox (town_id, tick, game_time, channel, kind, actor, text, emoji, "
               "place) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               [(town, changes.tick, e.game_time, e.channel, e.kind, e.actor, e.text, e.emoji,
                 e.place) for e in changes.events])
    for talk in changes.conversations:
        write.conversation(town, talk)
    write.many(VISITOR_UPSERT, [visitor.row(town) for visitor in changes.visitors])
    write.many("UPDATE visitors SET left_at = ? WHERE town_id = ? AND person_id = ?",
               [(when, town, person) for person, when in changes.departed])
    write.many(USAGE_INSERT, usage_values(town, [(changes.tick, u) for u in changes.usage]))
    for column, value in changes.flags.items():
        assert column in TOWN_FLAGS, column
        write.one(f"UPDATE towns SET {column} = ? WHERE id = ?", (value, town))
    write.many(AUDIT_INSERT, [entry.row(town) for entry in changes.audits])
    return write


class Store(TownTables, UsageTables):
    def __init__(self, connection: aiosqlite.Connection, path: str) -> None:
        self.db = connection
        self.path = path
        self.lock: WriterLock | None = None
        self.created = False  # this store's open made the database file
        # One connection: a usage write must never start inside a tick's open transaction.
        self._writing = asyncio.Lock()
        self._logs: list[UsageLog] = []

    @classmethod
    async def open(cls, path: str | Path, *, read_only: bool = False) -> Store:
        """Open a town's database to write it, holding its one-writer lock, or `read_only`
        (no lock, no migration, nothing created: the one way every reader opens a town, which
        must be at this townbot's schema). A file that is not a townbot database is refused
        without being touched."""
        path = str(path)
        lock = None
        new = path != ":memory:" and not Path(path).exists()
        if path != ":memory:":
            check_database_file(path, must_exist=read_only)
            if not read_only:
                try:
                    Path(path).parent.mkdir(parents=True, exist_ok=True)
                except OSError as error:
                    raise os_write_error(error, path, Path(path).parent) from None
                lock = WriterLock(path).acquire()
        try:
            connection = await cls._connect(path, read_only)
        except BaseException as error:
            if lock is not None:
                refused = isinstance(error, StoreError)
                if refused and new:  # a town that could not even be opened leaves no file
                    remove_database_files(path)
                lock.release(refused=refused)
            raise
        store = cls(connection, path)
        store.lock, store.created = lock, new
        return store

    @staticmethod
    async def _connect(path: str, read_only: bool) -> aiosqlite.Connection:
        target = read_only_uri(Path(path)) if read_only else path
        try:
            connection = await aiosqlite.connect(target, isolation_level=None, uri=read_only)
        except sqlite3.Error as error:
            raise StoreError(f"{path} cannot be opened: {error}") from error
        try:
            connection.row_factory = aiosqlite.Row
            await check_townbot_schema(connection, path)
            if not read_only:
                # Only a new database takes it; see PAGE_SIZE.
                await connection.execute(f"PRAGMA page_size={PAGE_SIZE}")
                await connection.execute("PRAGMA journal_mode=WAL")
                await connection.execute("PRAGMA synchronous=NORMAL")
                async with connection.execute("PRAGMA page_size") as cursor:
                    page_size = (await cursor.fetchone())[0]
                await connection.execute(f"PRAGMA wal_autocheckpoint={WAL_BYTES // page_size}")
            await connection.execute("PRAGMA foreign_keys=ON")
            await (check_version(connection, path) if read_only else migrate(connection, path))
        except sqlite3.DatabaseError as error:
            await connection.close()  # else aiosqlite's thread keeps the process alive
            refused = sqlite_write_error(error, path)
            if refused is not None:
                raise refused from error
            raise StoreError(f"{path} is not a townbot database ({error}); give --db another "
                             "file") from error
        except BaseException:
            await connection.close()
            raise
        return connection

    async def close(self, *, refused: bool = False) -> None:
        """Close the town. `refused`: its founding failed (a full disk, the file-size limit),
        and a database file this store made goes with its lock, as if never asked for."""
        try:
            for log in self._logs:
                await log.flush()
        except (sqlite3.Error, StoreError):
            pass  # the town's own commits already said what failed; closing must still close
        finally:
            await self._close(refused)

    async def _close(self, refused: bool = False) -> None:
        try:
            if self.lock is not None:
                # A writer leaves its town in rollback-journal mode: a reader of a town in WAL
                # mode creates the -wal and -shm files, and readers must never create files.
                # With a reader still attached this fails, and the town (still sound) stays in
                # WAL mode until the next writer.
                with contextlib.suppress(sqlite3.Error):
                    await self.db.execute("PRAGMA journal_mode=DELETE")
            await self.db.close()
        finally:
            if self.lock is not None:
                if refused and self.created:
                    remove_database_files(self.path)
                self.lock.release(refused=refused)
                self.lock = None

    async def schema_version(self) -> int:
        return await schema_version(self.db)

    # --- writing ----------------------------------------------------------------------------

    async def run(self, write: TickWrite) -> None:
        """Run `write` as one transaction, one write at a time. A cancelled caller stops
        waiting for it, but the write runs to its end first (its statements must not mix with
        the next write's), so `write.committed` then says whether it committed."""
        try:
            async with self._writing:
                task = asyncio.ensure_future(begin_writing(lambda: write.run(self.db)))
                try:
                    await asyncio.shield(task)  # refused at BEGIN: nothing ran
                except asyncio.CancelledError:
                    while not task.done():  # it ends before another write may begin
                        with contextlib.suppress(asyncio.CancelledError):
                            await asyncio.wait([task])
                    raise
        except BaseException as error:
            refused = sqlite_write_error(error, self.path)
            if refused is None:
                raise
            raise refused from error

    async def write_now(self, statement: str, rows: list[tuple]) -> None:
        """Rows of one statement in a transaction of their own (none: nothing to do)."""
        if not rows:
            return
        write = TickWrite()
        write.many(statement, rows)
        await self.run(write)

    def usage_log(self, town_id: int, tick: Callable[[], int]) -> UsageLog:
        """A sink for a town's usage records, written as calls complete (see UsageLog)."""
        log = UsageLog(self, town_id, tick)
        self._logs.append(log)
        return log

    async def add_usage(self, town_id: int, records: list[tuple[int, UsageRecord]]) -> None:
        await self.write_now(USAGE_INSERT, usage_values(town_id, records))

    async def add_audits(self, town_id: int, entries: list[AuditEntry]) -> None:
        """Audit rows in one transaction of their own, for a use case that changed nothing (a
        change commits its audit rows with it: TickChanges.audits)."""
        await self.write_now(AUDIT_INSERT, [entry.row(town_id) for entry in entries])

    async def create_town(self, name: str, start: str, tick_minutes: int, seed: int, model: str,
                          embedding_model: str, embedding_dim: int,
                          agents: dict[str, tuple[dict, dict]],
                          objects: dict[str, str]) -> TownRow:
        founded: list[int] = []

        async def found(db: aiosqlite.Connection) -> None:
            cursor = await db.execute(
                "INSERT INTO towns (name, start, tick_minutes, seed, model, embedding_model, "
                "embedding_dim) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (name, start, tick_minutes, seed, model, embedding_model, embedding_dim))
            town_id = cursor.lastrowid
            founded.append(town_id)
            await db.executemany(
                "INSERT INTO agents (town_id, name, body, mind) VALUES (?, ?, ?, ?)",
                [(town_id, n, json.dumps(b), pack(json.dumps(m))) for n, (b, m) in agents.items()])
            await db.executemany(
                "INSERT INTO bodies (town_id, agent, body) VALUES (?, ?, ?)",
                [(town_id, n, json.dumps(b)) for n, (b, _) in agents.items()])
            await db.executemany(
                "INSERT INTO objects (town_id, path, state, updated) VALUES (?, ?, ?, ?)",
                [(town_id, path, state, start) for path, state in objects.items()])
        write = TickWrite()
        write.steps.append(found)
        await self.run(write)
        town = await self.town(founded[0])
        assert town is not None
        return town

    async def save_tick(self, changes: TickChanges, usage: UsageLog | None = None) -> None:
        """Commit one tick atomically: a crash before COMMIT leaves the previous tick intact.
        The usage records `usage` has not written yet join the tick's transaction; if it does
        not commit, they are written in one of their own, so a failed tick still keeps what
        its calls cost."""
        records = usage.take() if usage is not None else []
        write = None
        try:
            write = tick_write(changes, records)
            await self.run(write)
        except BaseException:
            if usage is not None and records and (write is None or not write.committed):
                usage.give_back(records)
                with contextlib.suppress(sqlite3.Error, StoreError):  # the tick's error is raised
                    await usage.flush()
            raise

    # --- memories ---------------------------------------------------------------------------

    async def memories(self, town_id: int, agent: str | None = None) -> list[StoredMemory]:
        """A town's memories by agent, then position."""
        stored = [StoredMemory(chunk.agent, memory, vector)
                  async for chunk in self.memory_chunks(town_id, agent)
                  for memory, vector in zip(chunk.memories, chunk.vectors, strict=True)]
        return sorted(stored, key=lambda one: one.agent)  # stable: positions stay in order

    def memory_chunks(self, town_id: int, agent: str | None = None) -> AsyncIterator[MemoryChunk]:
        return memory_chunks(self.db, self.path, town_id, agent)


async def replace_embeddings(store: Store, town_id: int, embedding_model: str, embedding_dim: int,
                             vectors: list[tuple[str, int, np.ndarray]], tick: int,
                             usage: Iterable[UsageRecord] = ()) -> None:
    """Give every listed memory (agent, seq) a new vector and the town its new embedding model,
    with the usage that re-embedding cost, in one transaction: all of it or none."""
    write = TickWrite()
    write.steps.append(lambda db: write_embeddings(db, town_id, vectors))
    write.one("UPDATE towns SET embedding_model = ?, embedding_dim = ? WHERE id = ?",
              (embedding_model, embedding_dim, town_id))
    write.many(USAGE_INSERT, usage_values(town_id, [(tick, u) for u in usage]))
    await store.run(write)
