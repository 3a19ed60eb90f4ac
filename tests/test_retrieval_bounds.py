"""The int8 first pass on the streams the mutation run found untested (docs/reliability.md):
cosines all of one sign, all equal, exactly one batch of them open, limits of a whole batch and
a kind filter keeping fewer memories than the limit. Each must give what scoring every memory
gives, without a crash."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from townbot.mind.memory import MemoryStream
from townbot.mind.quantised import MIN_DIM, MIN_ROWS, Int8Copy
from townbot.mind.retrieval import (
    EXACT_BATCH,
    RECENCY_DECAY,
    RetrievalWeights,
    bounded_terms,
    retrieve,
    terms,
    unit,
    weighted,
)

NOW = datetime(2023, 2, 20, 18, 0)
DIM = MIN_DIM
WEIGHTS = RetrievalWeights()


def stream_of(vectors: np.ndarray) -> MemoryStream:
    """One memory per vector, all made at the same time with the same importance, so the
    relevance alone decides the order."""
    stream = MemoryStream(vectors.shape[1])
    for index, vector in enumerate(vectors):
        stream.add("observation", f"memory {index}", NOW - timedelta(hours=1), 5, vector)
    stream.take_changes()
    return stream


def best_by_int8_bounds(stream: MemoryStream, query: np.ndarray, count: int):
    """(ids, relevance) of the `count` best through an int8 copy of the stream's vectors."""
    copy = Int8Copy(stream.dim)
    copy.extend(0, stream.arrays()[0][: len(stream)])
    ids, recency, importance, relevance = bounded_terms(stream, copy, query, NOW, WEIGHTS,
                                                        RECENCY_DECAY, None, count)
    order = top(weighted(recency, importance, relevance, WEIGHTS), ids, count)
    return ids[order].tolist(), relevance[order].tolist()


def best_by_scoring_all(stream: MemoryStream, query: np.ndarray, count: int):
    recency, importance, relevance = terms(stream, query, NOW)
    ids = np.arange(len(stream))
    order = top(weighted(recency, importance, relevance, WEIGHTS), ids, count)
    return ids[order].tolist(), relevance[order].tolist()


def top(total: np.ndarray, ids: np.ndarray, count: int) -> np.ndarray:
    return np.lexsort((ids, -total))[:count]


def around(direction: np.ndarray, count: int, spread: float, seed: int) -> np.ndarray:
    """Unit vectors scattered `spread` around `direction`."""
    rng = np.random.default_rng(seed)
    vectors = direction + spread * rng.standard_normal((count, len(direction)))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def axis(index: int) -> np.ndarray:
    return np.eye(DIM, dtype=np.float32)[index]


@pytest.mark.parametrize(("name", "sign"), [("every cosine positive", 1.0),
                                            ("every cosine negative", -1.0)])
def test_cosines_all_of_one_sign_rank_and_scale_as_when_all_are_scored(name, sign):
    stream = stream_of(around(axis(0), 300, 0.02, seed=1))
    query = sign * axis(0) + 0.01 * axis(1)
    fast_ids, fast_relevance = best_by_int8_bounds(stream, query, 10)
    all_ids, all_relevance = best_by_scoring_all(stream, query, 10)
    assert fast_ids == all_ids, name
    assert fast_relevance == pytest.approx(all_relevance, abs=1e-4), name


def test_equal_cosines_in_exactly_one_batch_count_one_half_each():
    stream = stream_of(np.tile(axis(0) * 0.6 + axis(1) * 0.8, (EXACT_BATCH, 1)))
    ids, relevance = best_by_int8_bounds(stream, axis(0), 10)
    assert ids == list(range(10))
    assert relevance == [0.5] * 10, "a term equal for every memory counts one half"


@pytest.mark.parametrize("count", [EXACT_BATCH, 2 * EXACT_BATCH, EXACT_BATCH + 1])
def test_a_limit_of_whole_batches_gives_the_best_as_scoring_all_does(count):
    stream = stream_of(around(axis(0), 400, 0.05, seed=count))
    query = axis(0) + 0.3 * axis(2)
    assert best_by_int8_bounds(stream, query, count)[0] == \
        best_by_scoring_all(stream, query, count)[0]


def test_a_kind_filter_keeping_fewer_memories_than_the_limit_returns_them_all():
    vectors = around(axis(0), MIN_ROWS, 0.5, seed=3)
    stream = MemoryStream(DIM)
    for index, vector in enumerate(vectors):
        kind = "reflection" if index in (10, 2000) else "observation"
        stream.add(kind, f"memory {index}", NOW - timedelta(hours=index % 50), 5, vector)
    stream.take_changes()
    assert stream.int8_copy() is not None
    found = retrieve(stream, axis(0), NOW, limit=10, kinds=("reflection",), touch=False)
    assert sorted(s.memory.text for s in found) == ["memory 10", "memory 2000"]


def test_the_nearest_memory_counts_one_and_the_farthest_zero():
    vectors = np.stack([axis(0), axis(1), -axis(0), axis(0) * 0.8 + axis(1) * 0.6])
    stream = stream_of(vectors)
    ids, relevance = best_by_int8_bounds(stream, axis(0), 4)
    assert ids == [0, 3, 1, 2]
    assert relevance == pytest.approx([1.0, 0.9, 0.5, 0.0], abs=1e-6)


def test_a_query_that_is_all_zeros_makes_relevance_one_half_for_everyone():
    stream = stream_of(around(axis(0), 100, 0.5, seed=4))
    ids, relevance = best_by_int8_bounds(stream, np.zeros(DIM, dtype=np.float32), 10)
    assert ids == list(range(10))
    assert relevance == [0.5] * 10


@pytest.mark.parametrize("spread", [0.0005, 0.002, 0.02])
def test_memories_closer_together_than_the_int8_steps_rank_as_when_all_are_scored(spread):
    """A crowd of near neighbours (their cosines differ by less than the int8 bounds), with a few
    opposite memories so relevance spans about 2."""
    vectors = np.concatenate([around(axis(0), 1000, spread, seed=5), around(-axis(0), 5, 0.1, 6)])
    stream = stream_of(vectors)
    for sign in (1.0, -1.0):
        query = sign * (axis(0) + 0.5 * axis(1))
        for count in (1, 10):
            assert best_by_int8_bounds(stream, query, count)[0] == \
                best_by_scoring_all(stream, query, count)[0], (sign, count)


def test_the_newest_most_important_memory_wins_beside_a_closer_rival_of_coarse_int8():
    """Recency and importance put the memory least like the query first; a rival only a
    little behind it, closer to the query but with a wide int8 bound (one large component),
    must not shut it out. The cosines span more than the relevance weight (-0.55 to 0.6)."""
    rng = np.random.default_rng(0)
    query = unit(rng.standard_normal(DIM))
    count = MIN_ROWS + 8
    others = rng.standard_normal((count, DIM))
    others -= np.outer(others @ query, query)
    others /= np.linalg.norm(others, axis=1, keepdims=True)
    cosines = rng.uniform(0.0, 0.3, size=count)
    cosines[0], cosines[1] = -0.55, 0.6
    vectors = cosines[:, None] * query + np.sqrt(1 - cosines[:, None] ** 2) * others
    spike = axis(7) - axis(7) @ query * query
    spike = unit(spike)
    rest = unit(others[1] - others[1] @ spike * spike)
    vectors[1] = 0.6 * query + 0.8 * (0.9 * spike + np.sqrt(1 - 0.81) * rest)
    stream = MemoryStream(DIM)
    for index, vector in enumerate(vectors.astype(np.float32)):
        made, importance = {0: (NOW - timedelta(minutes=1), 10),
                            1: (NOW - timedelta(minutes=30), 1)}.get(
            index, (NOW - timedelta(hours=100), 1))
        stream.add("observation", f"memory {index}", made, importance, vector)
    stream.take_changes()
    assert best_by_scoring_all(stream, query, 1)[0] == [0]
    assert best_by_int8_bounds(stream, query, 1)[0] == [0]
