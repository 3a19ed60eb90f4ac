"""Packed copies of chunks of memory rows (table memory_packs, migration 8).

A week-long town holds tens of thousands of memory rows, and reading them back as SQLite rows or
joined text columns costs most of a resume: SQLite joins every value, Python cuts the strings
apart, parses numbers and game times and regroups the rows by resident. A row never changes
once written (memory rows are only appended; a later access or rescoring is logged in
memory_access, and re-embedding drops the packs), so a writer keeps each chunk's rows
(MEMORY_CHUNK rowids; the last chunk's as far as they go) again in a form read back with a few
numpy calls: the rows grouped by resident, numbers as arrays, game times and evidence lists as
small tables of their distinct values, the texts joined. The rows stay the record: rows without
a pack are read from them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from townbot.mind.memory import KINDS, SparseVectors

ENTRY = np.dtype([("index", "<u2"), ("value", "<f4")])  # as database.ENTRY
# The arrays of `data`, each one number per row, in this order; then the rows' kind codes
# (int8) and, when every embedding of the chunk is sparse, their non-zero entries (ENTRY).
COLUMNS = ("importance", "created", "accessed", "evidence", "text_length", "entries", "order")
WIDE = np.dtype("<i8")  # importance: as SQLite's integer
NARROW = np.dtype("<i4")  # every other column: indexes and counts


@dataclass(frozen=True)
class Part:
    """One resident's rows in a chunk: its name, the position of its first, how many."""

    agent: str
    first: int
    count: int


@dataclass(frozen=True)
class PackedChunk:
    """A chunk as packed, grouped by resident (parts in order of their first row). `order`
    gives each packed row's place among the chunk's rows in rowid order; `entries` and `nonzero`
    (per row) are the sparse embeddings, or None when they are read from the rows."""

    parts: list[Part]
    times: list[str]  # distinct game times: created and accessed are indexes into it
    evidence_table: list[str]  # distinct evidence lists as stored: evidence indexes into it
    texts: list[str]
    kinds: np.ndarray
    importance: np.ndarray
    created: np.ndarray
    accessed: np.ndarray
    evidence: np.ndarray
    order: np.ndarray
    nonzero: np.ndarray | None
    entries: np.ndarray | None


def _table(values: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct values, in order of first use, and each value's index among them."""
    index: dict[str, int] = {}
    ids = np.fromiter((index.setdefault(value, len(index)) for value in values), NARROW,
                      count=len(values))
    return list(index), ids


def pack_chunk(chunk: PackedChunk) -> tuple[str, str, bytes]:
    """The chunk as memory_packs stores it: a JSON head, the texts joined, the arrays' bytes."""
    head = json.dumps({"parts": [[p.agent, p.first, p.count] for p in chunk.parts],
                       "times": chunk.times, "evidence": chunk.evidence_table,
                       "sparse": chunk.entries is not None}, ensure_ascii=False)
    lengths = np.fromiter(map(len, chunk.texts), NARROW, count=len(chunk.texts))
    nonzero = chunk.nonzero if chunk.nonzero is not None else np.zeros(len(lengths), NARROW)
    data = b"".join([chunk.importance.astype(WIDE).tobytes(),
                     *(column.astype(NARROW).tobytes() for column in
                       (chunk.created, chunk.accessed, chunk.evidence, lengths, nonzero,
                        chunk.order)),
                     chunk.kinds.astype(np.int8).tobytes(),
                     b"" if chunk.entries is None else chunk.entries.astype(ENTRY).tobytes()])
    return head, "".join(chunk.texts), data


def grouped(agents: list[str], seqs: np.ndarray, kinds: np.ndarray, texts: list[str],
            created: list[str], accessed: list[str], importance: np.ndarray,
            evidence: list[str], rows_of: dict[str, list[int]],
            sparse: dict[str, SparseVectors] | None) -> PackedChunk | None:
    """A chunk's columns in rowid order as a PackedChunk, each resident's rows together; None
    when some resident's positions do not follow on (the rows then say what is wrong).
    `sparse` holds each resident's embeddings when all of the chunk's are sparse."""
    parts, order = [], np.concatenate([np.asarray(rows, dtype=np.intp) for rows in rows_of.values()])
    for agent, rows in rows_of.items():
        first = int(seqs[rows[0]])
        if not np.array_equal(seqs[rows], np.arange(first, first + len(rows))):
            return None
        parts.append(Part(agent, first, len(rows)))
    listed = order.tolist()
    times, moments = _table([created[row] for row in listed] + [accessed[row] for row in listed])
    table, cited = _table([evidence[row] for row in listed])
    nonzero = entries = None
    if sparse is not None:
        nonzero = np.concatenate([np.bincount(sparse[agent].row, minlength=len(rows))
                                  for agent, rows in rows_of.items()])
        entries = np.empty(int(nonzero.sum()), dtype=ENTRY)
        entries["index"] = np.concatenate([sparse[agent].index for agent in rows_of])
        entries["value"] = np.concatenate([sparse[agent].value for agent in rows_of])
    return PackedChunk(parts, times, table, [texts[row] for row in listed], kinds[order],
                       importance[order], moments[: len(listed)], moments[len(listed):], cited,
                       order, nonzero, entries)


def unpack_chunk(head: str, texts: str, data: bytes) -> PackedChunk:
    """A stored pack read back; ValueError when it is not one (damaged)."""
    try:
        fields = json.loads(head)
        parts = [Part(str(agent), int(first), int(count)) for agent, first, count in fields["parts"]]
        times, table = list(map(str, fields["times"])), list(map(str, fields["evidence"]))
        sparse = bool(fields["sparse"])
    except (TypeError, KeyError) as error:
        raise ValueError(f"a memory pack's head is not one ({error})") from error
    rows = sum(part.count for part in parts)
    narrow = len(COLUMNS) - 1
    fixed = rows * (WIDE.itemsize + narrow * NARROW.itemsize + 1)
    if len(data) < fixed or min((p.count for p in parts), default=1) < 1:
        raise ValueError("a memory pack is shorter than its rows")
    importance = np.frombuffer(data, WIDE, rows)
    created, accessed, cited, lengths, nonzero, order = (
        np.frombuffer(data, NARROW, rows, rows * WIDE.itemsize + column * rows * NARROW.itemsize)
        for column in range(narrow))
    kinds = np.frombuffer(data, np.int8, rows, fixed - rows)
    entries = np.frombuffer(data, ENTRY, offset=fixed) if sparse else None
    ends = np.cumsum(lengths)
    if len(data) != fixed + (ENTRY.itemsize * int(nonzero.sum()) if sparse else 0) \
            or (rows and (ends[-1] != len(texts) or lengths.min() < 0)) \
            or (rows and (min(created.min(), accessed.min()) < 0
                          or max(created.max(), accessed.max()) >= len(times)
                          or cited.min() < 0 or cited.max() >= len(table)
                          or kinds.min() < 0 or kinds.max() >= len(KINDS))) \
            or (sparse and rows and nonzero.min() < 0) \
            or not np.array_equal(np.sort(order), np.arange(rows)):
        raise ValueError("a memory pack's arrays do not fit its rows")
    # A comprehension of slices: faster than map(slice) over a text with non-ASCII in it.
    cut = [texts[start:end] for start, end in zip((ends - lengths).tolist(), ends.tolist(), strict=True)]
    return PackedChunk(parts, times, table, cut, kinds, importance, created, accessed, cited, order,
                       nonzero if sparse else None, entries)
