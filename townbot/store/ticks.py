"""What one commit writes: a tick's changes (`TickChanges`) and the statements that write them
(`TickWrite`), run in one transaction through aiosqlite's public API."""

from __future__ import annotations

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

    def rows(self, statement: str, width: int, values: list[Any]) -> None:
        """`many` of `statement`, which has "{rows}" where its VALUES go, over `values` holding
        rows of `width` columns one after another."""
        if len(values) % width:
            raise ValueError(f"{len(values)} values do not make rows of {width}")
        self.many(statement.format(rows=f"({', '.join(['?'] * width)})"),
                  [tuple(values[start:start + width]) for start in range(0, len(values), width)])

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
        """All of it or none."""
        await db.execute("BEGIN IMMEDIATE")
        try:
            for step in self.steps:
                await step(db)
            await db.execute("COMMIT")
            self.committed = True
        except BaseException:
            await roll_back(db)
            raise


async def roll_back(db: aiosqlite.Connection) -> None:
    """ROLLBACK the transaction under way; SQLite may have rolled it back already (a full disk)."""
    with contextlib.suppress(sqlite3.OperationalError):
        await db.execute("ROLLBACK")
