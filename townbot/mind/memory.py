"""The memory stream: everything an agent has experienced, in natural language.

Columns of importance, last-access hours and kind codes sit beside the records, with every
memory's embedding, so that retrieval scores the whole stream in a few numpy operations.

A town's streams grow as it ages (about 150 memories a resident a game day), so they keep
their embeddings compactly and exactly: a hashing embedder's vectors are mostly zeros and are
kept as their non-zero entries (about a tenth of the bytes), from which `arrays` makes the dense
float32 matrix a query is scored against, bit for bit the one adding them made; a dense
model's vectors are kept as that matrix itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache

import numpy as np

from townbot.store.memories import Memory

EPOCH = datetime(2000, 1, 1)
KINDS = ("observation", "reflection", "plan", "conversation", "thought")
KIND_CODES = {kind: code for code, kind in enumerate(KINDS)}  # stored as int8 beside the vectors


@lru_cache(maxsize=4096)  # a tick's memories share their moments (a resume reads thousands)
def hours_since_epoch(moment: datetime) -> float:
    return (moment - EPOCH).total_seconds() / 3600.0


class Column:
    """A numpy array that grows as values are appended, by a quarter of its length at a time
    (so that appending costs little on average and little room stands empty)."""

    def __init__(self, dtype: type | np.dtype, width: tuple[int, ...] = ()) -> None:
        self._data = np.zeros((0, *width), dtype=dtype)
        self.size = 0

    def extend(self, values: np.ndarray | Sequence) -> None:
        end = self.size + len(values)
        if end > len(self._data):
            grown = np.zeros((max(end, len(self._data) * 5 // 4 + 64), *self._data.shape[1:]),
                             dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size: end] = values
        self.size = end

    @property
    def values(self) -> np.ndarray:
        """A view of the values (writable; valid until the next extend)."""
        return self._data[: self.size]


class Embeddings:
    """The embeddings of a stream's memories, row by row, exactly as added: their non-zero
    entries, each with its place in the flattened matrix (row * dim + column), while those take
    at most half the bytes of the dense matrix, else that matrix."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.rows = 0
        self._places = Column(np.uint32)  # ascending, as rows are added in order
        self._values = Column(np.float32)
        self._dense: Column | None = None

    def extend(self, vectors: np.ndarray) -> None:
        """Append (rows, dim) float32 vectors."""
        if self._dense is not None:
            self._dense.extend(vectors)
            self.rows += len(vectors)
            return
        if (self.rows + len(vectors)) * self.dim > 2**32:  # a dense matrix that size: 16 GB
            raise ValueError(f"a stream of {self.dim}-dimensional embeddings holds at most "
                             f"{2**32 // self.dim} memories")
        rows, columns = np.nonzero(vectors.view(np.uint32))  # bits: -0.0 is kept as added
        self._places.extend((rows + self.rows) * self.dim + columns)
        self._values.extend(vectors[rows, columns])
        self.rows += len(vectors)
        if 8 * self._values.size > 2 * self.dim * self.rows:  # not mostly zeros
            dense = Column(np.float32, (self.dim,))
            dense.extend(self.matrix())
            self._dense, self._places, self._values = dense, Column(np.uint32), Column(np.float32)

    def matrix(self) -> np.ndarray:
        """The (rows, dim) float32 matrix of every row (made anew from the entries)."""
        if self._dense is not None:
            return self._dense.values
        matrix = np.zeros((self.rows, self.dim), dtype=np.float32)
        matrix.ravel()[self._places.values] = self._values.values
        return matrix

    def block(self, first: int, last: int) -> np.ndarray:
        """Rows first..last-1 as a new (last - first, dim) float32 matrix."""
        if self._dense is not None:
            return self._dense.values[first:last].copy()
        places, low = self._places.values, first * self.dim
        start, end = places.searchsorted(low), places.searchsorted(last * self.dim)
        block = np.zeros((last - first, self.dim), dtype=np.float32)
        block.ravel()[places[start:end] - low] = self._values.values[start:end]
        return block


@dataclass
class MemoryStream:
    """One agent's memories; ids are positions, so evidence ids stay valid forever."""

    dim: int
    memories: list[Memory] = field(default_factory=list)
    new_ids: list[int] = field(default_factory=list)
    touched_ids: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._latest_by_text: dict[str, int] = {}
        self._vectors = Embeddings(self.dim)
        self._importance = Column(np.float32)
        self._accessed = Column(np.float64)
        self._kinds = Column(np.int8)

    def __len__(self) -> int:
        return len(self.memories)

    def add(self, kind: str, text: str, now: datetime, importance: int, vector: np.ndarray,
            evidence: tuple[int, ...] = (), last_accessed: datetime | None = None) -> Memory:
        if vector.shape != (self.dim,):
            raise ValueError(f"embedding has shape {vector.shape}, this stream stores ({self.dim},)")
        memory = Memory(len(self.memories), kind, text, now, last_accessed or now, importance,
                        tuple(evidence))
        self.add_all([memory], vector[None])
        return memory

    def add_all(self, memories: list[Memory], vectors: np.ndarray) -> None:
        """New memories, as `extend_stored` appends them, counted as new (for the store)."""
        first = len(self.memories)
        self.extend_stored(memories, vectors)
        self.new_ids.extend(range(first, len(self.memories)))

    def extend_stored(self, memories: list[Memory], vectors: np.ndarray) -> None:
        """Memories appended in order with their embeddings as one (len(memories), dim) float32
        matrix (those a resume reads back from the store: none counts as new); each memory's id
        becomes its position."""
        if vectors.shape != (len(memories), self.dim):
            raise ValueError(f"embeddings have shape {vectors.shape}, this stream stores "
                             f"({len(memories)}, {self.dim})")
        unknown = {m.kind for m in memories} - KIND_CODES.keys()
        if unknown:
            raise ValueError(f"unknown memory kind '{unknown.pop()}'; expected one of {', '.join(KINDS)}")
        for index, memory in enumerate(memories, len(self.memories)):
            memory.id, memory.importance = index, int(memory.importance)
            self._latest_by_text[memory.text] = index
        self._vectors.extend(np.asarray(vectors, dtype=np.float32))
        self._importance.extend([m.importance for m in memories])
        self._accessed.extend([hours_since_epoch(m.last_accessed) for m in memories])
        self._kinds.extend([KIND_CODES[m.kind] for m in memories])
        self.memories.extend(memories)

    def latest_with(self, text: str) -> Memory | None:
        index = self._latest_by_text.get(text)
        return None if index is None else self.memories[index]

    def ids_containing(self, part: str) -> tuple[int, ...]:
        return tuple(index for index, memory in enumerate(self.memories) if part in memory.text)

    def ids_created_on(self, day: date) -> tuple[int, ...]:
        return tuple(index for index, memory in enumerate(self.memories)
                     if memory.created.date() == day)

    def rescore_all(self, ids: list[int], importance: list[int]) -> None:
        """Replace the provisional importance of each memory of `ids` with its scored one (a
        scoring of the queue: dozens at a time), the importance column written in one step."""
        if not ids:
            return
        scores = [int(score) for score in importance]
        memories = self.memories
        for index, score in zip(ids, scores, strict=True):
            memories[index].importance = score
        self._importance.values[ids] = scores
        self.touched_ids.update(ids)

    def touch(self, ids: Sequence[int], now: datetime) -> None:
        """Retrieval refreshes last access, which is what recency decays from."""
        for index in ids:
            self.memories[index].last_accessed = now
        self._accessed.values[list(ids)] = hours_since_epoch(now)
        self.touched_ids.update(ids)

    def vector(self, index: int) -> np.ndarray:
        return self._vectors.block(index, index + 1)[0]

    def vectors(self, memories: list[Memory]) -> np.ndarray:
        """The embeddings of `memories` as one matrix, read in one pass over the rows they
        span (a step's new memories are the last ones)."""
        if not memories:
            return np.zeros((0, self.dim), dtype=np.float32)
        first = min(m.id for m in memories)
        span = self._vectors.block(first, max(m.id for m in memories) + 1)
        return span[[m.id - first for m in memories]]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(vectors, importance, last-access hours) of the stored memories: the embeddings as
        one (len, dim) float32 matrix, made for the caller, and views of the columns (valid
        until the stream grows)."""
        return self._vectors.matrix(), self._importance.values, self._accessed.values

    def kind_mask(self, kinds: tuple[str, ...]) -> np.ndarray:
        """True for each stored memory of one of `kinds` (unknown kinds match nothing)."""
        wanted = np.zeros(len(KINDS), dtype=bool)
        wanted[[KIND_CODES[k] for k in kinds if k in KIND_CODES]] = True
        return wanted[self._kinds.values]

    def take_changes(self) -> tuple[list[Memory], list[Memory]]:
        """Memories added and memories re-accessed since the last call (for the store)."""
        added = [self.memories[i] for i in self.new_ids]
        # A memory added since the last call goes out whole: touching it is no extra change.
        touched = [self.memories[i] for i in sorted(self.touched_ids.difference(self.new_ids))]
        self.new_ids, self.touched_ids = [], set()
        return added, touched

    def recent(self, count: int, kinds: tuple[str, ...] = KINDS) -> list[Memory]:
        """The latest `count` memories of `kinds`, oldest first."""
        if count <= 0:
            return []
        return self._at(np.flatnonzero(self.kind_mask(tuple(kinds)))[-count:])

    def by_kind(self, kind: str) -> list[Memory]:
        return self._at(np.flatnonzero(self.kind_mask((kind,))))

    def _at(self, rows: np.ndarray) -> list[Memory]:
        return [self.memories[row] for row in rows.tolist()]
