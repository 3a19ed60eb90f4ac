"""Retrieval's fast path (only the rows a kind filter keeps are scored, a partial selection of
the best) returns exactly what scoring every memory in float32 and sorting them all returns:
the same memories in the same order with the same scores, over a realistic stream (topics,
repeated sights, equal scores, a week of access times) at the dimensions towns use."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from townbot.mind.memory import MemoryStream, hours_since_epoch
from townbot.mind.planning import INTENTION_KINDS
from townbot.mind.quantised import Int8Copy
from townbot.mind.retrieval import RECENCY_DECAY, RetrievalWeights, retrieve

NOW = datetime(2023, 2, 20, 18, 0)
KIND_SHARES = {"observation": 0.7, "plan": 0.1, "conversation": 0.1, "reflection": 0.05,
               "thought": 0.05}
FILTERS = [None, INTENTION_KINDS, ("observation", "reflection"), ("reflection",), ("plan",)]


def town_like_stream(dim: int, count: int, seed: int) -> tuple[MemoryStream, np.ndarray]:
    """Memories clustered around topics like sentence embeddings; every fifth one repeats an
    earlier memory exactly (same text, vector, importance and time: equal scores), and a third
    were recalled since they were made. Returns the stream and its topic centres."""
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((40, dim)).astype(np.float32)
    kinds = rng.choice(list(KIND_SHARES), size=count, p=list(KIND_SHARES.values()))
    stream = MemoryStream(dim)
    made: list[tuple[str, str, datetime, int, np.ndarray]] = []
    for index in range(count):
        if index % 5 == 4:
            made.append(made[int(rng.integers(0, len(made)))])
        else:
            vector = topics[rng.integers(0, 40)] + 0.6 * rng.standard_normal(dim).astype(np.float32)
            when = NOW - timedelta(minutes=int(rng.integers(0, 7 * 24 * 60)))
            made.append((str(kinds[index]), f"memory {index}", when,
                         int(rng.choice(10, p=[.3, .2, .15, .1, .08, .06, .05, .03, .02, .01])) + 1,
                         vector / np.linalg.norm(vector)))
        kind, text, when, importance, vector = made[-1]
        stream.add(kind, text, when, importance, vector)
    recalled = rng.choice(count, size=count // 3, replace=False)
    for index in recalled:
        made_at = stream.memories[int(index)].created
        stream.touch([int(index)], made_at + (NOW - made_at) * float(rng.uniform(0, 1)))
    stream.take_changes()
    return stream, topics


def cosines_of(stream: MemoryStream, query: np.ndarray, in_float64: bool) -> np.ndarray:
    """float32 products, or float64 sums rounded to float32 once (`in_float64`: what the int8
    first pass rescores with, so that equal vectors always tie)."""
    vectors = stream.arrays()[0]
    query = query / np.linalg.norm(query)
    if in_float64:
        return (vectors.astype(np.float64) @ query.astype(np.float64)).astype(np.float32)
    return vectors @ query


def by_full_sort(stream: MemoryStream, cosines: np.ndarray, limit: int, weights: RetrievalWeights,
                 kinds: tuple[str, ...] | None,
                 now: datetime = NOW) -> list[tuple[int, float, float, float, float]]:
    """The definition, spelt out: every memory scored, each term min-max normalised over the
    whole stream, filtered afterwards, a full stable sort (equal scores: older memory first)."""
    _, importance, accessed = stream.arrays()

    def normalised(values: np.ndarray) -> np.ndarray:
        low, high = values.min(), values.max()
        return np.full_like(values, 0.5) if high - low < 1e-12 else (values - low) / (high - low)

    recency = normalised(np.power(RECENCY_DECAY, np.maximum(0.0, hours_since_epoch(now) - accessed)))
    importance_n = normalised(importance.astype(np.float64))
    relevance = normalised(cosines.astype(np.float64))
    total = (weights.recency * recency + weights.importance * importance_n
             + weights.relevance * relevance)
    allowed = [i for i, m in enumerate(stream.memories) if kinds is None or m.kind in kinds]
    best = sorted(allowed, key=lambda i: (-total[i], i))[:limit]
    return [(i, total[i], recency[i], importance_n[i], relevance[i]) for i in best]


def queries(stream: MemoryStream, topics: np.ndarray, seed: int) -> list[np.ndarray]:
    """Near a topic, exactly a stored memory's vector (a repeated one: ties at the top) and
    unrelated to everything."""
    rng = np.random.default_rng(seed)
    dim = topics.shape[1]
    return [topics[3] + 0.3 * rng.standard_normal(dim).astype(np.float32),
            stream.vector(9).copy(),
            rng.standard_normal(dim).astype(np.float32)]


def found_and_expected(stream: MemoryStream, topics: np.ndarray, seed: int, in_float64: bool):
    for query in queries(stream, topics, seed=seed):
        cosines = cosines_of(stream, query, in_float64)
        for kinds in FILTERS:
            for weights in (RetrievalWeights(), RetrievalWeights(recency=0.5, relevance=2.0)):
                for limit in (1, 10, 30):
                    expected = by_full_sort(stream, cosines, limit, weights, kinds)
                    found = [(s.memory.id, s.score, s.recency, s.importance, s.relevance)
                             for s in retrieve(stream, query, NOW, limit=limit, weights=weights,
                                               kinds=kinds, touch=False)]
                    yield found, expected, (kinds, weights, limit)


@pytest.mark.parametrize(("dim", "count"), [(64, 6000), (256, 3000), (1536, 2000)])
def test_fast_retrieval_returns_what_scoring_everything_and_sorting_returns(dim, count):
    stream, topics = town_like_stream(dim, count, seed=dim)
    assert stream.int8_copy() is None, "float32 products throughout at these sizes"
    for found, expected, case in found_and_expected(stream, topics, dim, in_float64=False):
        assert found == expected, case


@pytest.mark.parametrize(("dim", "count"), [(768, 4500), (1536, 6000)])
def test_the_int8_first_pass_changes_nothing_it_returns(dim, count):
    """Many memories at high dimensions: the int8 copy bounds the cosines and only the memories
    the bounds leave open are scored exactly; the result is the full sort's, to the bit when
    both sum in float64, and the same memories in the same order as float32 products."""
    stream, topics = town_like_stream(dim, count, seed=dim)
    assert stream.int8_copy() is not None
    for found, expected, case in found_and_expected(stream, topics, dim, in_float64=True):
        assert found == expected, case
    for found, expected, case in found_and_expected(stream, topics, dim, in_float64=False):
        assert [row[0] for row in found] == [row[0] for row in expected], case
        assert np.array([row[1:] for row in found]) == \
            pytest.approx(np.array([row[1:] for row in expected]), abs=1e-6), case


def test_equal_scores_at_the_edge_of_the_limit_go_to_the_older_memories():
    stream = MemoryStream(dim=4)
    same = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    for index in range(50):
        stream.add("observation", f"same {index}", NOW, 5, same)
    stream.add("observation", "other", NOW - timedelta(hours=5), 1,
               np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32))
    found = retrieve(stream, same, NOW, limit=7, touch=False)
    assert [s.memory.id for s in found] == list(range(7))


def test_the_int8_bounds_hold_for_awkward_vectors():
    """Every cosine the int8 copy estimates is within its bound of the float32 product: spiky
    vectors (one large component), sparse ones, tiny ones, zero ones and unnormalised ones."""
    rng = np.random.default_rng(5)
    dim = 768
    vectors = rng.standard_normal((3000, dim)).astype(np.float32)
    vectors[::7, 0] = 40.0  # one component dwarfs the rest: a coarse step for everything else
    vectors[1::7, 5:] = 0.0  # sparse
    vectors[2::7] *= 1e-6  # tiny
    vectors[3::7] = 0.0  # nothing could be embedded
    vectors[4::7] *= 3.0  # not normalised
    copy = Int8Copy(dim)
    copy.extend(0, vectors[:1500])
    for index in range(1500, len(vectors)):  # one at a time, as memories arrive
        copy.extend(index, vectors[index: index + 1])
    for query in (rng.standard_normal(dim), vectors[7], np.eye(dim)[0] * 0.2,
                  np.where(rng.random(dim) < 0.05, 1.0, 0.0)):
        query = query.astype(np.float32)
        estimate, bound = copy.cosines(query, len(vectors))
        exact = vectors @ query
        assert np.all(np.abs(estimate - exact) <= bound)
        assert np.all(np.abs(estimate - (vectors.astype(np.float64) @ query)) <= bound)
