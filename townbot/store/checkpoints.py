"""A town at the start of each game day, kept so that `townbot fork --at DAY` can begin there.

A game day starts at the hour the town was founded (07:00 in Smallville), the commit where the
store also does its daily bookkeeping (memory accesses put in one row per resident), so what is
copied then is small. Memories, posts, conversations, usage and audit rows are only ever
appended: a checkpoint keeps the last id of each. What a tick rewrites in place (bodies, mind
parts, memory accesses, objects, visitors) is copied whole into `checkpoint_<table>`, as SQL
rows (about 0.7 MB and 50 ms a day for 25 residents). The newest KEEP_DAYS checkpoints are kept.

Its tables are made on first use, not by a numbered migration: an older townbot reading the
town never meets them, and a town without them simply has no day to fork from.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from townbot.store.database import Store
from townbot.store.errors import StoreError
from townbot.store.ticks import TickWrite

KEEP_DAYS = 60  # newest day checkpoints kept per town: a real day at the default speed
# Tables a tick rewrites in place, with their columns: copied whole at each day's start.
COPIED = {
    "bodies": ("agent", "body"),
    "mind_parts": ("agent", "part", "state"),
    "memory_access": ("id", "agent", "seqs", "times", "importances"),
    "objects": ("path", "state", "updated"),
    "visitors": ("person_id", "name", "description", "body", "resident", "joined", "left_at"),
}
# Tables only ever appended to: rows after a checkpoint's last id are the later days'.
APPENDED = ("memories", "outbox", "conversations", "llm_usage", "audit_log")
SCHEMA = [
    """CREATE TABLE IF NOT EXISTS day_checkpoints (
        town_id INTEGER NOT NULL, day INTEGER NOT NULL, tick INTEGER NOT NULL,
        game_time TEXT NOT NULL, taken_at TEXT NOT NULL, memories INTEGER NOT NULL,
        outbox INTEGER NOT NULL, conversations INTEGER NOT NULL, llm_usage INTEGER NOT NULL,
        audit_log INTEGER NOT NULL, PRIMARY KEY (town_id, day))""",
    *(f"CREATE TABLE IF NOT EXISTS checkpoint_{table} (town_id INTEGER NOT NULL, "
      f"day INTEGER NOT NULL, {', '.join(columns)})" for table, columns in COPIED.items()),
]


@dataclass(frozen=True)
class DayCheckpoint:
    day: int
    tick: int
    game_time: str


def _drop(town_id: int, which: str, values: tuple) -> list[tuple[str, tuple]]:
    """The statements deleting the checkpoints of the days `which` picks."""
    return [(f"DELETE FROM {table} WHERE town_id = ? AND {which}", (town_id, *values))
            for table in ("day_checkpoints", *(f"checkpoint_{t}" for t in COPIED))]


async def save_checkpoint(store: Store, town_id: int, day: int, tick: int,
                          game_time: str) -> None:
    """Keep the town as just committed as the start of game day `day` (in one transaction of
    its own, after the tick's: a crash between leaves that day without a checkpoint)."""
    write = TickWrite()
    for statement in SCHEMA:
        write.one(statement)
    for statement, values in _drop(town_id, "day >= ?", (day,)):
        write.one(statement, values)
    last_ids = ", ".join(f"(SELECT coalesce(max(id), 0) FROM {table} WHERE town_id = ?)"
                         for table in APPENDED)
    write.one(f"INSERT INTO day_checkpoints (town_id, day, tick, game_time, taken_at, "
              f"{', '.join(APPENDED)}) VALUES (?, ?, ?, ?, ?, {last_ids})",
              (town_id, day, tick, game_time, datetime.now(UTC).isoformat(timespec="seconds"),
               *[town_id] * len(APPENDED)))
    for table, columns in COPIED.items():
        names = ", ".join(columns)
        write.one(f"INSERT INTO checkpoint_{table} (town_id, day, {names}) "
                  f"SELECT town_id, ?, {names} FROM {table} WHERE town_id = ?", (day, town_id))
    for statement, values in _drop(town_id, "day <= ?", (day - KEEP_DAYS,)):
        write.one(statement, values)
    await store.run(write)


def checkpoints(connection: sqlite3.Connection, town_id: int) -> list[DayCheckpoint]:
    if not _has_table(connection, "day_checkpoints"):
        return []
    rows = connection.execute("SELECT day, tick, game_time FROM day_checkpoints WHERE "
                              "town_id = ? ORDER BY day", (town_id,)).fetchall()
    return [DayCheckpoint(*row) for row in rows]


def _has_table(connection: sqlite3.Connection, name: str) -> bool:
    return connection.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)
                              ).fetchone() is not None


def rewind_to_day(connection: sqlite3.Connection, town_id: int, day: int) -> DayCheckpoint:
    """Put the town in `connection` (a fresh copy, never the town itself) back to the start of
    game day `day`, in one transaction; StoreError names the days kept when it has none."""
    kept = {c.day: c for c in checkpoints(connection, town_id)}
    if day not in kept:
        days = ", ".join(str(d) for d in sorted(kept)) or "none yet (one is kept at the start "\
            "of each game day from now on)"
        raise StoreError(f"this town keeps no checkpoint of day {day}; days kept: {days}")
    last = connection.execute(f"SELECT {', '.join(APPENDED)} FROM day_checkpoints WHERE "
                              "town_id = ? AND day = ?", (town_id, day)).fetchone()
    connection.execute("BEGIN IMMEDIATE")
    try:
        for table, upto in zip(APPENDED, last, strict=True):
            if table == "conversations":
                connection.execute("DELETE FROM utterances WHERE conversation_id IN (SELECT id "
                                   "FROM conversations WHERE town_id = ? AND id > ?)",
                                   (town_id, upto))
            connection.execute(f"DELETE FROM {table} WHERE town_id = ? AND id > ?",
                               (town_id, upto))
        for table, names in COPIED.items():
            listed = ", ".join(names)
            connection.execute(f"DELETE FROM {table} WHERE town_id = ?", (town_id,))
            connection.execute(f"INSERT INTO {table} (town_id, {listed}) SELECT town_id, "
                               f"{listed} FROM checkpoint_{table} WHERE town_id = ? AND day = ?",
                               (town_id, day))
        connection.execute("UPDATE towns SET tick = ? WHERE id = ?", (kept[day].tick, town_id))
        for statement, values in _drop(town_id, "day > ?", (day,)):
            connection.execute(statement, values)
        if _has_table(connection, "discord_rejected"):  # Discord's refused posts that are gone
            connection.execute("DELETE FROM discord_rejected WHERE outbox_id > ?",
                               (last[APPENDED.index("outbox")],))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return kept[day]


def open_copy(path: Path) -> sqlite3.Connection:
    """A plain connection to a copy being made into a fork (no other process has it yet)."""
    return sqlite3.connect(path, isolation_level=None)
