"""Retrieval as in the paper (section 4.1): recency, importance and relevance, each min-max
normalised over the stream, summed with weights; the best memories come first.

recency is decay ** (game hours since the memory was last accessed), importance the 1-10
rating, relevance the cosine between the memory's embedding and the query's. The three are
computed over the stream's columns with numpy; a kind filter picks rows after scoring, so the
extremes that normalise each term are always the whole stream's.
"""

from __future__ import annotations

import math
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
    """A retrieved memory with its total and its three normalised terms."""

    memory: Memory
    score: float
    recency: float
    importance: float
    relevance: float


def normalised(values: np.ndarray) -> np.ndarray:
    """Min-max scaling to 0..1 in float64; 0.5 for every value when they are all equal."""
    low, high = float(values.min()), float(values.max())
    if high - low < 1e-12:
        return np.full(values.shape, 0.5)
    return (values.astype(np.float64) - low) / (high - low)


def score_stream(stream: MemoryStream, query: np.ndarray, now: datetime,
                 weights: RetrievalWeights = RetrievalWeights(),
                 decay: float = RECENCY_DECAY,
                 kinds: tuple[str, ...] | None = None) -> tuple[np.ndarray, ...]:
    """(total, recency, importance, relevance) of every memory in the stream, each term
    normalised over the whole stream; the total is -inf for memories of other kinds than
    `kinds` (all kinds count when None)."""
    vectors, importance, accessed = stream.arrays()
    idle = np.maximum(hours_since_epoch(now) - accessed, 0.0)
    recency = normalised(np.power(decay, idle))
    importance_n = normalised(importance)
    relevance = normalised(vectors @ (query / (np.linalg.norm(query) or 1.0)))
    total = recency * weights.recency + importance_n * weights.importance \
        + relevance * weights.relevance
    if kinds is not None:
        total[~stream.kind_mask(kinds)] = -np.inf
    return total, recency, importance_n, relevance


def retrieve(stream: MemoryStream, query: np.ndarray, now: datetime, *, limit: int = 10,
             token_budget: int | None = None, weights: RetrievalWeights = RetrievalWeights(),
             kinds: tuple[str, ...] | None = None, touch: bool = True) -> list[Scored]:
    """The best memories for a query, highest score first (equal scores oldest first): of the
    best `limit`, those within `token_budget` if given (taken in order: a long memory that does
    not fit leaves room for shorter ones after it). Only memories of `kinds` are returned.
    Those returned count as accessed now unless `touch` is False."""
    if not stream.memories or limit <= 0:
        return []
    total, recency, importance, relevance = score_stream(stream, query, now, weights, kinds=kinds)
    room = math.inf if token_budget is None else token_budget
    chosen: list[int] = []
    for index in best_first(total, limit).tolist():
        if not math.isfinite(total[index]):
            break
        cost = tokens(stream.memories[index])
        if cost <= room:
            room -= cost
            chosen.append(index)
    if touch:
        stream.touch(chosen, now)
    return [Scored(stream.memories[index], float(total[index]), float(recency[index]),
                   float(importance[index]), float(relevance[index])) for index in chosen]


def best_first(total: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` highest totals, highest first, equal totals oldest first. Only
    the totals that reach the count-th highest are sorted (a partition finds it)."""
    if count < len(total):
        edge = np.partition(total, len(total) - count)[len(total) - count]
        candidates = np.flatnonzero(total >= edge)
    else:
        candidates = np.arange(len(total))
    return candidates[np.argsort(-total[candidates], kind="stable")][:count]


def recall(stream: MemoryStream, query: np.ndarray, now: datetime, *, limit: int = 10,
           token_budget: int | None = None, weights: RetrievalWeights = RetrievalWeights(),
           kinds: tuple[str, ...] | None = None, touch: bool = True) -> list[Memory]:
    """retrieve's memories without their scores."""
    return [scored.memory for scored in retrieve(stream, query, now, limit=limit,
                                                 token_budget=token_budget, weights=weights,
                                                 kinds=kinds, touch=touch)]


def tokens(memory: Memory) -> int:
    """A memory's rough cost in prompt tokens (about four characters a token)."""
    return len(memory.text) // 4 + 1
