"""What one commit writes: a tick's changes (`TickChanges`) and the statements that write them
(`TickWrite`), run in one transaction through aiosqlite's public API, and how a write begins
(`begin_writing`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiosqlite
import numpy as np

from townbot.llm.port import UsageRecord
from townbot.store.towns import VisitorRow
from townbot.store.usage import AuditEntry
from townbot.world.events import TownEvent

# A read between its first and last row holds a snapshot. If another connection to the same
# town (the engine's or the Discord store's) has committed since, SQLite refuses that
# connection's BEGIN IMMEDIATE at once (SQLITE_BUSY_SNAPSHOT), without the busy timeout's wait.
# The read ends within a few turns of the event loop, so the write waits for it and tries again.
SNAPSHOT_WAIT_S = 0.005  # between tries
SNAPSHOT_WAIT_LIMIT_S = 10.0  # as long as a busy timeout lets a writer wait for another


async def begin_writing(begin: Callable[[], Awaitable[object]]) -> None:
    """Await `begin` (which starts with BEGIN IMMEDIATE and has done nothing when that is
    refused) until the connection's own read in flight no longer stands in its way."""
    waited = 0.0
    while True:
        try:
            await begin()
            return
        except sqlite3.OperationalError as error:
            read_in_flight = getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY_SNAPSHOT
            if not read_in_flight or waited >= SNAPSHOT_WAIT_LIMIT_S:
                raise
        await asyncio.sleep(SNAPSHOT_WAIT_S)
        waited += SNAPSHOT_WAIT_S


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
    new_memories: list[tuple[str, Any, np.ndarray]] = field(default_factory=list)  # (agent, memory, vector)
    touched: list[tuple[str, list[Any]]] = field(default_factory=list)  # memories by agent
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


Step = Callable[[aiosqlite.Connection], Awaitable[Any]]


class TickWrite:
    """The statements of one commit with their rows, gathered first and then run (`run`:
    BEGIN IMMEDIATE, each statement, COMMIT; ROLLBACK on any error)."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.committed = False  # set once COMMIT has succeeded

    def one(self, statement: str, values: tuple | list = ()) -> None:
        self.steps.append(lambda db: db.execute(statement, values))

    def many(self, statement: str, rows: list[tuple]) -> None:
        """executemany, left out when there are no rows (most ticks have none for several)."""
        if rows:
            self.steps.append(lambda db: db.executemany(statement, rows))

    def conversation(self, town: int, talk: ConversationRecord) -> None:
        """A conversation and its utterances, which name the conversation's new id."""
        async def insert(db: aiosqlite.Connection) -> None:
            cursor = await db.execute(
                "INSERT INTO conversations (town_id, started, ended, sector, arena, "
                "participants) VALUES (?, ?, ?, ?, ?, ?)",
                (town, talk.started, talk.ended, talk.sector, talk.arena,
                 json.dumps(list(talk.participants))))
            await db.executemany(
                "INSERT INTO utterances (conversation_id, seq, speaker, text, game_time) "
                "VALUES (?, ?, ?, ?, ?)",
                [(cursor.lastrowid, seq, speaker, text, when)
                 for seq, (speaker, text, when) in enumerate(talk.utterances)])
        self.steps.append(insert)

    async def run(self, db: aiosqlite.Connection) -> None:
        await db.execute("BEGIN IMMEDIATE")
        try:
            for step in self.steps:
                await step(db)
            await db.execute("COMMIT")
            self.committed = True
        except BaseException:
            # SQLite may have rolled it back already (a full disk)
            with contextlib.suppress(sqlite3.OperationalError):
                await db.execute("ROLLBACK")
            raise
