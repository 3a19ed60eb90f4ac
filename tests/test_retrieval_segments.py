"""The int8 first pass as a stream grows: memories arriving one by one or in batches across the
points where the filling segment's product is remade and where a segment fills, each retrieval
returning what scoring every memory and sorting returns; the products at the largest codes, the
int8 path's recency and importance and the kind filter's kept positions."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from townbot.mind.memory import KINDS, MemoryStream, hours_since_epoch
from townbot.mind.quantised import MIN_DIM, MIN_ROWS, REFRESH, SEGMENT, Int8Copy
from townbot.mind.retrieval import (
    RECENCY_DECAY,
    RetrievalWeights,
    bounded_terms,
    retrieve,
    time_terms,
)

NOW = datetime(2023, 2, 20, 18, 0)


def add_memories(stream: MemoryStream, rng: np.random.Generator, count: int) -> None:
    """`count` memories around a few topics, of every kind, made over a week; every seventh
    repeats the one before it exactly (equal scores)."""
    topics = np.random.default_rng(7).standard_normal((12, stream.dim))
    for _ in range(count):
        if len(stream) and len(stream) % 7 == 0:
            last = stream.memories[-1]
            stream.add(last.kind, last.text, last.created, last.importance, stream.vector(last.id).copy())
            continue
        vector = topics[rng.integers(0, 12)] + 0.8 * rng.standard_normal(stream.dim)
        stream.add(KINDS[int(rng.integers(0, len(KINDS)))], f"memory {len(stream)}",
                   NOW - timedelta(minutes=int(rng.integers(0, 7 * 24 * 60))),
                   int(rng.integers(1, 11)), (vector / np.linalg.norm(vector)).astype(np.float32))


def by_full_sort(stream: MemoryStream, query: np.ndarray, limit: int,
                 kinds: tuple[str, ...] | None) -> list[tuple[int, float]]:
    """Every memory scored (cosines summed in float64, rounded to float32 once), every term
    min-max normalised over the whole stream, filtered afterwards, fully sorted."""
    vectors, importance, accessed = stream.arrays()
    unit = query / np.linalg.norm(query)
    cosines = (vectors.astype(np.float64) @ unit.astype(np.float64)).astype(np.float32)

    def normalised(values: np.ndarray) -> np.ndarray:
        low, high = values.min(), values.max()
        return np.full_like(values, 0.5) if high - low < 1e-12 else (values - low) / (high - low)

    recency = normalised(np.power(RECENCY_DECAY, np.maximum(0.0, hours_since_epoch(NOW) - accessed)))
    total = recency + normalised(importance.astype(np.float64)) + normalised(cosines.astype(np.float64))
    allowed = [i for i, m in enumerate(stream.memories) if kinds is None or m.kind in kinds]
    return [(i, total[i]) for i in sorted(allowed, key=lambda i: (-total[i], i))[:limit]]


def test_a_stream_growing_across_segments_retrieves_what_scoring_everything_returns():
    rng = np.random.default_rng(3)
    stream = MemoryStream(MIN_DIM)
    add_memories(stream, rng, MIN_ROWS)
    stream.take_changes()
    probes = np.random.default_rng(4).standard_normal((3, MIN_DIM)).astype(np.float32)
    # After each step: the newest few go in as an input, the filling segment's product is
    # remade, a batch arrives at once, a segment fills exactly, then one memory past it.
    for arrivals in (0, 5, REFRESH, 1, 2 * REFRESH + 3, SEGMENT - (len(stream) % SEGMENT) - 2 * REFRESH - 9,
                     1, 1):
        add_memories(stream, rng, arrivals)
        assert stream.int8_copy() is not None
        for query in (*probes, stream.vector(len(stream) - 1).copy()):
            for kinds in (None, ("observation", "reflection"), ("plan",)):
                found = [(s.memory.id, s.score) for s in retrieve(stream, query, NOW, limit=10,
                                                                   kinds=kinds, touch=False)]
                assert found == by_full_sort(stream, query, 10, kinds), (len(stream), kinds)
    assert len(stream) > 2 * SEGMENT


@pytest.mark.parametrize("dim", [MIN_DIM, 1536])
def test_products_at_the_largest_codes_are_exact(dim):
    """Vectors whose every code is +-127 and queries whose every code is +-63: the integer
    product must not saturate (a u8 x s8 kernel without VNNI adds pairs in 16 bits)."""
    ones = np.ones(dim, dtype=np.float32)
    signs = np.where(np.arange(dim) % 2 == 0, 1.0, -1.0).astype(np.float32)
    vectors = np.stack([ones, -ones, signs, -signs] * 2)
    copy = Int8Copy(dim)
    copy.extend(0, vectors)
    for query in (ones, -ones, signs, 0.5 * ones):
        estimate, bound = copy.cosines(query, len(vectors))
        exact = vectors.astype(np.float64) @ query.astype(np.float64)
        assert np.abs(estimate - exact).max() <= 1e-9 * dim
        assert np.all(np.abs(estimate - exact) <= bound)


def test_awkward_queries_keep_their_bounds():
    """Tiny, huge, one large component, subnormal and sparse queries against ordinary memories."""
    rng = np.random.default_rng(9)
    dim = MIN_DIM
    vectors = rng.standard_normal((300, dim)).astype(np.float32)
    copy = Int8Copy(dim)
    copy.extend(0, vectors)
    spiky = rng.standard_normal(dim) * 1e-3
    spiky[3] = 50.0
    for query in (np.full(dim, 1e-30), rng.standard_normal(dim) * 1e20, spiky,
                  np.where(rng.random(dim) < 0.02, -2.0, 0.0)):
        estimate, bound = copy.cosines(query.astype(np.float32), len(vectors))
        exact = vectors.astype(np.float64) @ query.astype(np.float32).astype(np.float64)
        assert np.all(np.abs(estimate - exact) <= bound)


def test_vectors_and_queries_whose_squares_underflow_keep_their_bounds():
    """Norms of values near 1e-200 square to nothing in float64: the bound must not shrink."""
    rng = np.random.default_rng(10)
    vectors = rng.standard_normal((200, 64)) * 1e-200
    vectors[:20] *= 1e100
    copy = Int8Copy(64)
    copy.extend(0, vectors)
    for query in (rng.standard_normal(64) * 1e-200, rng.standard_normal(64), np.full(64, 1e-310)):
        estimate, bound = copy.cosines(query, len(vectors))
        assert np.all(np.abs(estimate - vectors @ query) <= bound)
        assert np.all(bound[np.abs(vectors @ query) > 0] > 0)


@pytest.mark.parametrize("decay", [0.5, RECENCY_DECAY, 0.9999])
def test_the_int8_path_takes_recency_and_importance_as_time_terms_gives_them(decay):
    """bounded_terms reads recency and importance from the standing terms the stream keeps:
    they are time_terms' to the bit as moments pass, memories are touched (some after the
    moment) and rescored, and new ones arrive."""
    rng = np.random.default_rng(11)
    stream = MemoryStream(dim=MIN_DIM)
    for index in range(MIN_ROWS):
        hours = float(rng.choice([rng.uniform(-5, 50), rng.uniform(0, 2000), rng.uniform(0, 40000)]))
        stream.add(KINDS[index % len(KINDS)], f"m{index}", NOW - timedelta(hours=hours),
                   int(rng.integers(1, 11)), rng.standard_normal(MIN_DIM).astype(np.float32))
    copy = stream.int8_copy()
    assert copy is not None
    for step in range(4):
        now = NOW + timedelta(minutes=30 * step)
        for kinds in (None, ("observation", "reflection")):
            rows = None if kinds is None else stream.kind_rows(kinds)
            ids, recency, importance, _ = bounded_terms(stream, copy, rng.standard_normal(MIN_DIM),
                                                        now, RetrievalWeights(recency=0.5), decay,
                                                        rows, 30)
            expected_recency, expected_importance = time_terms(stream, now, decay, ids)
            assert recency.tolist() == expected_recency.tolist()
            assert importance.tolist() == expected_importance.tolist()
            stream.touch(ids[:5].tolist(), now + timedelta(hours=step % 2))
        stream.rescore_all([int(rng.integers(0, len(stream)))], [int(rng.integers(1, 11))])
        stream.add("observation", "new", now, 10, rng.standard_normal(MIN_DIM).astype(np.float32))


def test_kind_rows_follow_the_stream_as_it_grows():
    rng = np.random.default_rng(12)
    stream = MemoryStream(dim=4)
    filters = [("observation",), ("plan", "thought"), ("reflection", "unknown"), ("unknown",)]
    for batch in (0, 1, 30, 7, 200):
        for _ in range(batch):
            stream.add(KINDS[int(rng.integers(0, len(KINDS)))], "m", NOW, 3, np.ones(4, dtype=np.float32))
        for kinds in filters:
            rows = stream.kind_rows(kinds)
            assert rows.tolist() == np.flatnonzero(stream.kind_mask(kinds)).tolist()
            assert not rows.flags.writeable
