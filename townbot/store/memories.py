"""The memories of a town's residents as stored: their rows, their embeddings, their accesses.

A memory row is written once, when the memory is made. Retrieval refreshes a memory's last
access (and scoring replaces a provisional importance), and those changes are appended to
`memory_access` as one row per resident per commit (migrations 4 and 10) instead of rewriting
the memory's row: a resume reads the rows, then the accesses in order, the latest winning.
Once a game day the access log is compacted to one row per resident.

This module knows SQL and numbers, not minds: it hands back `Memory` records and float32
matrices, from which townbot.mind.memory builds a resident's stream.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import aiosqlite
import numpy as np

from townbot.store.errors import StoreError
from townbot.world.clock import format_game_time, parse_game_time

MEMORY_CHUNK = 4096  # memory rows read at a time, so a resume never holds every row at once
MEMORY_INSERT = ("INSERT INTO memories (town_id, agent, seq, kind, text, created, last_accessed, "
                 "importance, embedding, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
ACCESS_INSERT = ("INSERT INTO memory_access (town_id, agent, seqs, times, importances) "
                 "VALUES (?, ?, ?, ?, ?)")
UNIT = "\x1f"  # joins the game times of an access row when they differ
SPARSE = b"s"  # first byte of an embedding stored as its non-zero entries (see pack_vectors)
DAMAGED = "the database is damaged; restore a backup of it or start a new --db"
ENTRY = np.dtype([("index", "<u2"), ("value", "<f4")])  # one non-zero entry, six bytes


@dataclass(slots=True)  # a long-lived town holds tens of thousands: slots keep each small
class Memory:
    """One memory as a resident's stream holds it and the store keeps it; `id` is its
    position in its resident's stream (the row's `seq`)."""

    id: int
    kind: str
    text: str
    created: datetime
    last_accessed: datetime
    importance: int
    evidence: tuple[int, ...] = ()


@dataclass(frozen=True)
class StoredMemory:
    agent: str
    memory: Memory
    vector: np.ndarray


@dataclass(frozen=True)
class MemoryChunk:
    """Some of one resident's stored memories, in order, with their embeddings as one
    (len(memories), dimensions) float32 matrix."""

    agent: str
    memories: list[Memory]
    vectors: np.ndarray


def pack_vectors(vectors: np.ndarray | list[np.ndarray]) -> list[bytes]:
    """Embeddings as stored (schema 5), a row of `vectors` each: its float32 bytes, or, when
    that takes at most three quarters of them, SPARSE and its non-zero entries (index and
    float32 value). A hashing embedder's vectors are mostly zeros and shrink about tenfold; a
    dense model's stay raw. Either way the floats read back are bit for bit the ones written."""
    blobs = []
    for vector in vectors:
        floats = np.asarray(vector, dtype=np.float32)
        (columns,) = np.nonzero(floats.view(np.uint32))  # bits, so -0.0 is kept as written
        if 1 + ENTRY.itemsize * len(columns) > 3 * len(floats) or len(floats) > 65536:
            blobs.append(floats.tobytes())
        else:
            entries = np.empty(len(columns), dtype=ENTRY)
            entries["index"], entries["value"] = columns, floats[columns]
            blobs.append(SPARSE + entries.tobytes())
    return blobs


def unpack_vectors(agent: str, blobs: list[bytes], dim: int) -> np.ndarray:
    """Stored embeddings as one (len(blobs), dim) float32 matrix: a blob of dim floats is raw,
    one starting with SPARSE holds non-zero entries, and any other is zlib-compressed floats
    (written by schema 5's first version)."""
    vectors = np.zeros((len(blobs), dim), dtype=np.float32)
    sparse_rows, entries = [], []  # set in one step: a resume reads tens of thousands
    try:
        for row, blob in enumerate(blobs):
            if len(blob) == 4 * dim:
                vectors[row] = np.frombuffer(blob, dtype=np.float32)
            elif blob[:1] == SPARSE and (len(blob) - 1) % ENTRY.itemsize == 0:
                sparse_rows.append(row)
                entries.append(blob[1:])
            else:
                vectors[row] = np.frombuffer(zlib.decompress(blob), dtype=np.float32)
        if sparse_rows:
            counts = [len(part) // ENTRY.itemsize for part in entries]
            stored = np.frombuffer(b"".join(entries), dtype=ENTRY)
            vectors[np.repeat(sparse_rows, counts), stored["index"]] = stored["value"]
    except (zlib.error, ValueError, IndexError, TypeError) as error:
        raise StoreError(f"the memories of {agent} have embeddings that are not {dim} numbers: "
                         f"{DAMAGED}") from error
    return vectors


def damaged(path: str, problem: object, what: str = "memories") -> StoreError:
    return StoreError(f"the {what} in {path} cannot be read ({problem}): {DAMAGED}")


# --- reading ---------------------------------------------------------------------------------

Access = tuple[str, int]  # (game time, importance) logged last for a memory


async def latest_accesses(db: aiosqlite.Connection, town_id: int, agent: str | None = None
                          ) -> tuple[dict[str, dict[int, Access]], int]:
    """By resident and position, the last access and importance logged for each memory whose
    row they override, read from memory_access in the order written, and the id of the last
    row read (0: none); ValueError if a row is damaged."""
    only = " AND agent = ?" if agent is not None else ""
    args = (town_id,) if agent is None else (town_id, agent)
    latest: dict[str, dict[int, Access]] = {}
    last = 0
    async with db.execute(f"SELECT id, agent, seqs, times, importances FROM memory_access WHERE "
                          f"town_id = ?{only} ORDER BY id", args) as cursor:
        async for row_id, name, seqs, times, importances in cursor:
            latest.setdefault(name, {}).update(logged_row(seqs, times, importances))
            last = row_id
    return latest, last


def logged_row(seqs: str, times: str, importances: str) -> dict[int, Access]:
    """A row of memory_access as its memories' (position: access); ValueError if damaged."""
    positions = [int(seq) for seq in str(seqs).split(",")]
    scores = [int(score) for score in str(importances).split(",")]
    whens = str(times).split(UNIT)
    if len(whens) == 1:  # one game time for all
        whens *= len(positions)
    return dict(zip(positions, zip(whens, scores, strict=True), strict=True))


async def memory_chunks(db: aiosqlite.Connection, path: str, town_id: int,
                        agent: str | None = None) -> AsyncIterator[MemoryChunk]:
    """A town's memories, read in the order they were written (see migration 6) MEMORY_CHUNK
    rows at a time: each chunk is one resident's next memories among those rows, with the
    accesses logged since applied. Each resident's chunks come in order of position."""
    async with db.execute("SELECT embedding_dim FROM towns WHERE id = ?", (town_id,)) as cursor:
        found = await cursor.fetchone()
    if found is None:
        raise StoreError(f"{path} has no town {town_id}")
    dim = int(found[0])
    try:
        latest, _ = await latest_accesses(db, town_id, agent)
    except ValueError as error:
        raise damaged(path, error, "memory accesses logged") from error
    only = " AND agent = ?" if agent is not None else ""
    args: tuple[Any, ...] = (town_id,) if agent is None else (town_id, agent)
    async with db.execute("SELECT max(id) FROM memories") as cursor:
        last = (await cursor.fetchone())[0] or 0
    reader = _ChunkReader(path, dim, latest)
    for after in range(0, last, MEMORY_CHUNK):  # rowids: a range is read in their order
        async with db.execute(
                "SELECT agent, seq, kind, text, created, last_accessed, importance, evidence, "
                f"embedding FROM memories WHERE town_id = ?{only} AND id > ? AND id <= ? "
                "ORDER BY id", (*args, after, after + MEMORY_CHUNK)) as cursor:
            rows = await cursor.fetchall()
        for chunk in reader.chunks(rows):
            yield chunk


class _ChunkReader:
    """Rows of memories as each resident's chunks, checking that each continues its stream."""

    def __init__(self, path: str, dim: int, latest: dict[str, dict[int, Access]]) -> None:
        self.path, self.dim, self.latest = path, dim, latest
        self.moment = lru_cache(maxsize=None)(parse_game_time)  # a tick's share theirs
        self.kinds: dict[str, str] = {}  # and every memory of a kind one string
        self.next_seq: dict[str, int] = {}

    def chunks(self, rows: list[Any]) -> list[MemoryChunk]:
        by_agent: dict[str, list[Any]] = {}
        for row in rows:
            by_agent.setdefault(row[0], []).append(row)
        return [MemoryChunk(agent, self.memories(agent, mine),
                            unpack_vectors(agent, [row[8] for row in mine], self.dim))
                for agent, mine in by_agent.items()]

    def memories(self, agent: str, rows: list[Any]) -> list[Memory]:
        first = self.next_seq.get(agent, 0)
        if [row[1] for row in rows] != list(range(first, first + len(rows))):
            raise StoreError(f"the memories of {agent} in {self.path} are not stored in order "
                             f"(positions missing or repeated): {DAMAGED}")
        self.next_seq[agent] = first + len(rows)
        logged = self.latest.get(agent, {})
        memories = []
        try:
            for _, seq, kind, text, created, accessed, importance, evidence, _ in rows:
                accessed, importance = logged.get(seq, (accessed, importance))
                memories.append(Memory(seq, self.kinds.setdefault(kind, kind), text,
                                       self.moment(created), self.moment(accessed),
                                       int(importance),
                                       () if evidence == "[]" else tuple(json.loads(evidence))))
        except (ValueError, TypeError) as error:
            raise damaged(self.path, error) from error
        return memories


# --- writing (rows for the tick's transaction) -----------------------------------------------

def memory_rows(town: int, new: list[tuple[str, Memory, np.ndarray]]) -> list[tuple[Any, ...]]:
    """The rows of MEMORY_INSERT for new memories (resident, memory, embedding)."""
    blobs = pack_vectors([vector for _, _, vector in new])
    return [(town, agent, m.id, m.kind, m.text, format_game_time(m.created),
             format_game_time(m.last_accessed), m.importance, blob, json.dumps(list(m.evidence)))
            for (agent, m, _), blob in zip(new, blobs, strict=True)]


def access_rows(town: int, touched: list[tuple[str, list[Memory]]]) -> list[tuple[Any, ...]]:
    """The rows of ACCESS_INSERT for re-accessed (or re-scored) memories: one a resident."""
    return [_access_row(town, agent, [m.id for m in memories],
                        [format_game_time(m.last_accessed) for m in memories],
                        [m.importance for m in memories])
            for agent, memories in touched if memories]


def _access_row(town: int, agent: str, seqs: list[int], times: list[str],
                importances: list[int]) -> tuple[Any, ...]:
    """One row of memory_access: numbers joined by ", ", and one game time when all share it."""
    return (town, agent, ", ".join(map(str, seqs)),
            times[0] if len(set(times)) == 1 else UNIT.join(times),
            ", ".join(map(str, importances)))


async def compact_accesses(db: aiosqlite.Connection, town: int) -> None:
    """Put the town's logged accesses in one row per resident, holding the latest entry of each
    of its memories, after the rows they replace, which are then deleted (inside the tick's
    transaction, once a game day)."""
    latest, last = await latest_accesses(db, town)
    if not last:
        return
    rows = []
    for agent, logged in latest.items():
        seqs = sorted(logged)
        rows.append(_access_row(town, agent, seqs, [logged[seq][0] for seq in seqs],
                                [logged[seq][1] for seq in seqs]))
    await db.executemany(ACCESS_INSERT, rows)
    await db.execute("DELETE FROM memory_access WHERE town_id = ? AND id <= ?", (town, last))


async def write_embeddings(db: aiosqlite.Connection, town_id: int,
                           vectors: list[tuple[str, int, np.ndarray]]) -> None:
    """Give every listed memory (resident, position) a new embedding (inside the caller's
    transaction)."""
    async with db.execute("SELECT agent, seq, id FROM memories WHERE town_id = ?",
                          (town_id,)) as cursor:  # no index on (agent, seq): one pass
        ids = {(row[0], row[1]): row[2] for row in await cursor.fetchall()}
    blobs = pack_vectors([vector for _, _, vector in vectors])
    await db.executemany("UPDATE memories SET embedding = ? WHERE id = ?",
                         [(blob, ids[agent, seq]) for (agent, seq, _), blob
                          in zip(vectors, blobs, strict=True) if (agent, seq) in ids])
