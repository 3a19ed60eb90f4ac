"""The Store: every read and write of a town's database goes through here."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import zlib
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from operator import itemgetter
from pathlib import Path
from typing import Any

import aiosqlite
import numpy as np

from townbot.llm.port import UsageRecord
from townbot.mind.state import LogRow, apply_logs
from townbot.store.begin import begin_writing
from townbot.store.disk import os_write_error, sqlite_write_error
from townbot.store.errors import StoreError
from townbot.store.memories import (
    ACCESS_INSERT,
    MEMORY_INSERT,
    Memory,
    MemoryChunk,
    StoredMemory,
    access_rows,
    compact_accesses,
    memory_chunks,
    memory_rows,
    write_embeddings,
)
from townbot.store.migrations import MIGRATIONS
from townbot.store.writer_lock import WriterLock
from townbot.world.events import TownEvent

SQLITE_HEADER = b"SQLite format 3\x00"
# A commit writes whole pages to the WAL (and again at checkpoint), and a tick changes many
# small rows on different pages (a part of a mind here, an index entry there): 1 KiB pages
# write a quarter of the bytes 4 KiB pages do for each of them. Towns made before keep theirs.
PAGE_SIZE = 1024
# A mind part, a part's log row (or a mind as founded) longer than this is stored
# zlib-compressed: a day's plan is 5-25 kB of JSON that shrinks four- to sixfold. Below it,
# compressing costs more than it saves: zlib took 15-50 us a row in a tick, and writing the
# bytes it saved 1-2 us (100 residents: about 80 rows of 0.5-2 kB a tick, 2 ms of zlib).
PACK_OVER = 2048
# zlib's fastest level: on the rows a tick compresses (plans and plan log rows of 2-25 kB) it
# takes about 60% of level 6's CPU, for a sixth more bytes (+0.1 MB written a game day at 25
# residents). Any level reads back the same.
PACK_LEVEL = 1
# The WAL is copied into the database (checkpointed) when it holds this many bytes of pages
# rather than SQLite's default 1000 pages: a page rewritten by many ticks in between (a mind
# part, a body, an index leaf) is copied once. 8 MiB instead of 1 MiB cut a 25-resident
# town's writes by about a tenth; 32 MiB cuts them from 16.1 to 14.3 MB a game day now that
# bodies and small mind parts are stored uncompressed (benchmarks/speed.py --days 7). A longer
# WAL costs readers and recovery next to nothing; its file, up to this size, goes at close.
WAL_BYTES = 32 * 2**20


def pack(text: str) -> str | bytes:
    """A part's JSON as stored: compressed (a BLOB) when long, else as it is."""
    return zlib.compress(text.encode(), PACK_LEVEL) if len(text) > PACK_OVER else text


def unpack(value: str | bytes) -> str:
    return zlib.decompress(value).decode() if isinstance(value, bytes) else value


def check_database_file(path: str, *, must_exist: bool) -> None:
    """Refuse, before SQLite touches it, a path that is a folder, unreadable or not SQLite."""
    file = Path(path)
    if not file.exists():
        if must_exist:
            raise StoreError(f"{path} does not exist; give the --db of a town (made by "
                             "`townbot sim` or `townbot run`)")
        return
    if file.is_dir():
        raise StoreError(f"{path} is a folder, not a database file; give a file path to --db")
    try:
        with file.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as error:
        raise StoreError(f"{path} cannot be read ({error.strerror}); check its permissions") \
            from error
    if header and header != SQLITE_HEADER:
        raise StoreError(f"{path} is not a townbot database (not an SQLite file); it was left "
                         "untouched; give --db another file")


def remove_database_files(path: str) -> None:
    """A database this process created and could not found a town in, with SQLite's files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            Path(path + suffix).unlink(missing_ok=True)


async def check_townbot_schema(connection: aiosqlite.Connection, path: str) -> None:
    """An SQLite file that has tables but no townbot schema belongs to something else."""
    async with connection.execute("PRAGMA user_version") as cursor:
        version = (await cursor.fetchone())[0]
    async with connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'") as cursor:
        tables = {row[0] for row in await cursor.fetchall()}
    if tables and (version == 0 or "towns" not in tables):
        raise StoreError(f"{path} is an SQLite database of something else (no townbot tables); "
                         "it was left untouched; give --db another file")


@dataclass(frozen=True)
class TownRow:
    id: int
    name: str
    start: str
    tick_minutes: int
    tick: int
    seed: int
    model: str
    embedding_model: str
    embedding_dim: int
    paused: bool = False
    tick_seconds: float = 10.0


@dataclass(frozen=True)
class VisitorRow:
    person_id: str
    name: str
    description: str
    body: dict
    resident: str | None = None  # the resident this person has taken over, if any


@dataclass(frozen=True)
class AuditEntry:
    at: str  # real time, UTC ISO
    game_time: str
    person_id: str
    person_name: str
    role: str
    use_case: str
    arguments: dict
    outcome: str  # ok | refused | error
    detail: str = ""


@dataclass(frozen=True)
class ConversationRecord:
    started: str
    ended: str
    sector: str
    arena: str
    participants: tuple[str, ...]
    utterances: tuple[tuple[str, str, str], ...]  # (speaker, text, game time)


@dataclass
class TickChanges:
    """Everything one tick changed; written in one transaction."""

    town_id: int
    next_tick: int
    bodies: dict[str, str] = field(default_factory=dict)  # name -> body as JSON (changed ones)
    mind_parts: list[tuple[str, str, str]] = field(default_factory=list)  # (agent, part, JSON)
    logged: list[tuple[str, str, LogRow]] = field(default_factory=list)  # (agent, part, row)
    # (agent, part, n) where each logged part's log starts, given when compacting
    log_starts: list[tuple[str, str, int]] = field(default_factory=list)
    new_memories: list[tuple[str, Memory, np.ndarray]] = field(default_factory=list)
    touched: list[tuple[str, list[Memory]]] = field(default_factory=list)  # by agent
    objects: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (state, time)
    events: list[TownEvent] = field(default_factory=list)
    usage: list[UsageRecord] = field(default_factory=list)
    conversations: list[ConversationRecord] = field(default_factory=list)
    visitors: list[VisitorRow] = field(default_factory=list)
    departed: list[tuple[str, str]] = field(default_factory=list)  # (person id, game time)
    tick: int = 0
    compact: bool = False  # also drop the superseded rows of memory_access (once a game day)
    # the audit rows of the use case this commit carries out, written in its transaction
    audits: list[AuditEntry] = field(default_factory=list)
    flags: dict[str, Any] = field(default_factory=dict)  # towns columns set: paused, tick_seconds


class TickWrite:
    """The statements of one commit with their rows, made on the event loop and run in the
    database's thread as one call (`run`: BEGIN IMMEDIATE, each statement, COMMIT; ROLLBACK
    on any error). Each call into that thread costs 50-100 us of CPU between the two threads,
    and a tick made a dozen or more of them (one a statement, one a conversation)."""

    def __init__(self) -> None:
        self.steps: list[Callable[[sqlite3.Connection], Any]] = []
        self.committed = False  # set in the database's thread once COMMIT has succeeded

    def one(self, statement: str, values: tuple | list = ()) -> None:
        self.steps.append(lambda connection: connection.execute(statement, values))

    def many(self, statement: str, rows: list[tuple]) -> None:
        """executemany, left out when there are no rows (most ticks have none for several)."""
        if rows:
            self.steps.append(lambda connection: connection.executemany(statement, rows))

    def rows(self, statement: str, width: int, values: list[Any]) -> None:
        """An INSERT of many rows, `values` holding their `width` columns one after another;
        `statement` has "{rows}" where its VALUES go (see _insert_rows)."""
        if len(values) % width:
            raise ValueError(f"{len(values)} values do not make rows of {width}")
        if values:
            self.steps.append(lambda connection: _insert_rows(connection, statement, width,
                                                              values))

    def conversation(self, town: int, talk: ConversationRecord) -> None:
        """A conversation and its utterances, which name the conversation's new id."""
        def insert(connection: sqlite3.Connection) -> None:
            cursor = connection.execute(
                "INSERT INTO conversations (town_id, started, ended, sector, arena, "
                "participants) VALUES (?, ?, ?, ?, ?, ?)",
                (town, talk.started, talk.ended, talk.sector, talk.arena,
                 json.dumps(list(talk.participants))))
            connection.executemany(
                "INSERT INTO utterances (conversation_id, seq, speaker, text, game_time) "
                "VALUES (?, ?, ?, ?, ?)",
                [(cursor.lastrowid, seq, speaker, text, when)
                 for seq, (speaker, text, when) in enumerate(talk.utterances)])
        self.steps.append(insert)

    def run(self, connection: sqlite3.Connection) -> None:
        """All of it or none (in the database's thread)."""
        connection.execute("BEGIN IMMEDIATE")
        try:
            for step in self.steps:
                step(connection)
            connection.execute("COMMIT")
            self.committed = True
        except BaseException:
            if connection.in_transaction:  # SQLite may have rolled back already (a full disk)
                connection.execute("ROLLBACK")
            raise


ROWS_AT_ONCE = 64  # rows an INSERT statement binds at most (64 x 10 values: far under the limit)


def _insert_rows(connection: sqlite3.Connection, statement: str, width: int,
                 values: list[Any]) -> None:
    """Insert the rows in order, ROWS_AT_ONCE to a statement and the rest in halving sizes:
    binding a statement of many rows costs SQLite about 40% less than executemany's row at
    a time (1,090 access rows: 0.9 against 1.4 ms), and the few sizes stay in sqlite3's
    cache of prepared statements."""
    rows, start, size = len(values) // width, 0, ROWS_AT_ONCE
    while rows:
        while size > rows:
            size //= 2
        sql, step = _rows_statement(statement, width, size), size * width
        for _ in range(rows // size):
            connection.execute(sql, values[start: start + step])
            start += step
        rows %= size


@lru_cache(maxsize=128)
def _rows_statement(statement: str, width: int, rows: int) -> str:
    one = f"({', '.join(['?'] * width)})"
    return statement.format(rows=", ".join([one] * rows))


def _write_part_logs(write: TickWrite, town: int, changes: TickChanges) -> None:
    """Append the logged parts' changes (see mind.state.AttentionState and PlanState,
    migration 7), a long one compressed as a long part is; when compacting, drop the rows
    of logs that a part stored whole since has made useless."""
    values: list[Any] = []
    for agent, part, row in changes.logged:
        values += (town, agent, part, row.n, pack(row.change))
    write.rows("INSERT INTO part_log (town_id, agent, part, n, change) VALUES {rows}", 5, values)
    if changes.compact and changes.log_starts:
        starts = ", ".join(["(?, ?, ?)"] * len(changes.log_starts))
        write.one(
            f"WITH starts (agent, part, n) AS (VALUES {starts}) DELETE FROM part_log "
            "WHERE town_id = ? AND n < (SELECT starts.n FROM starts WHERE starts.agent = "
            "part_log.agent AND starts.part = part_log.part)",
            [*(value for start in changes.log_starts for value in start), town])


def _write_visitors(write: TickWrite, town: int, changes: TickChanges) -> None:
    write.many(
        "INSERT INTO visitors (town_id, person_id, name, description, body, resident, joined) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (town_id, person_id) DO UPDATE SET "
        "name = excluded.name, description = excluded.description, body = excluded.body, "
        "resident = excluded.resident, left_at = NULL",
        [(town, v.person_id, v.name, v.description, json.dumps(v.body), v.resident,
          v.body.get("joined", "")) for v in changes.visitors])
    write.many(
        "UPDATE visitors SET left_at = ? WHERE town_id = ? AND person_id = ?",
        [(when, town, person) for person, when in changes.departed])


class Store:
    def __init__(self, connection: aiosqlite.Connection, path: str) -> None:
        self.db = connection
        self.path = path
        self.lock: WriterLock | None = None
        self.created = False  # this store's open made the database file
        # One connection: a usage write must never start inside a tick's open transaction.
        self._writing = asyncio.Lock()
        self._logs: list[UsageLog] = []

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any error; one at a time."""
        async with self._writing:
            await begin_writing(lambda: self.db.execute("BEGIN IMMEDIATE"))
            try:
                yield
                await self.db.execute("COMMIT")
            except BaseException as error:
                if self.db.in_transaction:  # SQLite may have rolled back already (a full disk)
                    await self.db.execute("ROLLBACK")
                refused = self.disk_full(error)
                if refused is not None:
                    raise refused from error
                raise

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
            store = await cls._connect(path, read_only, lock)
        except BaseException as error:
            if lock is not None:
                refused = isinstance(error, StoreError)
                if refused and new:  # a town that could not even be opened leaves no file
                    remove_database_files(path)
                lock.release(refused=refused)
            raise
        store.created = new
        return store

    @classmethod
    async def _connect(cls, path: str, read_only: bool, lock: WriterLock | None) -> Store:
        target = f"file:{Path(path).resolve().as_uri()[7:]}?mode=ro" if read_only else path
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
            store = cls(connection, path)
            store.lock = lock
            await (store.check_version() if read_only else store.migrate())
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
        return store

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
                await self._leave_wal()
            await self.db.close()
        finally:
            if self.lock is not None:
                if refused and self.created:
                    remove_database_files(self.path)
                self.lock.release(refused=refused)
                self.lock = None

    async def _leave_wal(self) -> None:
        """A writer leaves its town in rollback-journal mode: a reader of a town in WAL mode
        creates the -wal and -shm files, and readers must never create files. With a reader
        still attached this fails, and the town stays in WAL mode until the next writer."""
        with contextlib.suppress(sqlite3.Error):  # WAL mode is still a sound town
            await self.db.execute("PRAGMA journal_mode=DELETE")

    def usage_log(self, town_id: int, tick: Callable[[], int]) -> UsageLog:
        """A sink for a town's usage records, written as calls complete (see UsageLog)."""
        log = UsageLog(self, town_id, tick)
        self._logs.append(log)
        return log

    async def add_usage(self, town_id: int, rows: list[tuple[int, UsageRecord]]) -> None:
        """Usage records (with the tick of each) in a short transaction of their own: one
        INSERT of all of them, atomic by itself, so one round trip to the database's thread
        (not three with BEGIN and COMMIT) for what a town writes after every model call."""
        values = [value for tick, u in rows for value in (town_id, tick, *_usage_values(u))]
        if not values:
            return
        try:
            async with self._writing:
                if len(rows) <= USAGE_ROWS:
                    await self.db.execute(_usage_insert(len(rows)), values)
                else:
                    await self._add_usage_in_parts(values)
        except sqlite3.OperationalError as error:
            full = self.disk_full(error)
            if full is None:
                raise
            raise full from error

    async def _add_usage_in_parts(self, values: list[Any]) -> None:
        """Many records (a long backlog): USAGE_ROWS at a time, in one transaction."""
        width = USAGE_ROWS * USAGE_COLUMNS
        await begin_writing(lambda: self.db.execute("BEGIN IMMEDIATE"))
        try:
            for start in range(0, len(values), width):
                part = values[start:start + width]
                await self.db.execute(_usage_insert(len(part) // USAGE_COLUMNS), part)
            await self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                await self.db.execute("ROLLBACK")
            raise

    async def check_version(self) -> None:
        """A reader cannot migrate: the database must already be at this townbot's version."""
        version = await self.schema_version()
        if version != len(MIGRATIONS):
            older = "older" if version < len(MIGRATIONS) else "newer"
            raise StoreError(f"{self.path} has schema version {version}, {older} than this "
                             f"townbot ({len(MIGRATIONS)}); "
                             + ("open it once with `townbot sim --hours 0.2` or `townbot run` to "
                                "upgrade it" if older == "older" else "upgrade townbot to read it"))

    async def schema_version(self) -> int:
        async with self.db.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0])

    async def migrate(self) -> int:
        """Apply every migration newer than the database, each in its own transaction."""
        version = await self.schema_version()
        if version > len(MIGRATIONS):
            raise StoreError(f"{self.path} has schema version {version}, newer than this "
                             f"townbot ({len(MIGRATIONS)}); upgrade townbot to open it")
        for number in range(version + 1, len(MIGRATIONS) + 1):
            script = MIGRATIONS[number - 1]
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                for statement in filter(str.strip, script.split(";")):
                    await self.db.execute(statement)
                await self.db.execute(f"PRAGMA user_version = {number}")
            except BaseException:
                await self.db.execute("ROLLBACK")
                raise
            await self.db.execute("COMMIT")
        return len(MIGRATIONS)

    # --- towns ------------------------------------------------------------------------------

    async def create_town(self, name: str, start: str, tick_minutes: int, seed: int, model: str,
                          embedding_model: str, embedding_dim: int,
                          agents: dict[str, tuple[dict, dict]],
                          objects: dict[str, str]) -> TownRow:
        async with self.transaction():
            cursor = await self.db.execute(
                "INSERT INTO towns (name, start, tick_minutes, seed, model, embedding_model, "
                "embedding_dim) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (name, start, tick_minutes, seed, model, embedding_model, embedding_dim))
            town_id = cursor.lastrowid
            await self.db.executemany(
                "INSERT INTO agents (town_id, name, body, mind) VALUES (?, ?, ?, ?)",
                [(town_id, n, json.dumps(b), pack(json.dumps(m))) for n, (b, m) in agents.items()])
            await self.db.executemany(
                "INSERT INTO bodies (town_id, agent, body) VALUES (?, ?, ?)",
                [(town_id, n, json.dumps(b)) for n, (b, _) in agents.items()])
            await self.db.executemany(
                "INSERT INTO objects (town_id, path, state, updated) VALUES (?, ?, ?, ?)",
                [(town_id, path, state, start) for path, state in objects.items()])
        town = await self.town(town_id)
        assert town is not None
        return town

    async def town(self, town_id: int | None = None) -> TownRow | None:
        """A town by id, or the first town in the database."""
        query = "SELECT * FROM towns " + ("WHERE id = ?" if town_id is not None else
                                           "ORDER BY id LIMIT 1")
        async with self.db.execute(query, (town_id,) if town_id is not None else ()) as cursor:
            row = await cursor.fetchone()
        if row is None:
            return None
        return TownRow(**{key: row[key] for key in TownRow.__dataclass_fields__})

    async def agents(self, town_id: int) -> dict[str, tuple[dict, dict]]:
        async with self.db.execute(
                "SELECT name, coalesce(bodies.body, agents.body) AS body, mind FROM agents "
                "LEFT JOIN bodies ON bodies.town_id = agents.town_id AND bodies.agent = name "
                "WHERE agents.town_id = ? ORDER BY name", (town_id,)) as cursor:
            rows = await cursor.fetchall()
        agents = {row["name"]: (json.loads(unpack(row["body"])), json.loads(unpack(row["mind"])))
                  for row in rows}
        async with self.db.execute("SELECT agent, state FROM mind_parts WHERE town_id = ? "
                                   "ORDER BY agent, part", (town_id,)) as cursor:
            for row in await cursor.fetchall():
                if row["agent"] in agents:  # a part's keys override the mind as founded
                    agents[row["agent"]][1].update(json.loads(unpack(row["state"])))
        async with self.db.execute("SELECT agent, part, n, change FROM part_log WHERE "
                                   "town_id = ? ORDER BY id", (town_id,)) as cursor:
            for agent, part, n, change in await cursor.fetchall():
                if agent in agents and part in LOG_KEYS:
                    agents[agent][1].setdefault(LOG_KEYS[part], []).append((n, unpack(change)))
        for _, mind in agents.values():
            apply_logs(mind)  # every reader sees the parts whole
        return agents

    async def memories(self, town_id: int, agent: str | None = None) -> list[StoredMemory]:
        """A town's memories by agent, then position."""
        stored = [StoredMemory(chunk.agent, memory, vector)
                  async for chunk in self.memory_chunks(town_id, agent)
                  for memory, vector in zip(chunk.memories, chunk.vectors, strict=True)]
        return sorted(stored, key=lambda one: one.agent)  # stable: positions stay in order

    def memory_chunks(self, town_id: int, agent: str | None = None) -> AsyncIterator[MemoryChunk]:
        """A town's memories a chunk of rows at a time (see townbot.store.memories)."""
        return memory_chunks(self.db, self.path, town_id, agent)

    async def objects(self, town_id: int) -> dict[str, str]:
        async with self.db.execute("SELECT path, state FROM objects WHERE town_id = ? "
                                   "ORDER BY path", (town_id,)) as cursor:
            return {row["path"]: row["state"] for row in await cursor.fetchall()}

    async def events(self, town_id: int) -> list[TownEvent]:
        async with self.db.execute("SELECT * FROM outbox WHERE town_id = ? ORDER BY id",
                                   (town_id,)) as cursor:
            rows = await cursor.fetchall()
        return [TownEvent(row["game_time"], row["channel"], row["kind"], row["actor"],
                          row["text"], row["emoji"], row["place"]) for row in rows]

    async def events_after(self, town_id: int, after_id: int) -> list[tuple[int, TownEvent]]:
        """Outbox rows newer than `after_id` with their ids, for readers that keep up."""
        async with self.db.execute("SELECT * FROM outbox WHERE town_id = ? AND id > ? ORDER BY id",
                                   (town_id, after_id)) as cursor:
            rows = await cursor.fetchall()
        return [(row["id"], TownEvent(row["game_time"], row["channel"], row["kind"], row["actor"],
                                      row["text"], row["emoji"], row["place"])) for row in rows]

    async def visitor_names(self, town_id: int) -> set[str]:
        """Everyone who ever came as a visitor (not people who took over a resident)."""
        async with self.db.execute("SELECT name FROM visitors WHERE town_id = ? AND resident "
                                   "IS NULL", (town_id,)) as cursor:
            return {row["name"] for row in await cursor.fetchall()}

    async def last_usage_id(self, town_id: int) -> int:
        """The id of the town's newest usage record (0 for none): where this run's records start,
        without reading a week of them before the first tick."""
        async with self.db.execute("SELECT MAX(id) FROM llm_usage WHERE town_id = ?",
                                   (town_id,)) as cursor:
            row = await cursor.fetchone()
        return row[0] or 0

    async def usage_rows_since(self, town_id: int, tick: int) -> list[dict[str, Any]]:
        """The usage records of ticks after `tick` (a recent span, without a town's history)."""
        async with self.db.execute("SELECT * FROM llm_usage WHERE town_id = ? AND tick > ? "
                                   "ORDER BY id", (town_id, tick)) as cursor:
            return [dict(row) for row in await cursor.fetchall()]

    async def usage_rows(self, town_id: int) -> list[dict[str, Any]]:
        async with self.db.execute("SELECT * FROM llm_usage WHERE town_id = ? ORDER BY id",
                                   (town_id,)) as cursor:
            return [dict(row) for row in await cursor.fetchall()]

    # --- the tick ---------------------------------------------------------------------------

    async def save_tick(self, changes: TickChanges, usage: UsageLog | None = None) -> None:
        """Commit one tick atomically: a crash before COMMIT leaves the previous tick intact.
        Its rows are made here, and its statements run in the database's thread as one call
        (see TickWrite). The usage records `usage` has not written yet join the tick's
        transaction (one transaction fewer a tick); if it does not commit, they are written in
        one of their own, so a failed tick still keeps what its calls cost."""
        write = TickWrite()
        records = usage.take() if usage is not None else []
        try:
            async with self._writing:
                await self._write_tick(changes, write, records)
                await begin_writing(lambda: self._in_thread(write.run))  # refused: nothing ran
        except BaseException as error:
            if usage is not None and records:
                await self._keep_usage(usage, records, write)
            full = self.disk_full(error)
            if full is None:
                raise
            raise full from error

    async def _keep_usage(self, usage: UsageLog, records: list[tuple[int, UsageRecord]],
                          write: TickWrite) -> None:
        """After a tick's write failed or its caller was cancelled: unless the write committed
        after all, its usage records go back to `usage` and are written now, in their own
        transaction (a failure to do so leaves them there for the next write)."""
        # The thread runs its calls in order: after this one, the tick's write is over (a
        # cancelled caller stops waiting for the thread, not the thread).
        await self._in_thread(lambda _: None)
        if write.committed:
            return
        usage.give_back(records)
        with contextlib.suppress(sqlite3.Error, StoreError):  # the tick's own error is raised
            await usage.flush()

    async def _in_thread(self, function: Callable[[sqlite3.Connection], None]) -> None:
        """Run `function` with the SQLite connection in aiosqlite's thread, where every call on
        the connection must run. aiosqlite's own methods hand that thread their calls with
        `_execute`; it offers no public way to hand it one of ours."""
        connection = self.db._conn
        await self.db._execute(function, connection)

    def disk_full(self, error: BaseException) -> StoreError | None:
        """A write SQLite refused (a full disk, a read-only file, the file-size limit) as one
        line saying what happened to the town; None for other errors."""
        return sqlite_write_error(error, self.path)

    async def _write_tick(self, changes: TickChanges, write: TickWrite,
                          records: list[tuple[int, UsageRecord]]) -> None:
        """The tick's statements and rows, added to `write` (nothing is written yet), the
        usage `records` (tick, record) first."""
        town = changes.town_id
        write.rows(USAGE_ROWS_INSERT, USAGE_COLUMNS,
                   [value for tick, u in records for value in (town, tick, *_usage_values(u))])
        write.one("UPDATE towns SET tick = ? WHERE id = ?", (changes.next_tick, town))
        # A body is stored as its JSON. Schema 6 compressed it so that more bodies share a
        # page, but most change at every tick, and compressing their few hundred bytes cost
        # several times the writing of the pages it saved (100 residents: 1.1 against 0.2 ms
        # a tick). One stored compressed still reads back (see unpack).
        write.many(
            "UPDATE bodies SET body = ? WHERE town_id = ? AND agent = ?",
            [(body, town, name) for name, body in changes.bodies.items()])
        parts: list[Any] = []
        # in order of part, as the rows are kept (see migration 11): new ones join their kind
        for agent, part, state in sorted(changes.mind_parts, key=itemgetter(1)):
            parts += (town, agent, part, pack(state))
        write.rows("INSERT INTO mind_parts (town_id, agent, part, state) VALUES {rows} "
                   "ON CONFLICT (town_id, agent, part) DO UPDATE SET state = excluded.state",
                   4, parts)
        write.many(MEMORY_INSERT, memory_rows(town, changes.new_memories))
        write.many(ACCESS_INSERT, access_rows(town, changes.touched))
        if changes.compact:
            write.steps.append(lambda connection: compact_accesses(connection, town))
        _write_part_logs(write, town, changes)
        write.many(
            "INSERT INTO objects (town_id, path, state, updated) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (town_id, path) DO UPDATE SET state = excluded.state, "
            "updated = excluded.updated",
            [(town, path, state, when) for path, (state, when) in changes.objects.items()])
        events: list[Any] = []
        for e in changes.events:
            events += (town, changes.tick, e.game_time, e.channel, e.kind, e.actor, e.text,
                       e.emoji, e.place)
        write.rows("INSERT INTO outbox (town_id, tick, game_time, channel, kind, actor, text, "
                   "emoji, place) VALUES {rows}", 9, events)
        for talk in changes.conversations:
            write.conversation(town, talk)
        _write_visitors(write, town, changes)
        await self._insert_usage(write, town, changes.tick, changes.usage)
        for column, value in changes.flags.items():
            assert column in TOWN_FLAGS, column
            write.one(f"UPDATE towns SET {column} = ? WHERE id = ?", (value, town))
        write.many(AUDIT_INSERT, [_audit_values(town, entry) for entry in changes.audits])

    async def visitors(self, town_id: int) -> list[VisitorRow]:
        """People currently in the town (not yet left)."""
        async with self.db.execute("SELECT * FROM visitors WHERE town_id = ? AND left_at IS NULL "
                                   "ORDER BY joined, person_id", (town_id,)) as cursor:
            rows = await cursor.fetchall()
        return [VisitorRow(r["person_id"], r["name"], r["description"], json.loads(r["body"]),
                           r["resident"]) for r in rows]

    async def add_audit(self, town_id: int, entry: AuditEntry) -> None:
        await self.add_audits(town_id, [entry])

    async def add_audits(self, town_id: int, entries: list[AuditEntry]) -> None:
        """Audit rows in one transaction of their own, for a use case that changed nothing (a
        change commits its audit rows with it: TickChanges.audits)."""
        if not entries:
            return
        write = TickWrite()
        write.many(AUDIT_INSERT, [_audit_values(town_id, entry) for entry in entries])
        try:
            async with self._writing:
                await begin_writing(lambda: self._in_thread(write.run))
        except sqlite3.OperationalError as error:
            full = self.disk_full(error)
            if full is None:
                raise
            raise full from error

    async def audit_rows(self, town_id: int) -> list[dict[str, Any]]:
        async with self.db.execute("SELECT * FROM audit_log WHERE town_id = ? ORDER BY id",
                                   (town_id,)) as cursor:
            rows = [dict(row) for row in await cursor.fetchall()]
        for row in rows:
            row["arguments"] = json.loads(row["arguments"])
        return rows

    async def web_token(self, town_id: int) -> str | None:
        """The town's web page token (migration 12): None when none was made yet, "" when a
        moderator closed the page."""
        async with self.db.execute("SELECT token FROM web_links WHERE town_id = ?",
                                   (town_id,)) as cursor:
            row = await cursor.fetchone()
        return None if row is None else row["token"]

    async def set_web_token(self, town_id: int, token: str) -> None:
        """Replace the town's web page token ("" closes the page); the old one stops working at
        once, since every request reads it."""
        async with self._writing:
            await self.db.execute(
                "INSERT INTO web_links (town_id, token, changed) VALUES (?, ?, ?) ON CONFLICT "
                "(town_id) DO UPDATE SET token = excluded.token, changed = excluded.changed",
                (town_id, token, datetime.now(UTC).isoformat(timespec="seconds")))

    async def whispers(self, town_id: int) -> list[str]:
        """The texts of the whispers the town accepted, from the audit log."""
        async with self.db.execute(
                "SELECT arguments FROM audit_log WHERE town_id = ? AND use_case = 'whisper' "
                "AND outcome = 'ok' ORDER BY id", (town_id,)) as cursor:
            rows = await cursor.fetchall()
        texts = (json.loads(row["arguments"]).get("text") for row in rows)
        return [text for text in texts if isinstance(text, str)]

    async def set_town_flags(self, town_id: int, *, paused: bool | None = None,
                             tick_seconds: float | None = None) -> None:
        async with self._writing:
            await self._set_town_flags(town_id, paused, tick_seconds)

    async def _set_town_flags(self, town_id: int, paused: bool | None,
                              tick_seconds: float | None) -> None:
        if paused is not None:
            await self.db.execute("UPDATE towns SET paused = ? WHERE id = ?", (int(paused), town_id))
        if tick_seconds is not None:
            await self.db.execute("UPDATE towns SET tick_seconds = ? WHERE id = ?",
                                  (tick_seconds, town_id))

    async def _insert_usage(self, write: TickWrite, town: int, tick: int,
                            usage: Iterable[UsageRecord]) -> None:
        write.many(USAGE_INSERT, _usage_rows(town, tick, usage))


AUDIT_INSERT = ("INSERT INTO audit_log (town_id, at, game_time, person_id, person_name, role, "
                "use_case, arguments, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
TOWN_FLAGS = frozenset({"paused", "tick_seconds"})  # what a use case may set in `towns`


def _audit_values(town_id: int, entry: AuditEntry) -> tuple[Any, ...]:
    return (town_id, entry.at, entry.game_time, entry.person_id, entry.person_name, entry.role,
            entry.use_case, json.dumps(entry.arguments, ensure_ascii=False), entry.outcome,
            entry.detail)


# A logged part's rows of part_log, in the flat dict of a mind (see mind.state).
LOG_KEYS = {"attention": "sight_log", "planning": "plan_log"}

USAGE_INSERT = ("INSERT INTO llm_usage (town_id, tick, game_day, agent, purpose, model, "
                "prompt_tokens, completion_tokens, estimated, latency_ms, outcome, cached_tokens) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


USAGE_ROWS_INSERT = USAGE_INSERT.rsplit(" VALUES ", 1)[0] + " VALUES {rows}"  # see TickWrite.rows
USAGE_COLUMNS = 12
USAGE_ROWS = 500  # rows in one INSERT: well under SQLite's limit of 32766 values a statement


def _usage_insert(rows: int) -> str:
    """USAGE_INSERT for `rows` rows at once."""
    one = f"({', '.join(['?'] * USAGE_COLUMNS)})"
    return USAGE_INSERT.rsplit(" VALUES ", 1)[0] + " VALUES " + ", ".join([one] * rows)


def _usage_rows(town: int, tick: int, usage: Iterable[UsageRecord]) -> list[tuple]:
    return [(town, tick, *_usage_values(u)) for u in usage]


def _usage_values(u: UsageRecord) -> tuple:
    return (u.game_day, u.agent, u.purpose, u.model, u.prompt_tokens, u.completion_tokens,
            int(u.estimated), u.latency_ms, u.outcome, u.cached_tokens)


# How long a usage record waits for others to join its write (or for the tick's commit to
# take it). With the offline model a tick's calls complete over a few event-loop passes, and
# writing each pass's records cost a round trip to the database's thread (~4 a tick at 100
# residents); a real model's calls take far longer than this. A tick killed half-way still
# keeps its calls (the write is not the tick's); a process killed outright loses the records
# of the calls completed in its last USAGE_HOLD_S.
USAGE_HOLD_S = 0.1


class UsageLog:
    """A town's usage sink: each record is written in a short transaction of its own at most
    USAGE_HOLD_S after its call, so a tick killed half-way keeps the calls it paid for.

    Records arriving while a write waits or is under way go in it or the next one; `flush`
    writes all at once.
    A failed write keeps its records for the next try and raises from `flush` (or `take`).
    The tick's commit `take`s those not yet written into its own transaction and gives
    them back if it does not commit (see Store.save_tick).
    """

    def __init__(self, store: Store, town_id: int, tick: Callable[[], int]) -> None:
        self.store = store
        self.town_id = town_id
        self.tick = tick
        self._pending: list[tuple[int, UsageRecord]] = []
        self._writer: asyncio.Task | None = None
        self._holding = False  # the writer waits (USAGE_HOLD_S) and has taken nothing yet

    def record(self, record: UsageRecord) -> None:
        self._pending.append((self.tick(), record))
        if self._writer is None or self._writer.done():
            self._holding = True
            self._writer = asyncio.get_running_loop().create_task(self._write(USAGE_HOLD_S))

    async def _write(self, hold: float = 0.0) -> None:
        if hold:
            await asyncio.sleep(hold)
            self._holding = False
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await self.store.add_usage(self.town_id, batch)
            except BaseException:
                self._pending[:0] = batch
                raise

    async def flush(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None and self._holding:
            writer.cancel()  # it has taken nothing: its records are written here, now
            self._holding = False
        elif writer is not None:
            await writer
        if self._pending:
            await self._write()

    def take(self) -> list[tuple[int, UsageRecord]]:
        """The records (tick, record) not yet written, in order, for the caller to write in
        its own transaction. A write under way has already taken the store's write lock or
        joined its queue (first come, first served), so its older records go first; one that
        has not begun finds nothing left to write. A write that failed raises here."""
        if self._writer is not None and self._writer.done():
            writer, self._writer = self._writer, None
            writer.result()  # its records are back in _pending, kept for the next try
        taken, self._pending = self._pending, []
        return taken

    def give_back(self, records: list[tuple[int, UsageRecord]]) -> None:
        """Taken records that were not written after all: they go before any newer ones."""
        self._pending[:0] = records


async def conversations(store: Store, town_id: int) -> list[dict[str, Any]]:
    """Every conversation with its utterances, oldest first."""
    async with store.db.execute("SELECT * FROM conversations WHERE town_id = ? ORDER BY id",
                                (town_id,)) as cursor:
        talks = [dict(row) for row in await cursor.fetchall()]
    for talk in talks:
        async with store.db.execute("SELECT speaker, text, game_time FROM utterances WHERE "
                                    "conversation_id = ? ORDER BY seq", (talk["id"],)) as cursor:
            talk["utterances"] = [dict(row) for row in await cursor.fetchall()]
        talk["participants"] = json.loads(talk["participants"])
    return talks


async def replace_embeddings(store: Store, town_id: int, embedding_model: str, embedding_dim: int,
                             vectors: list[tuple[str, int, np.ndarray]], tick: int,
                             usage: Iterable[UsageRecord] = ()) -> None:
    """Give every listed memory (agent, seq) a new vector and the town its new embedding model,
    with the usage that re-embedding cost, in one transaction: all of it or none."""
    async with store.transaction():
        await write_embeddings(store.db, town_id, vectors)
        await store.db.execute("UPDATE towns SET embedding_model = ?, embedding_dim = ? WHERE id = ?",
                               (embedding_model, embedding_dim, town_id))
        rows = _usage_rows(town_id, tick, usage)
        if rows:
            await store.db.executemany(USAGE_INSERT, rows)
