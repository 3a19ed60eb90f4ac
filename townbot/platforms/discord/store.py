"""Discord's own tables in the town's database, on a second connection: the engine's holds long
`BEGIN IMMEDIATE` transactions between awaits, which the publisher's writes must stay out of.
The tables carry their own `discord_schema` version, apart from the core's `user_version`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import astuple, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import aiosqlite

from townbot.store.ticks import begin_writing

BUSY_MS = 10_000
T = TypeVar("T")
MAX_ID = 2**63 - 1  # SQLite's largest integer: no upper bound on the rows read
CATEGORY = "#category"  # the layout key of the category (channel slugs never start with '#')
SCHEMA: list[str] = [
    # 1: channels and webhooks made per server, delivery progress per channel, speech already
    # visible on Discord, interview threads.
    """
    CREATE TABLE discord_layout (
        slug TEXT PRIMARY KEY,
        guild_id INTEGER NOT NULL,
        channel_id INTEGER NOT NULL,
        webhook_id INTEGER,
        updated TEXT NOT NULL
    );
    CREATE TABLE discord_delivery (
        channel TEXT PRIMARY KEY,
        last_message_id INTEGER,
        post_first INTEGER,
        post_last INTEGER,
        parts_done INTEGER NOT NULL DEFAULT 0,
        in_flight INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE discord_rejected (
        outbox_id INTEGER PRIMARY KEY,
        error TEXT NOT NULL,
        at TEXT NOT NULL
    );
    CREATE TABLE discord_echoes (
        id INTEGER PRIMARY KEY,
        channel TEXT NOT NULL,
        actor TEXT NOT NULL,
        text TEXT NOT NULL
    );
    CREATE TABLE discord_threads (
        thread_id INTEGER PRIMARY KEY,
        resident TEXT NOT NULL,
        memory TEXT NOT NULL,
        remember INTEGER NOT NULL,
        opened_by TEXT NOT NULL,
        created TEXT NOT NULL
    )
    """,
    # 2: words of people still walking to where they wrote them (said on arrival, also after
    # a restart), and the welcome messages pinned per channel.
    """
    CREATE TABLE discord_waiting (
        id INTEGER PRIMARY KEY,
        person_id TEXT NOT NULL,
        person_name TEXT NOT NULL,
        moderator INTEGER NOT NULL,
        sector TEXT NOT NULL,
        text TEXT NOT NULL,
        channel_id INTEGER NOT NULL,
        message_id INTEGER NOT NULL
    );
    CREATE TABLE discord_welcome (
        slug TEXT PRIMARY KEY,
        channel_id INTEGER NOT NULL,
        message_id INTEGER NOT NULL
    )
    """,
]


class LayoutError(Exception):
    """The database belongs to another server; the message says which."""


@dataclass(frozen=True)
class OutboxRow:
    id: int
    tick: int
    game_time: str
    channel: str
    kind: str
    actor: str
    text: str
    emoji: str = ""
    place: str = ""


@dataclass(frozen=True)
class Delivery:
    """Where a channel's posting stands: the post under way and whether a send may have landed."""

    last_message_id: int | None = None
    post_first: int | None = None
    post_last: int | None = None
    parts_done: int = 0
    in_flight: bool = False


@dataclass(frozen=True)
class Placed:
    channel_id: int
    webhook_id: int | None


@dataclass(frozen=True)
class WaitingWords:
    """Words a person wrote in an area's channel while walking there."""

    person_id: str
    person_name: str
    moderator: bool
    sector: str
    text: str
    channel_id: int
    message_id: int


@dataclass(frozen=True)
class InterviewThread:
    resident: str
    memory: str  # a key of town.MEMORY_ACCESS
    remember: bool
    opened_by: str


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class DiscordStore:
    def __init__(self, connection: aiosqlite.Connection, town_id: int) -> None:
        self.db = connection
        self.town_id = town_id
        # One statement or transaction at a time on the shared connection, a read fetching its
        # rows in the same call: SQLite keeps one read snapshot per connection (docs/discord.md).
        self._turn = asyncio.Lock()

    @classmethod
    async def open(cls, path: str | Path, town_id: int) -> DiscordStore:
        """Open beside an engine: the town (and the outbox) must already exist in `path`."""
        connection = await aiosqlite.connect(str(path), isolation_level=None)
        connection.row_factory = aiosqlite.Row
        try:
            await connection.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            store = cls(connection, town_id)
            await store._migrate()
        except BaseException:
            await connection.close()
            raise
        return store

    async def close(self) -> None:
        await self.db.close()

    async def _migrate(self) -> None:
        await self.db.execute("CREATE TABLE IF NOT EXISTS discord_schema (version INTEGER NOT NULL)")
        [(version,)] = await self._rows("SELECT MAX(version) FROM discord_schema")
        for number in range((version or 0) + 1, len(SCHEMA) + 1):
            await self._transaction(lambda n=number: self._apply(n))

    async def _apply(self, number: int) -> None:
        for statement in filter(str.strip, SCHEMA[number - 1].split(";")):
            await self.db.execute(statement)
        await self.db.execute("INSERT INTO discord_schema (version) VALUES (?)", (number,))

    async def _transaction(self, work: Callable[[], Awaitable[T]]) -> T:
        """`work` in one write transaction, committed when it returns; its result."""
        async with self._turn:
            await begin_writing(lambda: self.db.execute("BEGIN IMMEDIATE"))
            try:
                result = await work()
            except BaseException:
                await self.db.execute("ROLLBACK")
                raise
            await self.db.execute("COMMIT")
            return result

    async def _write(self, sql: str, parameters: tuple = ()) -> None:
        await self._transaction(lambda: self.db.execute(sql, parameters))

    async def _rows(self, sql: str, parameters: tuple = ()) -> list[aiosqlite.Row]:
        """A read's rows, taken in one call on the database thread, in the store's turn."""
        async with self._turn:
            return list(await self.db.execute_fetchall(sql, parameters))

    # --- layout -------------------------------------------------------------------------------

    async def layout(self, guild_id: int) -> dict[str, Placed]:
        rows = await self._rows("SELECT * FROM discord_layout")
        strangers = {row["guild_id"] for row in rows} - {guild_id}
        if strangers:
            raise LayoutError(f"this database was set up for server {strangers.pop()}, not "
                              f"{guild_id}; each server needs its own <server id>.db")
        return {row["slug"]: Placed(row["channel_id"], row["webhook_id"]) for row in rows}

    async def place(self, guild_id: int, slug: str, channel_id: int,
                    webhook_id: int | None) -> None:
        await self._write("INSERT OR REPLACE INTO discord_layout (slug, guild_id, channel_id, "
                          "webhook_id, updated) VALUES (?, ?, ?, ?, ?)",
                          (slug, guild_id, channel_id, webhook_id, utc_now()))

    # --- the outbox -----------------------------------------------------------------------------

    async def pending_channels(self) -> list[str]:
        rows = await self._rows("SELECT DISTINCT channel FROM outbox WHERE town_id = ? AND "
                                "sent_at IS NULL", (self.town_id,))
        return sorted(row[0] for row in rows)

    async def unsent(self, channel: str, limit: int = 50, first: int = 0,
                     last: int | None = None) -> list[OutboxRow]:
        rows = await self._rows(
            "SELECT id, tick, game_time, channel, kind, actor, text, emoji, place FROM outbox "
            "WHERE town_id = ? AND channel = ? AND sent_at IS NULL AND id >= ? AND id <= ? "
            "ORDER BY id LIMIT ?",
            (self.town_id, channel, first, MAX_ID if last is None else last, limit))
        return [OutboxRow(**dict(row)) for row in rows]

    async def backlog(self) -> int:
        [(count,)] = await self._rows("SELECT COUNT(*) FROM outbox WHERE town_id = ? AND "
                                      "sent_at IS NULL", (self.town_id,))
        return int(count)

    async def delivery(self, channel: str) -> Delivery:
        rows = await self._rows("SELECT last_message_id, post_first, post_last, parts_done, "
                                "in_flight FROM discord_delivery WHERE channel = ?", (channel,))
        return Delivery(*rows[0][:4], bool(rows[0][4])) if rows else Delivery()

    async def _save_delivery(self, channel: str, state: Delivery) -> None:
        await self.db.execute(
            "INSERT OR REPLACE INTO discord_delivery (channel, last_message_id, post_first, "
            "post_last, parts_done, in_flight) VALUES (?, ?, ?, ?, ?, ?)", (channel, *astuple(state)))

    async def sending(self, channel: str, state: Delivery) -> None:
        """Record, before a send, which post is under way and that a message may land."""
        await self._transaction(lambda: self._save_delivery(channel, state))

    async def landed(self, channel: str, state: Delivery, finished: Sequence[int],
                     error: str | None = None) -> None:
        """A part was accepted by Discord; rows of a finished post are marked sent with it.
        With `error`, Discord refused the post itself (not the moment): keep why, move past it."""
        async def work() -> None:
            await self._save_delivery(channel, state)
            await self._mark_sent(finished)
            if error is not None:
                await self.db.executemany(
                    "INSERT OR REPLACE INTO discord_rejected (outbox_id, error, at) "
                    "VALUES (?, ?, ?)", [(row_id, error[:500], utc_now()) for row_id in finished])
        await self._transaction(work)

    async def _mark_sent(self, ids: Sequence[int]) -> None:
        await self.db.executemany("UPDATE outbox SET sent_at = ? WHERE id = ? AND town_id = ?",
                                  [(utc_now(), row_id, self.town_id) for row_id in ids])

    async def rejected(self) -> list[tuple[int, str]]:
        rows = await self._rows("SELECT outbox_id, error FROM discord_rejected ORDER BY outbox_id")
        return [(row[0], row[1]) for row in rows]

    # --- speech already on Discord ---------------------------------------------------------------

    async def expect_echo(self, channel: str, actor: str, text: str) -> int:
        """Note speech a person wrote on Discord themselves, so the outbox does not repeat it."""
        async def work() -> int:
            cursor = await self.db.execute(
                "INSERT INTO discord_echoes (channel, actor, text) VALUES (?, ?, ?)",
                (channel, actor, " ".join(text.split())))
            return int(cursor.lastrowid or 0)
        return await self._transaction(work)

    async def forget_echo(self, echo_id: int) -> None:
        await self._write("DELETE FROM discord_echoes WHERE id = ?", (echo_id,))

    async def consume_echo(self, row: OutboxRow) -> bool:
        """A person's own message already shows this speech: mark it sent without posting."""
        async def work() -> bool:
            async with self.db.execute(
                    "SELECT id FROM discord_echoes WHERE channel = ? AND actor = ? AND text = ? "
                    "ORDER BY id LIMIT 1", (row.channel, row.actor, row.text)) as cursor:
                found = await cursor.fetchone()
            if found is None:
                return False
            await self.db.execute("DELETE FROM discord_echoes WHERE id = ?", (found[0],))
            await self._mark_sent([row.id])
            return True
        return await self._transaction(work)

    # --- interview threads ----------------------------------------------------------------------

    async def open_thread(self, thread_id: int, interview: InterviewThread) -> None:
        await self._write("INSERT OR REPLACE INTO discord_threads (thread_id, resident, memory, "
                          "remember, opened_by, created) VALUES (?, ?, ?, ?, ?, ?)",
                          (thread_id, *astuple(interview), utc_now()))

    async def thread(self, thread_id: int) -> InterviewThread | None:
        rows = await self._rows("SELECT resident, memory, remember, opened_by FROM "
                                "discord_threads WHERE thread_id = ?", (thread_id,))
        return InterviewThread(rows[0][0], rows[0][1], bool(rows[0][2]), rows[0][3]) if rows else None

    # --- words on the way -----------------------------------------------------------------------

    async def wait_words(self, words: WaitingWords) -> None:
        """Keep what a walking person wrote; a new place replaces words meant for another."""
        async def work() -> None:
            await self.db.execute("DELETE FROM discord_waiting WHERE person_id = ? AND sector != ?",
                                  (words.person_id, words.sector))
            await self.db.execute(
                "INSERT INTO discord_waiting (person_id, person_name, moderator, sector, text, "
                "channel_id, message_id) VALUES (?, ?, ?, ?, ?, ?, ?)", astuple(words))
        await self._transaction(work)

    async def waiting_words(self) -> list[WaitingWords]:
        rows = await self._rows("SELECT person_id, person_name, moderator, sector, text, "
                                "channel_id, message_id FROM discord_waiting ORDER BY id")
        return [WaitingWords(r[0], r[1], bool(r[2]), *r[3:]) for r in rows]

    async def forget_words(self, person_id: str) -> None:
        await self._write("DELETE FROM discord_waiting WHERE person_id = ?", (person_id,))

    # --- welcome messages -----------------------------------------------------------------------

    async def welcome(self) -> dict[str, tuple[int, int]]:
        rows = await self._rows("SELECT slug, channel_id, message_id FROM discord_welcome")
        return {row[0]: (row[1], row[2]) for row in rows}

    async def welcomed(self, slug: str, channel_id: int, message_id: int) -> None:
        await self._write("INSERT OR REPLACE INTO discord_welcome (slug, channel_id, message_id) "
                          "VALUES (?, ?, ?)", (slug, channel_id, message_id))
