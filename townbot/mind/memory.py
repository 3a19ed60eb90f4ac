"""The memory stream: everything an agent has experienced, in natural language.

Columns of embeddings (float32), importance, last-access hours and kind codes sit beside the
records, so that retrieval scores the whole stream in a few numpy operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

import numpy as np

from townbot.store.memories import Memory

EPOCH = datetime(2000, 1, 1)
KINDS = ("observation", "reflection", "plan", "conversation", "thought")
KIND_CODES = {kind: code for code, kind in enumerate(KINDS)}  # stored as int8 beside the vectors


def kind_table(kinds: tuple[str, ...]) -> np.ndarray:
    """True at the codes of `kinds` (unknown kinds match nothing)."""
    wanted = np.zeros(len(KINDS), dtype=bool)
    wanted[[KIND_CODES[k] for k in kinds if k in KIND_CODES]] = True
    return wanted


def hours_since_epoch(moment: datetime) -> float:
    return (moment - EPOCH).total_seconds() / 3600.0


@dataclass
class MemoryStream:
    """One agent's memories; ids are positions, so evidence ids stay valid forever."""

    dim: int
    memories: list[Memory] = field(default_factory=list)
    new_ids: list[int] = field(default_factory=list)
    touched_ids: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._latest_by_text: dict[str, int] = {}
        self._capacity = 64
        self._vectors = np.zeros((self._capacity, self.dim), dtype=np.float32)
        self._importance = np.zeros(self._capacity, dtype=np.float32)
        self._accessed = np.zeros(self._capacity, dtype=np.float64)
        self._kinds = np.zeros(self._capacity, dtype=np.int8)

    def __len__(self) -> int:
        return len(self.memories)

    def _grow(self, rows: int = 0) -> None:
        """Double the capacity (as often as holding `rows` needs), copying the arrays once."""
        self._capacity *= 2
        while self._capacity < rows:
            self._capacity *= 2
        for name in ("_vectors", "_importance", "_accessed", "_kinds"):
            old = getattr(self, name)
            grown = np.zeros((self._capacity, *old.shape[1:]), dtype=old.dtype)
            grown[: len(old)] = old
            setattr(self, name, grown)

    def add(self, kind: str, text: str, now: datetime, importance: int, vector: np.ndarray,
            evidence: tuple[int, ...] = (), last_accessed: datetime | None = None) -> Memory:
        code = KIND_CODES.get(kind)
        if code is None:
            raise ValueError(f"unknown memory kind '{kind}'; expected one of {', '.join(KINDS)}")
        if vector.shape != (self.dim,):
            raise ValueError(f"embedding has shape {vector.shape}, this stream stores ({self.dim},)")
        index = len(self.memories)
        if index == self._capacity:
            self._grow()
        accessed = last_accessed or now
        memory = Memory(index, kind, text, now, accessed, int(importance), tuple(evidence))
        self.memories.append(memory)
        self._vectors[index] = vector
        self._importance[index] = memory.importance
        self._accessed[index] = hours_since_epoch(accessed)
        self._kinds[index] = code
        self._latest_by_text[text] = index
        self.new_ids.append(index)
        return memory

    def extend_stored(self, memories: list[Memory], vectors: np.ndarray) -> None:
        """Memories read back from the store (resuming a town), appended in order with their
        embeddings as one (len(memories), dim) matrix: the same stream as adding them one by
        one; each memory's id becomes its position and none counts as new."""
        if vectors.shape != (len(memories), self.dim):
            raise ValueError(f"embeddings have shape {vectors.shape}, this stream stores "
                             f"({len(memories)}, {self.dim})")
        unknown = {m.kind for m in memories} - KIND_CODES.keys()
        if unknown:
            raise ValueError(f"unknown memory kind '{unknown.pop()}'; expected one of {', '.join(KINDS)}")
        start, end = len(self.memories), len(self.memories) + len(memories)
        if end > self._capacity:
            self._grow(end)
        for index, memory in enumerate(memories, start):
            memory.id, memory.importance = index, int(memory.importance)
            self._latest_by_text[memory.text] = index
        self._vectors[start:end] = vectors
        self._importance[start:end] = [m.importance for m in memories]
        self._accessed[start:end] = [hours_since_epoch(m.last_accessed) for m in memories]
        self._kinds[start:end] = [KIND_CODES[m.kind] for m in memories]
        self.memories.extend(memories)

    def latest_with(self, text: str) -> Memory | None:
        """The newest memory with exactly this text."""
        index = self._latest_by_text.get(text)
        return None if index is None else self.memories[index]

    def ids_containing(self, part: str) -> tuple[int, ...]:
        """Ids of the memories whose text contains `part`, ascending."""
        return tuple(index for index, memory in enumerate(self.memories) if part in memory.text)

    def ids_created_on(self, day: date) -> tuple[int, ...]:
        """Ids of the memories created on this date, ascending."""
        return tuple(index for index, memory in enumerate(self.memories)
                     if memory.created.date() == day)

    def rescore(self, index: int, importance: int) -> None:
        """Replace a provisional importance with the scored one."""
        self.rescore_all([index], [importance])

    def rescore_all(self, ids: list[int], importance: list[int]) -> None:
        """Replace the provisional importance of each memory of `ids` with its scored one (a
        scoring of the queue: dozens at a time), the importance column written in one step."""
        if not ids:
            return
        scores = [int(score) for score in importance]
        memories = self.memories
        for index, score in zip(ids, scores, strict=True):
            memories[index].importance = score
        self._importance[ids] = scores
        self.touched_ids.update(ids)

    def touch(self, ids: Sequence[int], now: datetime) -> None:
        """Retrieval refreshes last access, which is what recency decays from."""
        for index in ids:
            self.memories[index].last_accessed = now
        self._accessed[list(ids)] = hours_since_epoch(now)
        self.touched_ids.update(ids)

    def vector(self, index: int) -> np.ndarray:
        return self._vectors[index]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Views of (vectors, importance, last-access hours) over the stored memories (a view
        stays valid while the stream's size does: the arrays are replaced only as it grows)."""
        size = len(self.memories)
        return self._vectors[:size], self._importance[:size], self._accessed[:size]

    def kind_mask(self, kinds: tuple[str, ...]) -> np.ndarray:
        """True for each stored memory of one of `kinds` (a lookup of each memory's kind code)."""
        return kind_table(kinds)[self._kinds[: len(self.memories)]]

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
        """Every memory of one kind, oldest first."""
        return self._at(np.flatnonzero(self.kind_mask((kind,))))

    def _at(self, rows: np.ndarray) -> list[Memory]:
        return [self.memories[row] for row in rows.tolist()]
