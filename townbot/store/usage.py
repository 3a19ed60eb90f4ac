"""What a town's model calls cost (llm_usage) and what people did in it (audit_log)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from townbot.llm.port import UsageRecord
from townbot.store.towns import Tables

USAGE_INSERT = ("INSERT INTO llm_usage (town_id, tick, game_day, agent, purpose, model, "
                "prompt_tokens, completion_tokens, estimated, latency_ms, outcome, cached_tokens) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
AUDIT_INSERT = ("INSERT INTO audit_log (town_id, at, game_time, person_id, person_name, role, "
                "use_case, arguments, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
# How long a usage record waits for others to join its write (or for the tick's commit to
# take it): the offline model's calls complete over a few event-loop passes, and a real
# model's take far longer than this. A tick killed half-way still keeps its calls (the write
# is not the tick's); a process killed outright loses the records of its last USAGE_HOLD_S.
USAGE_HOLD_S = 0.1


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

    def row(self, town_id: int) -> tuple[Any, ...]:
        return (town_id, self.at, self.game_time, self.person_id, self.person_name, self.role,
                self.use_case, json.dumps(self.arguments, ensure_ascii=False), self.outcome,
                self.detail)


def usage_values(town: int, records: Iterable[tuple[int, UsageRecord]]) -> list[tuple[Any, ...]]:
    """Rows of llm_usage for (tick, record) pairs."""
    return [(town, tick, u.game_day, u.agent, u.purpose, u.model, u.prompt_tokens,
             u.completion_tokens, int(u.estimated), u.latency_ms, u.outcome, u.cached_tokens)
            for tick, u in records]


class UsageTables(Tables):
    """The Store's reads of usage and audit rows."""

    async def _dicts(self, query: str, values: tuple) -> list[dict[str, Any]]:
        return [dict(row) for row in await self.rows(query, values)]

    async def last_usage_id(self, town_id: int) -> int:
        """The id of the town's newest usage record (0 for none): where this run's records
        start, without reading a week of them before the first tick."""
        [row] = await self.rows("SELECT MAX(id) FROM llm_usage WHERE town_id = ?", (town_id,))
        return row[0] or 0

    async def usage_rows_since(self, town_id: int, tick: int) -> list[dict[str, Any]]:
        """The usage records of ticks after `tick` (a recent span, without a town's history)."""
        return await self._dicts("SELECT * FROM llm_usage WHERE town_id = ? AND tick > ? "
                                 "ORDER BY id", (town_id, tick))

    async def usage_rows(self, town_id: int) -> list[dict[str, Any]]:
        return await self._dicts("SELECT * FROM llm_usage WHERE town_id = ? ORDER BY id",
                                 (town_id,))

    async def audit_rows(self, town_id: int) -> list[dict[str, Any]]:
        rows = await self._dicts("SELECT * FROM audit_log WHERE town_id = ? ORDER BY id",
                                 (town_id,))
        for row in rows:
            row["arguments"] = json.loads(row["arguments"])
        return rows

    async def whispers(self, town_id: int) -> list[str]:
        """The texts of the whispers the town accepted, from the audit log."""
        rows = await self._dicts("SELECT arguments FROM audit_log WHERE town_id = ? AND "
                                 "use_case = 'whisper' AND outcome = 'ok' ORDER BY id", (town_id,))
        texts = (json.loads(row["arguments"]).get("text") for row in rows)
        return [text for text in texts if isinstance(text, str)]


class UsageWriter(Protocol):
    """Where a UsageLog writes (the Store, which imports this module)."""

    async def add_usage(self, town_id: int, records: list[tuple[int, UsageRecord]]) -> None: ...


class UsageLog:
    """A town's usage sink: each record is written in a short transaction of its own at most
    USAGE_HOLD_S after its call, so a tick killed half-way keeps the calls it paid for.

    Records arriving while a write waits or is under way go in it or the next one; `flush`
    writes all at once.
    A failed write keeps its records for the next try and raises from `flush` (or `take`).
    The tick's commit `take`s those not yet written into its own transaction and gives
    them back if it does not commit (see Store.save_tick).
    """

    def __init__(self, store: UsageWriter, town_id: int, tick: Callable[[], int]) -> None:
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
