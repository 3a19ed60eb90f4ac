"""A town's own rows: the town, its residents' bodies and minds (JSON as the mind gives it,
merged back into one dict a resident), objects, visitors, posts, conversations and its web
token. The store keeps what it is given: turning minds and bodies into JSON and back is the
mind's and the town's business; the store only compresses long JSON (`pack`)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiosqlite

from townbot.world.events import TownEvent


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

    def row(self, town_id: int) -> tuple[Any, ...]:
        return (town_id, self.person_id, self.name, self.description, json.dumps(self.body),
                self.resident, self.body.get("joined", ""))


VISITOR_UPSERT = (
    "INSERT INTO visitors (town_id, person_id, name, description, body, resident, joined) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (town_id, person_id) DO UPDATE SET "
    "name = excluded.name, description = excluded.description, body = excluded.body, "
    "resident = excluded.resident, left_at = NULL")
TOWN_FLAGS = frozenset({"paused", "tick_seconds"})  # what a use case may set in `towns`
# A mind part (or a founding mind) longer than this is stored zlib-compressed, in a BLOB: an
# awake resident's sights (about 4 kB of JSON) change at every tick and a plan (about 13 kB)
# at every block it decomposes, and stored as text they doubled the bytes a 25-resident town
# writes a game day, from 12 to 25 MB (benchmarks/speed.py).
PACK_OVER = 2048


def pack(text: str) -> str | bytes:
    """JSON as stored: compressed (zlib's fastest level) when long, else as it is."""
    return zlib.compress(text.encode(), 1) if len(text) > PACK_OVER else text


def unpack(value: str | bytes) -> str:
    return zlib.decompress(value).decode() if isinstance(value, bytes) else value


def _event(row: aiosqlite.Row) -> TownEvent:
    return TownEvent(row["game_time"], row["channel"], row["kind"], row["actor"], row["text"],
                     row["emoji"], row["place"])


class Tables:
    """What the parts of Store (see store.database) share."""

    db: aiosqlite.Connection
    # rows of one statement written in a transaction of their own (Store.write_now)
    write_now: Callable[[str, list[tuple]], Awaitable[None]]

    async def rows(self, query: str, values: tuple = ()) -> list[aiosqlite.Row]:
        async with self.db.execute(query, values) as cursor:
            return list(await cursor.fetchall())


class TownTables(Tables):
    """The Store's reads and writes of a town's own rows."""

    async def town(self, town_id: int | None = None) -> TownRow | None:
        """A town by id, or the first town in the database."""
        query = "SELECT * FROM towns " + ("WHERE id = ?" if town_id is not None else
                                           "ORDER BY id LIMIT 1")
        rows = await self.rows(query, (town_id,) if town_id is not None else ())
        if not rows:
            return None
        return TownRow(**{key: rows[0][key] for key in TownRow.__dataclass_fields__})

    async def agents(self, town_id: int) -> dict[str, tuple[dict, dict]]:
        """Each resident's body and mind: the mind as founded with the keys of each part
        stored since over it."""
        rows = await self.rows(
            "SELECT name, coalesce(bodies.body, agents.body) AS body, mind FROM agents "
            "LEFT JOIN bodies ON bodies.town_id = agents.town_id AND bodies.agent = name "
            "WHERE agents.town_id = ? ORDER BY name", (town_id,))
        agents = {row["name"]: (json.loads(unpack(row["body"])), json.loads(unpack(row["mind"])))
                  for row in rows}
        for row in await self.rows("SELECT agent, state FROM mind_parts WHERE town_id = ? "
                                    "ORDER BY agent, part", (town_id,)):
            if row["agent"] in agents:
                agents[row["agent"]][1].update(json.loads(unpack(row["state"])))
        return agents

    async def objects(self, town_id: int) -> dict[str, str]:
        rows = await self.rows("SELECT path, state FROM objects WHERE town_id = ? ORDER BY path",
                                (town_id,))
        return {row["path"]: row["state"] for row in rows}

    async def events(self, town_id: int) -> list[TownEvent]:
        return [event for _, event in await self.events_after(town_id, 0)]

    async def events_after(self, town_id: int, after_id: int) -> list[tuple[int, TownEvent]]:
        """Outbox rows newer than `after_id` with their ids, for readers that keep up."""
        rows = await self.rows("SELECT * FROM outbox WHERE town_id = ? AND id > ? ORDER BY id",
                                (town_id, after_id))
        return [(row["id"], _event(row)) for row in rows]

    async def visitors(self, town_id: int) -> list[VisitorRow]:
        """People currently in the town (not yet left)."""
        rows = await self.rows("SELECT * FROM visitors WHERE town_id = ? AND left_at IS NULL "
                                "ORDER BY joined, person_id", (town_id,))
        return [VisitorRow(r["person_id"], r["name"], r["description"], json.loads(r["body"]),
                           r["resident"]) for r in rows]

    async def visitor_names(self, town_id: int) -> set[str]:
        """Everyone who ever came as a visitor (not people who took over a resident)."""
        rows = await self.rows("SELECT name FROM visitors WHERE town_id = ? AND resident "
                                "IS NULL", (town_id,))
        return {row["name"] for row in rows}

    async def web_token(self, town_id: int) -> str | None:
        """The town's web page token (migration 12): None when none was made yet, "" when a
        moderator closed the page."""
        rows = await self.rows("SELECT token FROM web_links WHERE town_id = ?", (town_id,))
        return rows[0]["token"] if rows else None

    async def set_web_token(self, town_id: int, token: str) -> None:
        """Replace the town's web page token ("" closes the page); the old one stops working at
        once, since every request reads it."""
        await self.write_now(
            "INSERT INTO web_links (town_id, token, changed) VALUES (?, ?, ?) ON CONFLICT "
            "(town_id) DO UPDATE SET token = excluded.token, changed = excluded.changed",
            [(town_id, token, datetime.now(UTC).isoformat(timespec="seconds"))])


async def conversations(store: Tables, town_id: int) -> list[dict[str, Any]]:
    """Every conversation with its utterances, oldest first."""
    talks = [dict(row) for row in await store.rows(
        "SELECT * FROM conversations WHERE town_id = ? ORDER BY id", (town_id,))]
    for talk in talks:
        talk["utterances"] = [dict(row) for row in await store.rows(
            "SELECT speaker, text, game_time FROM utterances WHERE conversation_id = ? "
            "ORDER BY seq", (talk["id"],))]
        talk["participants"] = json.loads(talk["participants"])
    return talks
