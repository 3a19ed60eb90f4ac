"""The Store: every read and write of a town's database goes through here. Its parts live by
what they keep: the schema and its migrations (store/migrations.py), the town, its residents
and its posts (store/towns.py), usage and audit rows (store/usage.py), what one commit writes
(store/ticks.py), and memories (here). The store keeps what it is given: minds and bodies come
as JSON made by their own modules."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import zlib
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

import aiosqlite
import numpy as np

from townbot.llm.port import UsageRecord
from townbot.mind.memory import KIND_CODES, KINDS, Memory, SparseVectors, StoredColumns, hours_since_epoch
from townbot.store.begin import begin_writing
from townbot.store.disk import (
    check_database_file,
    check_townbot_schema,
    os_write_error,
    remove_database_files,
    sqlite_write_error,
)
from townbot.store.errors import StoreError
from townbot.store.migrations import check_version, migrate
from townbot.store.packs import PackedChunk, grouped, pack_chunk, unpack_chunk
from townbot.store.ticks import ConversationRecord, TickChanges, TickWrite, roll_back
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
from townbot.world.clock import format_game_time, parse_game_time

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
# A tick's memories and accesses share a few game times: their text is kept, not made again.
_time_text = lru_cache(maxsize=4096)(format_game_time)


SPARSE = b"s"  # first byte of an embedding stored as its non-zero entries (see pack_vector)
ENTRY = np.dtype([("index", "<u2"), ("value", "<f4")])  # one non-zero entry, six bytes


def pack_vector(vector: np.ndarray) -> bytes:
    """An embedding as stored (schema 5): its float32 bytes, or, when that takes at most three
    quarters of them, SPARSE and its non-zero entries (index and float32 value). A hashing
    embedder's vectors are mostly zeros and shrink about tenfold; a dense model's stay raw.
    Either way the floats read back are bit for bit the ones written, and a whole chunk of
    sparse ones is read back in a few numpy operations."""
    return pack_vectors([vector])[0]


def pack_vectors(vectors: list[np.ndarray]) -> list[bytes]:
    """`pack_vector` of each, found in one pass over their matrix: a tick stores hundreds of
    memories, and a dozen numpy calls per vector cost more than the packing itself. The
    packed rows are laid out in one buffer (each SPARSE byte, then its entries) and cut
    from it: no bytes joined row by row."""
    if not vectors:
        return []
    # np.array, not np.stack (which handles each vector in Python), and the non-zero bits
    # found from a mask (np.flatnonzero of the raw words was ten times slower): at 392
    # vectors of 256 the two took 0.55 ms of the 0.75 ms this took.
    floats = np.array(vectors, dtype=np.float32).reshape(len(vectors), -1)
    count, dim = floats.shape
    where = np.flatnonzero(floats.view(np.uint32) != 0)  # bits, so -0.0 is kept as written
    rows = where // dim
    sizes = 1 + ENTRY.itemsize * np.bincount(rows, minlength=count)
    sparse = (4 * sizes <= 3 * 4 * dim) & (dim <= 65536)
    entries = np.empty(len(where), dtype=ENTRY)
    entries["index"], entries["value"] = where - rows * dim, floats.reshape(-1)[where]
    ends = np.cumsum(sizes)
    starts = ends - sizes
    buffer = np.full(int(ends[-1]), SPARSE[0], dtype=np.uint8)
    entry_bytes = np.ones(len(buffer), dtype=bool)
    entry_bytes[starts] = False  # every byte but each row's first holds its entries
    buffer[entry_bytes] = entries.view(np.uint8)
    packed = buffer.tobytes()
    return [packed[start:end] if small else floats[row].tobytes() for row, (start, end, small)
            in enumerate(zip(starts.tolist(), ends.tolist(), sparse.tolist(), strict=True))]


def unpack_vectors(agent: str, blobs: list[bytes], dim: int) -> np.ndarray:
    """Stored embeddings as one (len(blobs), dim) float32 matrix: a blob of dim floats is raw,
    one starting with SPARSE holds non-zero entries, and any other is zlib-compressed floats
    (written by this schema's first version)."""
    size = 4 * dim
    if all(len(blob) == size for blob in blobs):
        return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim)
    vectors = np.zeros((len(blobs), dim), dtype=np.float32)
    sparse_rows, entries = [], []
    try:
        for row, blob in enumerate(blobs):
            if len(blob) == size:
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
    except (zlib.error, ValueError, IndexError) as error:
        raise StoreError(f"the memories of {agent} have embeddings that are not {dim} numbers: "
                         "the database is damaged; restore a backup of it or start a new --db") \
            from error
    return vectors


MEMORY_CHUNK = 4096  # memory rows read at a time (about 4 MB of 256-dimension embeddings)
UNIT = "\x1f"  # joins the values of a column read as one string (see MEMORY_COLUMNS) ...
RECORD = "\x1e"  # ... and texts, which are looked at before they are cut at it
# A chunk of memory rows read as one row of joined columns: SQLite joins them in C, where making
# a Python tuple and a value per row and column took most of a resume's time. Names, kinds, game
# times and evidence lists never hold UNIT (a control character: names from files are cleaned of
# them); a chunk where some text holds RECORD has its texts read again row by row; embeddings
# are joined with nothing between them, beside their lengths. Rows come in the order they were
# written (see migration 6), which keeps each agent's in order of position.
MEMORY_COLUMNS = (
    "SELECT count(*), group_concat(agent, char(31)), group_concat(seq), "
    "group_concat(kind, char(31)), group_concat(text, char(30)), group_concat(created, char(31)), "
    "group_concat(last_accessed, char(31)), group_concat(importance), "
    "group_concat(evidence, char(31)), CAST(group_concat(embedding, '') AS BLOB), "
    "group_concat(length(embedding)) FROM memories WHERE town_id = ?{agent} AND id > ? AND "
    "id <= ?")
# A chunk's embeddings alone, for a pack that does not keep them (see pack_memories).
EMBEDDING_COLUMNS = (
    "SELECT count(*), CAST(group_concat(embedding, '') AS BLOB), group_concat(length(embedding)) "
    "FROM memories WHERE town_id = ? AND id > ? AND id <= ?")
PACK_COLUMNS = ("SELECT upto, head, texts, data FROM memory_packs WHERE town_id = ? AND "
                "after = ? AND upto > after AND upto <= ?")
# The rows of memory_access after one, in order (see migration 10): how many, their agents, how
# many memories each logs, then their positions and importances joined as one column each, and
# their times a row per RECORD.
ACCESS_COLUMNS = (
    "SELECT count(*), group_concat(agent, char(31)), "
    "group_concat(length(seqs) - length(replace(seqs, ',', '')) + 1), group_concat(seqs), "
    "group_concat(times, char(30)), group_concat(importances) FROM (SELECT * FROM "
    "memory_access WHERE town_id = ?{agent} AND id > ? ORDER BY id)")
ACCESS_INSERT = ("INSERT INTO memory_access (town_id, agent, seqs, times, importances) "
                 "VALUES {rows}")  # see TickWrite.rows
# The last access and importance logged for each memory up to a row of memory_access (see
# pack_accesses): by agent, the positions ascending, their game times (as indexes into the head's
# table of them) and importances.
ACCESS_PACK = "SELECT upto, head, data FROM access_packs WHERE town_id = ?"


@dataclass(frozen=True)
class StoredMemory:
    agent: str
    memory: Memory
    vector: np.ndarray


class MemoryChunk:
    """Some of one agent's stored memories, in order, and their embeddings row by row: as
    stored (`packed`: a matrix, or a hashing embedder's non-zero entries), or as one matrix."""

    def __init__(self, agent: str, memories: list[Memory], packed: np.ndarray | SparseVectors,
                 columns: StoredColumns | None = None) -> None:
        self.agent, self.memories, self.packed, self.columns = agent, memories, packed, columns

    @property
    def vectors(self) -> np.ndarray:  # (len(memories), dimensions) float32
        return self.packed.dense() if isinstance(self.packed, SparseVectors) else self.packed


@dataclass(frozen=True)
class Logged:
    """One agent's memories with an access logged: positions ascending, each with the game
    time and importance logged last for it."""

    seqs: np.ndarray
    times: list[str]
    importance: np.ndarray

    @classmethod
    def last_of(cls, rows: np.ndarray, seqs: np.ndarray, times: list[str],
                importance: np.ndarray) -> Logged:
        """From log rows (indexes into the columns, in the order written): a later row for a
        memory overrides an earlier."""
        order = rows[np.argsort(seqs[rows], kind="stable")]
        ordered = seqs[order]
        last = np.append(ordered[1:] != ordered[:-1], True)  # the last written of each position
        kept = order[last]
        return cls(ordered[last], [times[row] for row in kept.tolist()], importance[kept])

    def followed_by(self, later: Logged) -> Logged:
        """These with `later`'s logged after them."""
        seqs = np.concatenate([self.seqs, later.seqs])
        return Logged.last_of(np.arange(len(seqs)), seqs, self.times + later.times,
                              np.concatenate([self.importance, later.importance]))


def access_pack(latest: dict[str, Logged]) -> tuple[str, bytes]:
    """`latest` as access_packs keeps it: a JSON head (agents and their counts, the distinct
    game times) and the positions, time indexes and importances as int64, int32, int64."""
    index: dict[str, int] = {}
    times = [index.setdefault(text, len(index)) for logged in latest.values() for text in logged.times]
    head = json.dumps({"agents": [[agent, len(logged.seqs)] for agent, logged in latest.items()],
                       "times": list(index)}, ensure_ascii=False)
    parts = list(latest.values())
    return head, b"".join([np.concatenate([np.zeros(0, np.int64)] + [p.seqs for p in parts])
                           .astype("<i8").tobytes(), np.array(times, dtype="<i4").tobytes(),
                           np.concatenate([np.zeros(0, np.int64)] + [p.importance for p in parts])
                           .astype("<i8").tobytes()])


def read_access_pack(head: str, data: bytes) -> dict[str, Logged]:
    """A stored access pack read back; ValueError when it is not one (damaged)."""
    try:
        fields = json.loads(head)
        agents = [(str(agent), int(count)) for agent, count in fields["agents"]]
        times = list(map(str, fields["times"]))
    except (TypeError, KeyError) as error:
        raise ValueError(f"an access pack's head is not one ({error})") from error
    rows = sum(count for _, count in agents)
    if len(data) != 20 * rows or min((count for _, count in agents), default=1) < 1:
        raise ValueError("an access pack's arrays do not fit its rows")
    seqs = np.frombuffer(data, "<i8", rows)
    ids = np.frombuffer(data, "<i4", rows, 8 * rows)
    importance = np.frombuffer(data, "<i8", rows, 12 * rows).astype(np.int64)
    if rows and (ids.min() < 0 or ids.max() >= len(times)):
        raise ValueError("an access pack's game times do not fit its rows")
    latest, start = {}, 0
    texts = list(map(times.__getitem__, ids.tolist()))
    for agent, count in agents:
        mine = seqs[start: start + count].astype(np.int64)
        if (np.diff(mine) <= 0).any():
            raise ValueError("an access pack's positions are not ascending")
        latest[agent] = Logged(mine, texts[start: start + count], importance[start: start + count])
        start += count
    return latest


class _MemoryReader:
    """Chunks of memory rows, each read as one row of MEMORY_COLUMNS, as each agent's next
    memories and their embeddings, checking that they continue the agent's stream. `latest`
    holds, by agent, the last access and importance logged for its memories since their rows
    were written (migration 4): their positions ascending, their game times and importances."""

    def __init__(self, path: str, dim: int, latest: dict[str, Logged]) -> None:
        self.path, self.dim, self.latest = path, dim, latest
        self.times: dict[str, datetime] = {}  # game times parsed so far (a tick's share theirs)
        self.hours: dict[str, float] = {}  # and their hours_since_epoch
        self.next_seq: dict[str, int] = {}
        # For packed chunks: each game time seen so far by its index in these lists.
        self.time_ids: dict[str, int] = {}
        self.moment_list: list[datetime] = []
        self.hour_list: list[float] = []

    def chunks(self, row: tuple, texts: list[str]) -> list[MemoryChunk]:
        """A chunk's row of columns (with its texts, cut apart) as each agent's memories."""
        count = row[0]
        try:
            if len(texts) != count:
                raise ValueError("the texts are not one a row")
            agents, seqs = _joined(row[1], count), _numbers(row[2], count)
            accessed, importance = _joined(row[6], count), _numbers(row[7], count)
            rows_of = _rows_by_agent(agents)
            if self.latest:
                self._logged(rows_of, seqs, accessed, importance)
            importance = importance.tolist()
            evidence = [() if cited == "[]" else _evidence(cited) for cited in _joined(row[8], count)]
            kinds = _joined(row[3], count)
            memories = list(map(Memory, seqs.tolist(), kinds, texts,
                                self._moments(_joined(row[5], count)), self._moments(accessed),
                                importance, evidence))
            lengths = _numbers(row[10], count)
            columns = (texts, _kind_codes(kinds), np.array(importance, dtype=np.float32),
                       np.fromiter(map(self.hours.__getitem__, accessed), np.float64, count))
        except ValueError as error:
            raise StoreError(f"the memories in {self.path} cannot be read ({error}): the database "
                             "is damaged; restore a backup of it or start a new --db") from error
        vectors = self.vectors(row[9] or b"", lengths, rows_of)
        chunks = []
        for agent, rows in rows_of.items():
            mine = self._continued(agent, rows, seqs, memories)
            picked = np.array(rows)
            theirs = StoredColumns([texts[row] for row in rows], *(c[picked] for c in columns[1:]))
            chunks.append(MemoryChunk(agent, mine, vectors[agent], theirs))
        return chunks

    def vectors(self, blob: bytes, lengths: np.ndarray, rows_of: dict[str, list[int]]
                ) -> dict[str, np.ndarray | SparseVectors]:
        """The embeddings joined in `blob`, each agent's rows as one matrix (or its entries)."""
        vectors = _vectors_by_agent(blob, lengths, self.dim, rows_of)
        if vectors is not None:
            return vectors
        # some embedding neither raw nor sparse: zlib-packed (or damaged)
        ends = np.cumsum(lengths).tolist()
        return {agent: unpack_vectors(agent, [blob[ends[row] - lengths[row]: ends[row]]
                                              for row in rows], self.dim)
                for agent, rows in rows_of.items()}

    def packed(self, row: tuple, texts: list[str]) -> tuple[str, str, bytes] | None:
        """A full chunk's row of columns, as logged accesses left it unread, in the form
        memory_packs keeps (see townbot.store.packs); None when it is damaged or out of order
        (its rows then stay the only copy, and say what is wrong when read)."""
        count = row[0]
        try:
            if len(texts) != count:
                return None
            agents, seqs, lengths = _joined(row[1], count), _numbers(row[2], count), \
                _numbers(row[10], count)
            kinds = _kind_codes(_joined(row[3], count))
            created, accessed = _joined(row[5], count), _joined(row[6], count)
            importance, evidence = _numbers(row[7], count), _joined(row[8], count)
        except ValueError:
            return None
        rows_of = _rows_by_agent(agents)
        blob = row[9] or b""
        vectors = _vectors_by_agent(blob, lengths, self.dim, rows_of)
        sparse = vectors is not None and all(isinstance(v, SparseVectors) for v in vectors.values()) \
            and ENTRY.itemsize * sum(len(v.row) for v in vectors.values()) <= len(blob)  # type: ignore[union-attr]
        chunk = grouped(agents, seqs, kinds, texts, created, accessed, importance, evidence,
                        rows_of, vectors if sparse else None)  # type: ignore[arg-type]
        return None if chunk is None else pack_chunk(chunk)

    def unpacked(self, chunk: PackedChunk, embeddings: tuple[bytes, np.ndarray] | None
                 ) -> list[MemoryChunk]:
        """A packed chunk as each agent's memories (with the accesses logged since applied);
        `embeddings` (the chunk's joined blob and lengths in rowid order) when the pack has
        none."""
        ids = self._time_ids(chunk.times)
        created, accessed = ids[chunk.created], ids[chunk.accessed]
        importance = chunk.importance.copy()
        starts = np.cumsum([0] + [part.count for part in chunk.parts]).tolist()
        if self.latest:
            self._logged_into(chunk, starts, accessed, importance)
        try:
            table = [() if cited == "[]" else _evidence(cited) for cited in chunk.evidence_table]
        except ValueError as error:
            raise StoreError(f"the memories in {self.path} cannot be read ({error}): the database "
                             "is damaged; restore a backup of it or start a new --db") from error
        kinds = list(map(KINDS.__getitem__, chunk.kinds.tolist()))
        made, at = list(map(self.moment_list.__getitem__, created.tolist())), \
            list(map(self.moment_list.__getitem__, accessed.tolist()))
        evidence, scores = list(map(table.__getitem__, chunk.evidence.tolist())), importance.tolist()
        hours = np.array(self.hour_list)[accessed]
        vectors = self._packed_vectors(chunk, starts, embeddings)
        chunks = []
        for part, start, end in zip(chunk.parts, starts, starts[1:], strict=False):
            self._follows(part.agent, part.first, part.count)
            mine = list(map(Memory, range(part.first, part.first + part.count), kinds[start:end],
                            chunk.texts[start:end], made[start:end], at[start:end],
                            scores[start:end], evidence[start:end]))
            theirs = StoredColumns(chunk.texts[start:end], chunk.kinds[start:end],
                                   importance[start:end].astype(np.float32), hours[start:end])
            chunks.append(MemoryChunk(part.agent, mine, vectors[part.agent], theirs))
        return chunks

    def _packed_vectors(self, chunk: PackedChunk, starts: list[int],
                        embeddings: tuple[bytes, np.ndarray] | None
                        ) -> dict[str, np.ndarray | SparseVectors]:
        if chunk.entries is None:
            assert embeddings is not None
            order = chunk.order.tolist()
            return self.vectors(*embeddings, {part.agent: order[start:end] for part, start, end
                                              in zip(chunk.parts, starts, starts[1:], strict=False)})
        assert chunk.nonzero is not None
        rows = np.repeat(np.arange(len(chunk.nonzero)), chunk.nonzero)
        bounds = np.cumsum([0, *chunk.nonzero.tolist()])[starts].tolist()
        return {part.agent: SparseVectors(part.count, self.dim, rows[begin:end] - start,
                                          chunk.entries["index"][begin:end],
                                          chunk.entries["value"][begin:end])
                for part, start, begin, end in zip(chunk.parts, starts, bounds, bounds[1:],
                                                   strict=False)}

    def _time_ids(self, texts: list[str]) -> np.ndarray:
        """Each game time's index in moment_list and hour_list (parsed the first time seen)."""
        ids = self.time_ids
        try:
            for text in texts:
                if text not in ids:
                    moment = self.times[text] if text in self.times else parse_game_time(text)
                    ids[text] = len(self.moment_list)
                    self.moment_list.append(moment)
                    self.hour_list.append(hours_since_epoch(moment))
        except ValueError as error:
            raise StoreError(f"the memories in {self.path} cannot be read ({error}): the database "
                             "is damaged; restore a backup of it or start a new --db") from error
        return np.fromiter(map(ids.__getitem__, texts), np.intp, len(texts))

    def _logged_into(self, chunk: PackedChunk, starts: list[int], accessed: np.ndarray,
                     importance: np.ndarray) -> None:
        """The last access and importance logged for a packed chunk's memories, in place."""
        for part, start in zip(chunk.parts, starts, strict=False):
            logged = self.latest.get(part.agent)
            if logged is None:
                continue
            low, high = np.searchsorted(logged.seqs, [part.first, part.first + part.count]).tolist()
            if low < high:
                rows = logged.seqs[low:high] - part.first + start
                accessed[rows] = self._time_ids(logged.times[low:high])
                importance[rows] = logged.importance[low:high]

    def _moments(self, texts: list[str]) -> list[datetime]:
        times = self.times
        for text in set(texts).difference(times):
            times[text] = parse_game_time(text)
            self.hours[text] = hours_since_epoch(times[text])
        return list(map(times.__getitem__, texts))

    def _logged(self, rows_of: dict[str, list[int]], seqs: np.ndarray, accessed: list[str],
                importance: np.ndarray) -> None:
        """Each row's last access and importance as logged last, where logged, in place."""
        for agent, rows in rows_of.items():
            logged = self.latest.get(agent)
            if logged is None:
                continue
            mine = np.asarray(rows)
            found = np.searchsorted(logged.seqs, seqs[mine])
            hit = found < len(logged.seqs)
            hit[hit] = logged.seqs[found[hit]] == seqs[mine[hit]]
            for row, entry in zip(mine[hit].tolist(), found[hit].tolist(), strict=True):
                accessed[row] = logged.times[entry]
            importance[mine[hit]] = logged.importance[found[hit]]

    def _continued(self, agent: str, rows: list[int], seqs: np.ndarray,
                   memories: list[Memory]) -> list[Memory]:
        """The agent's memories among a chunk's, after checking that they come next in its
        stream."""
        first = self.next_seq.get(agent, 0)
        in_order = np.array_equal(seqs[rows], np.arange(first, first + len(rows)))
        self._follows(agent, first if in_order else -1, len(rows))
        return [memories[row] for row in rows]

    def _follows(self, agent: str, first: int, count: int) -> None:
        """Check that `count` memories of `agent` from position `first` come next in its stream."""
        if first != self.next_seq.get(agent, 0):
            raise StoreError(f"the memories of {agent} in {self.path} are not stored in order "
                             "(positions missing or repeated): the database is damaged; restore "
                             "a backup of it or start a new --db")
        self.next_seq[agent] = first + count


def _kind_codes(kinds: list[str]) -> np.ndarray:
    codes = np.fromiter(map(KIND_CODES.get, kinds, repeat(-1)), dtype=np.int8, count=len(kinds))
    if (codes < 0).any():
        unknown = kinds[int(np.argmin(codes))]
        raise ValueError(f"unknown memory kind '{unknown}'; expected one of {', '.join(KINDS)}")
    return codes


def _joined(value: str | None, count: int, unit: str = UNIT) -> list[str]:
    """A column read joined by `unit`, as its `count` values."""
    values = value.split(unit) if count else []
    if len(values) != count:
        raise ValueError("a column has more or fewer values than rows")
    return values


def _numbers(value: str | None, count: int) -> np.ndarray:
    """A column of integers read joined by commas, as its `count` values."""
    numbers = np.fromstring(value or "", dtype=np.int64, sep=",")
    if len(numbers) != count:
        raise ValueError("a column has more or fewer numbers than rows")
    return numbers


def _access_entries(row: tuple) -> tuple[dict[str, list[int]], np.ndarray, list[str], np.ndarray]:
    """A row of ACCESS_COLUMNS as its memories logged: by agent in order of their first row,
    the indexes of theirs, in order; then the positions, game times and importances of all."""
    count, agents, sizes, seqs, times, importances = row
    names, counts = _joined(agents, count), _numbers(sizes, count)
    total = int(counts.sum())
    positions, scores = _numbers(seqs, total), _numbers(importances, total)
    texts: list[str] = []
    rows_of: dict[str, list[int]] = {}
    for name, size, joined in zip(names, counts.tolist(), _joined(times, count, RECORD),
                                  strict=True):
        start, some = len(texts), joined.split(UNIT)
        if len(some) == size:
            texts += some
        elif len(some) == 1:  # one time for all
            texts += some * size
        else:
            raise ValueError("a row has more or fewer game times than memories")
        rows_of.setdefault(name, []).extend(range(start, start + size))
    return rows_of, positions, texts, scores


def _access_row(town: int, agent: str, seqs: list[int], times: list[str],
                importances: list[int]) -> tuple[Any, ...]:
    """The values of one row of memory_access (see migration 10). A list's repr joins whole
    numbers with ", " in one call (a third fewer steps than joining their str), and SQLite and
    numpy read them back as they read numbers joined by group_concat."""
    first = times[0]
    return (town, agent, repr(seqs)[1:-1],
            first if times.count(first) == len(times) else UNIT.join(times),
            repr(importances)[1:-1])


def _rows_by_agent(agents: list[str]) -> dict[str, list[int]]:
    """Each agent's rows, in order, by agent in order of their first row."""
    rows: dict[str, list[int]] = {}
    for row, agent in enumerate(agents):
        mine = rows.get(agent)
        if mine is None:
            mine = rows[agent] = []
        mine.append(row)
    return rows


def _vectors_by_agent(blob: bytes, lengths: np.ndarray, dim: int, rows_of: dict[str, list[int]]
                      ) -> dict[str, np.ndarray | SparseVectors] | None:
    """The embeddings joined in `blob` (each as long as `lengths` says), each agent's rows as
    one (rows, dim) float32 matrix, read in a few numpy operations when each is raw or sparse
    (see pack_vector): copied out of the blob when all are raw, else kept as their entries
    until the matrix is asked for. None when there is some other (zlib-packed, or damaged)."""
    size, count = 4 * dim, len(lengths)
    if len(blob) == count * size and (lengths == size).all():
        matrix = np.frombuffer(blob, dtype=np.float32).reshape(count, dim)
        return {agent: matrix[rows] for agent, rows in rows_of.items()}
    entries = _entries(blob, lengths, dim)
    if entries is None:
        return None
    # Entries moved agent by agent (each agent's rows in order), so that each agent's are a
    # run: a row's entries go where its place in that order says (counted, not sorted).
    rows, index, value = entries
    order = np.concatenate([np.array(mine) for mine in rows_of.values()])
    counts = np.bincount(rows, minlength=count)
    placed = np.empty(count, dtype=np.int64)  # each row's place in that order ...
    placed[order] = np.arange(count)
    first = np.empty(count, dtype=np.int64)  # ... and where its first entry goes
    first[order] = np.cumsum(counts[order]) - counts[order]
    target = first[rows] + np.arange(len(rows)) - (np.cumsum(counts) - counts)[rows]
    moved = [np.empty_like(column) for column in (rows, index, value)]
    moved[0][target], moved[1][target], moved[2][target] = placed[rows], index, value
    starts = np.cumsum([0, *map(len, rows_of.values())])
    bounds = np.searchsorted(moved[0], starts).tolist()
    return {agent: SparseVectors(len(mine), dim, moved[0][begin:end] - start,
                                 moved[1][begin:end], moved[2][begin:end])
            for agent, mine, start, begin, end in zip(rows_of, rows_of.values(), starts.tolist(),
                                                      bounds, bounds[1:], strict=False)}


def _entries(blob: bytes, lengths: np.ndarray, dim: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The (row, index, value) of every non-zero entry of the embeddings joined in `blob`
    (of a raw one, every entry), row by row, when each is raw or sparse; None when one is not."""
    data = np.frombuffer(blob, dtype=np.uint8)
    starts = np.cumsum(lengths) - lengths
    raw = lengths == 4 * dim
    sparse_rows = np.flatnonzero(~raw)
    counts, left = np.divmod(lengths[sparse_rows] - 1, ENTRY.itemsize)
    if not len(lengths) or starts[-1] + lengths[-1] != len(data) or (counts < 0).any() \
            or left.any() or (data[starts[sparse_rows]] != SPARSE[0]).any():
        return None
    # The bytes of sparse embeddings but their first (SPARSE).
    kept = np.repeat(~raw, lengths) if raw.any() else np.ones(len(data), dtype=bool)
    kept[starts[sparse_rows]] = False
    entries = data[kept].view(ENTRY)
    if len(entries) and entries["index"].max() >= dim:
        return None
    rows, index, value = np.repeat(sparse_rows, counts), entries["index"], entries["value"]
    if raw.any():  # rare: a dense model's vectors, or a hashing vector with many words
        raw_rows = np.flatnonzero(raw)
        rows = np.concatenate([rows, np.repeat(raw_rows, dim)])
        index = np.concatenate([index, np.tile(np.arange(dim), len(raw_rows))])
        value = np.concatenate([value, data[np.repeat(raw, lengths)].view(np.float32)])
        in_order = np.argsort(rows, kind="stable")
        rows, index, value = rows[in_order], index[in_order], value[in_order]
    return rows, index, value


def _evidence(text: str) -> tuple[int, ...]:
    return tuple(json.loads(text))


def _log_accesses(write: TickWrite, town: int, touched: list[tuple[str, list[Memory]]],
                  compact: bool) -> None:
    """Append re-accessed memories' last access and importance (see migrations 4 and 10), a
    row for each agent's (an agent's memories come as one list: no tuple a memory to make
    and take apart, about a thousand a tick at 100 residents)."""
    values: list[Any] = []
    for agent, memories in touched:
        if not memories:
            continue
        whens = [m.last_accessed for m in memories]
        first = whens[0]  # nearly always the time of them all: their text is made once
        times = [_time_text(first)] if whens.count(first) == len(whens) else \
            list(map(_time_text, whens))
        values += _access_row(town, agent, [m.id for m in memories], times,
                              [m.importance for m in memories])
    write.rows(ACCESS_INSERT, 5, values)
    if compact:
        write.steps.append(lambda db: _compact_accesses(db, town))


async def _compact_accesses(db: aiosqlite.Connection, town: int) -> None:
    """Put the town's logged accesses in one row per agent, holding the latest entry of each
    of its memories, after the rows they replace, which are then deleted (once a game day).
    Rows after an access pack's still give it their latest."""
    async with db.execute(ACCESS_COLUMNS.format(agent=""), (town, 0)) as cursor:
        row = tuple(await cursor.fetchone())
    if not row[0]:
        return
    async with db.execute("SELECT max(id) FROM memory_access WHERE town_id = ?",
                          (town,)) as cursor:
        [(last,)] = await cursor.fetchall()
    rows_of, positions, times, scores = _access_entries(row)
    values: list[Any] = []
    for agent, rows in rows_of.items():
        latest = Logged.last_of(np.asarray(rows), positions, times, scores)
        values += _access_row(town, agent, latest.seqs.tolist(), latest.times,
                              latest.importance.tolist())
    await db.executemany(ACCESS_INSERT.format(rows="(?, ?, ?, ?, ?)"),
                         [tuple(values[start:start + 5]) for start in range(0, len(values), 5)])
    await db.execute("DELETE FROM memory_access WHERE town_id = ? AND id <= ?", (town, last))


def _memory_values(town: int, new: list[tuple[str, Memory, np.ndarray]]) -> list[Any]:
    """The new memories' rows, one column after another (see TickWrite.rows)."""
    values: list[Any] = []
    for (agent, m, _), vector in zip(new, pack_vectors([v for _, _, v in new]), strict=True):
        values += (town, agent, m.id, m.kind, m.text, _time_text(m.created),
                   _time_text(m.last_accessed), m.importance, vector,
                   "[]" if not m.evidence else json.dumps(list(m.evidence)))
    return values


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
    write.rows("INSERT INTO memories (town_id, agent, seq, kind, text, created, "
               "last_accessed, importance, embedding, evidence) VALUES {rows}", 10,
               _memory_values(town, changes.new_memories))
    _log_accesses(write, town, changes.touched, changes.compact)
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
        return store

    async def close(self, *, refused: bool = False) -> None:
        """Close the town. `refused`: its founding failed (a full disk, the file-size limit),
        and a database file this store made goes with its lock, as if never asked for."""
        try:
            for log in self._logs:
                await log.flush()
            if self.lock is not None:  # a writer packs what filled since (the next resume reads it)
                await self.pack_memories()
                await self.pack_accesses()
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

    async def schema_version(self) -> int:
        [row] = await self.rows("PRAGMA user_version")
        return int(row[0])

    # --- writing ----------------------------------------------------------------------------

    def disk_full(self, error: BaseException) -> StoreError | None:
        """A write SQLite refused (a full disk, a read-only file, the file-size limit) as one
        line saying what happened to the town; None for other errors."""
        return sqlite_write_error(error, self.path)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any error; one at a time."""
        async with self._writing:
            await begin_writing(lambda: self.db.execute("BEGIN IMMEDIATE"))
            try:
                yield
                await self.db.execute("COMMIT")
            except BaseException as error:
                await roll_back(self.db)
                refused = self.disk_full(error)
                if refused is not None:
                    raise refused from error
                raise

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
            full = self.disk_full(error)
            if full is None:
                raise
            raise full from error

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
        """Usage records (with the tick of each) in a short transaction of their own."""
        await self.write_now(USAGE_INSERT, usage_values(town_id, records))

    async def add_audit(self, town_id: int, entry: AuditEntry) -> None:
        await self.add_audits(town_id, [entry])

    async def add_audits(self, town_id: int, entries: list[AuditEntry]) -> None:
        """Audit rows in one transaction of their own, for a use case that changed nothing (a
        change commits its audit rows with it: TickChanges.audits)."""
        await self.write_now(AUDIT_INSERT, [entry.row(town_id) for entry in entries])

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

    async def memory_chunks(self, town_id: int, agent: str | None = None) -> AsyncIterator[MemoryChunk]:
        """A town's memories, read in the order they were written (see migration 6) MEMORY_CHUNK
        rows at a time, so a resume never holds every row of a week-long town at once: each
        chunk is one agent's next memories among those rows, with their embeddings as one
        float32 matrix. Each agent's chunks come in order of position; agents' interleave."""
        only = " AND agent = ?" if agent is not None else ""
        args: tuple[Any, ...] = (town_id,) if agent is None else (town_id, agent)
        reader = _MemoryReader(self.path, await self._embedding_dim(town_id),
                               await self._latest_accesses(town_id, only, args))
        async with self.db.execute("SELECT max(id) FROM memories") as cursor:
            last = (await cursor.fetchone())[0] or 0
        for after in range(0, last, MEMORY_CHUNK):  # rowids: a range is read in their order
            end = after + MEMORY_CHUNK
            packed, upto = await self._packed_chunk(town_id, after) if agent is None else (None, after)
            if packed is not None:
                for chunk in reader.unpacked(packed, None if packed.entries is not None else
                                             await self._embeddings((town_id, after, upto))):
                    yield chunk
            if upto == end:
                continue
            row, texts = await self._chunk_row(only, (*args, upto, end))  # rows after its pack
            if not row[0]:
                continue
            for chunk in reader.chunks(row, texts):
                yield chunk

    async def _chunk_row(self, only: str, bounds: tuple[Any, ...]) -> tuple[tuple, list[str]]:
        """A chunk's row of MEMORY_COLUMNS, and its texts cut apart."""
        async with self.db.execute(MEMORY_COLUMNS.format(agent=only), bounds) as cursor:
            row = tuple(await cursor.fetchone())
        texts = (row[4] or "").split(RECORD) if row[0] else []
        if len(texts) != row[0]:  # some text holds RECORD
            texts = await self._texts(only, bounds)
        return row, texts

    async def _packed_chunk(self, town_id: int, after: int) -> tuple[PackedChunk | None, int]:
        """The pack of the chunk of rows after `after`, if one was written (see pack_memories),
        and the last row it holds (the chunk's last, or the town's last when it was written);
        none, and `after`, also when it is damaged: its rows are read instead."""
        async with self.db.execute(PACK_COLUMNS, (town_id, after, after + MEMORY_CHUNK)) as cursor:
            found = await cursor.fetchone()
        if found is None:
            return None, after
        try:
            return unpack_chunk(*found[1:]), int(found[0])
        except ValueError:
            return None, after

    async def _embeddings(self, bounds: tuple[Any, ...]) -> tuple[bytes, np.ndarray]:
        """A chunk's embeddings joined in rowid order, and their lengths (for a pack without)."""
        async with self.db.execute(EMBEDDING_COLUMNS, bounds) as cursor:
            count, blob, lengths = await cursor.fetchone()
        return blob or b"", _numbers(lengths, count)

    async def pack_memories(self) -> int:
        """Write the pack (see townbot.store.packs) of every chunk of memory rows whose pack
        does not hold all its rows yet, in one transaction; how many were written. Rows are
        only appended, with rowids one past the last: the rows a pack holds never change, and
        the last chunk's pack holds its rows so far (and is written again when more follow)."""
        async with self.db.execute("SELECT max(id) FROM memories") as cursor:
            last = (await cursor.fetchone())[0] or 0
        if not last:
            return 0
        async with self.db.execute("SELECT id, embedding_dim FROM towns") as cursor:
            towns = [tuple(row) for row in await cursor.fetchall()]
        todo = []  # (town, dim, after, upto): nothing to write is no transaction (every close)
        for town_id, dim in towns:
            async with self.db.execute("SELECT after, upto FROM memory_packs WHERE town_id = ?",
                                       (town_id,)) as cursor:
                done = {row[0]: row[1] for row in await cursor.fetchall()}
            todo += [(town_id, dim, after, min(after + MEMORY_CHUNK, last))
                     for after in range(0, last, MEMORY_CHUNK)
                     if done.get(after) != min(after + MEMORY_CHUNK, last)]
        if not todo:
            return 0
        written = 0
        async with self.transaction():
            for town_id, dim, *bounds in todo:
                row, texts = await self._chunk_row("", (town_id, *bounds))
                packed = _MemoryReader(self.path, dim, {}).packed(row, texts) if row[0] else None
                if packed is not None:
                    await self.db.execute("INSERT OR REPLACE INTO memory_packs (town_id, after, "
                                          "upto, head, texts, data) VALUES (?, ?, ?, ?, ?, ?)",
                                          (town_id, *bounds, *packed))
                    written += 1
        return written

    async def _texts(self, only: str, args: tuple[Any, ...]) -> list[str]:
        """The texts of memory rows with ids in (after, last], row by row."""
        async with self.db.execute(f"SELECT text FROM memories WHERE town_id = ?{only} AND "
                                   "id > ? AND id <= ? ORDER BY id", args) as cursor:
            return [text for (text,) in await cursor.fetchall()]

    async def _embedding_dim(self, town_id: int) -> int:
        async with self.db.execute("SELECT embedding_dim FROM towns WHERE id = ?",
                                   (town_id,)) as cursor:
            row = await cursor.fetchone()
        if row is None:
            raise StoreError(f"{self.path} has no town {town_id}")
        return int(row[0])

    async def _latest_accesses(self, town_id: int, only: str, args: tuple[Any, ...],
                               packed: bool = True) -> dict[str, Logged]:
        """By agent, the last access and importance logged last for each memory (migration 4):
        from the town's access pack, if `packed` and one was written, and the rows after it."""
        latest, upto = await self._packed_accesses(town_id) if packed and not only else ({}, 0)
        async with self.db.execute(ACCESS_COLUMNS.format(agent=only), (*args, upto)) as cursor:
            row = tuple(await cursor.fetchone())
        try:
            rows_of, positions, times, scores = _access_entries(row)
        except ValueError as error:
            raise StoreError(f"the memory accesses logged in {self.path} cannot be read "
                             f"({error}): the database is damaged; restore a backup of it or "
                             "start a new --db") from error
        for agent, rows in rows_of.items():
            later = Logged.last_of(np.asarray(rows), positions, times, scores)
            latest[agent] = later if agent not in latest else latest[agent].followed_by(later)
        return latest

    async def _packed_accesses(self, town_id: int) -> tuple[dict[str, Logged], int]:
        """The town's access pack and the last row of memory_access it holds; none (and 0)
        when there is none or it is damaged: the rows are read instead."""
        async with self.db.execute(ACCESS_PACK, (town_id,)) as cursor:
            found = await cursor.fetchone()
        if found is None:
            return {}, 0
        try:
            return read_access_pack(found[1], found[2]), int(found[0])
        except ValueError:
            return {}, 0

    async def pack_accesses(self) -> None:
        """Write each town's access pack anew from every row of memory_access, when rows were
        logged after the one it has (see ACCESS_PACK): a resume then reads the rows after it
        only. The daily compaction drops only rows that later rows override, so a pack stays
        true; the rows stay the record."""
        async with self.db.execute("SELECT town_id, max(id) FROM memory_access GROUP BY town_id"
                                   ) as cursor:
            logged = [tuple(row) for row in await cursor.fetchall()]
        async with self.db.execute("SELECT town_id, upto FROM access_packs") as cursor:
            packed = {row[0]: row[1] for row in await cursor.fetchall()}
        stale = [(town_id, last) for town_id, last in logged if packed.get(town_id) != last]
        if not stale:
            return
        async with self.transaction():
            for town_id, last in stale:
                latest = await self._latest_accesses(town_id, "", (town_id,), packed=False)
                await self.db.execute("INSERT OR REPLACE INTO access_packs (town_id, upto, head, "
                                      "data) VALUES (?, ?, ?, ?)", (town_id, last, *access_pack(latest)))


async def replace_embeddings(store: Store, town_id: int, embedding_model: str, embedding_dim: int,
                             vectors: list[tuple[str, int, np.ndarray]], tick: int,
                             usage: Iterable[UsageRecord] = ()) -> None:
    """Give every listed memory (agent, seq) a new vector and the town its new embedding model,
    with the usage that re-embedding cost, in one transaction: all of it or none."""
    async with store.transaction():
        async with store.db.execute("SELECT agent, seq, id FROM memories WHERE town_id = ?",
                                    (town_id,)) as cursor:  # no index on (agent, seq): one pass
            ids = {(row[0], row[1]): row[2] for row in await cursor.fetchall()}
        await store.db.execute("DELETE FROM memory_packs WHERE town_id = ?", (town_id,))
        await store.db.executemany(
            "UPDATE memories SET embedding = ? WHERE id = ?",
            [(pack_vector(vector), ids[agent, seq]) for agent, seq, vector in vectors
             if (agent, seq) in ids])
        await store.db.execute("UPDATE towns SET embedding_model = ?, embedding_dim = ? WHERE id = ?",
                               (embedding_model, embedding_dim, town_id))
        await store.db.executemany(USAGE_INSERT, usage_values(town_id, [(tick, u) for u in usage]))
