"""Retrieval as in the paper: recency, importance and relevance, each min-max normalised.

score = w_recency * recency + w_importance * importance + w_relevance * relevance, where
recency = decay ** (game hours since last access), importance is the 1-10 rating and relevance
is the cosine similarity between the memory's and the query's embeddings.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from townbot.mind.memory import Memory, MemoryStream, hours_since_epoch

RECENCY_DECAY = 0.995


@dataclass(frozen=True)
class RetrievalWeights:
    recency: float = 1.0
    importance: float = 1.0
    relevance: float = 1.0


@dataclass(frozen=True)
class Scored:
    memory: Memory
    score: float
    recency: float
    importance: float
    relevance: float


def min_max(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; a constant column carries no information and becomes all 0.5."""
    return scaled(values, float(values.min()), float(values.max()))


def scaled(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """Min-max scaling with extremes found over the whole stream, so that `values` may be only
    the rows a kind filter keeps and still get the same numbers (a new float64 array)."""
    if high - low < 1e-12:
        return np.full(values.shape, 0.5, dtype=np.float64)
    result = np.subtract(values, low, dtype=np.float64)
    result /= high - low
    return result


def terms(stream: MemoryStream, query: np.ndarray, now: datetime, decay: float = RECENCY_DECAY,
          rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalised (recency, importance, relevance) of the memories at `rows` (all when None),
    each scaled by its extremes over the whole stream as the paper does. Only the relevance
    product has to visit every memory; the other extremes come from the arrays' own extremes
    (recency falls as idle time grows, so its extremes are those of the access times)."""
    vectors, importance, accessed = stream.arrays()
    hours = hours_since_epoch(now)
    idle = np.subtract(hours, accessed if rows is None else accessed[rows])
    np.maximum(idle, 0.0, out=idle)
    ends = np.power(decay, np.maximum(0.0, np.subtract(hours, [accessed.max(), accessed.min()])))
    recency = scaled(np.power(decay, idle), float(ends.min()), float(ends.max()))
    importance_n = scaled(importance if rows is None else importance[rows],
                          float(importance.min()), float(importance.max()))
    cosines = vectors @ (query / (np.linalg.norm(query) or 1.0))
    relevance = scaled(cosines if rows is None else cosines[rows],
                       float(cosines.min()), float(cosines.max()))
    return recency, importance_n, relevance


def weighted(recency: np.ndarray, importance: np.ndarray, relevance: np.ndarray,
             weights: RetrievalWeights) -> np.ndarray:
    """The weighted sum, in the order and rounding of w_r*r + w_i*i + w_v*v, with one scratch array."""
    total = recency * weights.recency
    scratch = importance * weights.importance
    total += scratch
    np.multiply(relevance, weights.relevance, out=scratch)
    total += scratch
    return total


def score_stream(stream: MemoryStream, query: np.ndarray, now: datetime,
                 weights: RetrievalWeights = RetrievalWeights(),
                 decay: float = RECENCY_DECAY,
                 kinds: tuple[str, ...] | None = None) -> tuple[np.ndarray, ...]:
    """Normalised (total, recency, importance, relevance) for every memory in the stream; the
    total is -inf for memories of other kinds than `kinds`."""
    recency, importance, relevance = terms(stream, query, now, decay)
    total = weighted(recency, importance, relevance, weights)
    if kinds is not None:
        total[~stream.kind_mask(kinds)] = -np.inf
    return total, recency, importance, relevance


def best_first(total: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` highest totals, highest first, equal totals oldest first: a
    partial selection (argpartition), then a sort of only what it kept and the ties at its edge."""
    if count < len(total):
        edge = total[np.argpartition(total, len(total) - count)[len(total) - count]]
        kept = np.flatnonzero(total >= edge)
    else:
        kept = np.arange(len(total))
    return kept[np.lexsort((kept, -total[kept]))][:count]


def retrieve(stream: MemoryStream, query: np.ndarray, now: datetime, *, limit: int = 10,
             token_budget: int | None = None, weights: RetrievalWeights = RetrievalWeights(),
             kinds: tuple[str, ...] | None = None, touch: bool = True) -> list[Scored]:
    """The best memories for a query, highest score first, within a count and token budget.
    Only the memories of `kinds` are scored, against the extremes of the whole stream."""
    if len(stream) == 0:
        return []
    rows = None if kinds is None else np.flatnonzero(stream.kind_mask(kinds))
    if rows is not None and len(rows) == 0:
        return []
    recency, importance, relevance = terms(stream, query, now, rows=rows)
    total = weighted(recency, importance, relevance, weights)
    picked: list[Scored] = []
    spent = 0
    for position in best_first(total, min(limit, len(total))):
        if not np.isfinite(total[position]):
            break
        memory = stream.memories[int(position if rows is None else rows[position])]
        cost = len(memory.text) // 4 + 1
        if token_budget is not None and spent + cost > token_budget:
            continue  # a long memory that does not fit leaves room for shorter ones
        spent += cost
        picked.append(Scored(memory, float(total[position]), float(recency[position]),
                             float(importance[position]), float(relevance[position])))
    if touch:
        stream.touch([s.memory.id for s in picked], now)
    return picked
