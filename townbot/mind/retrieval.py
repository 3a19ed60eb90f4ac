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
    low, high = float(values.min()), float(values.max())
    if high - low < 1e-12:
        return np.full_like(values, 0.5, dtype=np.float64)
    return (values - low) / (high - low)


def score_stream(stream: MemoryStream, query: np.ndarray, now: datetime,
                 weights: RetrievalWeights = RetrievalWeights(),
                 decay: float = RECENCY_DECAY,
                 kinds: tuple[str, ...] | None = None) -> tuple[np.ndarray, ...]:
    """Normalised (total, recency, importance, relevance) for every memory in the stream."""
    vectors, importance, accessed = stream.arrays()
    hours_idle = np.maximum(0.0, hours_since_epoch(now) - accessed)
    recency = min_max(np.power(decay, hours_idle))
    importance_n = min_max(importance.astype(np.float64))
    query_unit = query / (np.linalg.norm(query) or 1.0)
    relevance = min_max((vectors @ query_unit).astype(np.float64))
    total = (weights.recency * recency + weights.importance * importance_n
             + weights.relevance * relevance)
    if kinds is not None:
        total = np.where(stream.kind_mask(kinds), total, -np.inf)
    return total, recency, importance_n, relevance


def retrieve(stream: MemoryStream, query: np.ndarray, now: datetime, *, limit: int = 10,
             token_budget: int | None = None, weights: RetrievalWeights = RetrievalWeights(),
             kinds: tuple[str, ...] | None = None, touch: bool = True) -> list[Scored]:
    """The best memories for a query, highest score first, within a count and token budget."""
    if len(stream) == 0:
        return []
    total, recency, importance, relevance = score_stream(stream, query, now, weights, kinds=kinds)
    count = min(limit, len(stream))
    top = np.argpartition(-total, count - 1)[:count]
    order = top[np.argsort(-total[top], kind="stable")]
    picked: list[Scored] = []
    spent = 0
    for index in order:
        if not np.isfinite(total[index]):
            break
        memory = stream.memories[int(index)]
        cost = len(memory.text) // 4 + 1
        if token_budget is not None and spent + cost > token_budget:
            continue  # a long memory that does not fit leaves room for shorter ones
        spent += cost
        picked.append(Scored(memory, float(total[index]), float(recency[index]),
                             float(importance[index]), float(relevance[index])))
    if touch:
        stream.touch([s.memory.id for s in picked], now)
    return picked
