"""The standing terms a stream keeps between retrievals (decay ** idle, normalised recency and
importance, their weighted sum, each memory's cost in tokens) stay what scoring every memory
afresh gives, to the bit, through what a town does to a stream between and within ticks:
memories added one by one and resumed in a batch, retrievals touching what they return at the
same moment and at the next, an access moved back in time, the oldest access touched, an
importance rescored past the extremes, every importance equal, other weights, kind filters;
and the extremes they are scaled by, found with argmin and argmax, are the reductions'."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import numpy as np
import pytest
from test_retrieval_exact import by_full_sort, cosines_of

from townbot.mind.memory import KINDS, Memory, MemoryStream
from townbot.mind.retrieval import RetrievalWeights, StandingTerms, highest, lowest, retrieve

START = datetime(2023, 2, 13, 7, 0)
WEIGHTS = [RetrievalWeights(), RetrievalWeights(recency=0.5, importance=1.0, relevance=2.0),
           RetrievalWeights(recency=1.0, importance=0.25, relevance=1.0)]


def expected(stream: MemoryStream, query: np.ndarray, now: datetime, limit: int,
             weights: RetrievalWeights, kinds: tuple[str, ...] | None,
             budget: int | None) -> list[tuple[int, float, float, float, float]]:
    """The definition (every memory scored afresh, a full stable sort), then the token budget
    in order."""
    found, spent = [], 0
    for row in by_full_sort(stream, cosines_of(stream, query, in_float64=False), limit, weights,
                            kinds, now):
        cost = len(stream.memories[row[0]].text) // 4 + 1
        if budget is None or spent + cost <= budget:
            spent += cost
            found.append(row)
    return found


def vector_near(rng: np.random.Generator, topics: np.ndarray) -> np.ndarray:
    vector = topics[rng.integers(0, len(topics))] + 0.7 * rng.standard_normal(topics.shape[1])
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def add_some(stream: MemoryStream, rng: np.random.Generator, topics: np.ndarray, now: datetime,
             count: int) -> None:
    for _ in range(count):
        stream.add(KINDS[int(rng.integers(0, len(KINDS)))], "seen " * int(rng.integers(1, 40)),
                   now, int(rng.integers(1, 11)), vector_near(rng, topics),
                   last_accessed=now - timedelta(minutes=int(rng.integers(0, 3)) * 10))


def check(stream: MemoryStream, rng: np.random.Generator, topics: np.ndarray, now: datetime,
          touch: bool = True) -> None:
    """One retrieval with a random filter, weights, limit and budget equals the definition."""
    query = vector_near(rng, topics)
    kinds = [None, None, ("observation", "reflection"), ("plan",)][int(rng.integers(0, 4))]
    weights = WEIGHTS[int(rng.integers(0, len(WEIGHTS)))]
    limit = int(rng.choice([1, 10, 30]))
    budget = [None, 60, 600][int(rng.integers(0, 3))]
    want = expected(stream, query, now, limit, weights, kinds, budget)
    found = retrieve(stream, query, now, limit=limit, token_budget=budget, weights=weights,
                     kinds=kinds, touch=touch)
    assert [(s.memory.id, s.score, s.recency, s.importance, s.relevance) for s in found] == want


@pytest.mark.parametrize("dim", [16, 256])
def test_what_a_stream_keeps_between_retrievals_stays_what_scoring_afresh_gives(dim):
    rng = np.random.default_rng(dim)
    topics = rng.standard_normal((8, dim))
    stream = MemoryStream(dim)
    now = START
    add_some(stream, rng, topics, now - timedelta(days=3), 40)
    for tick in range(60):
        now += timedelta(minutes=10 * int(rng.integers(0, 3)))  # sometimes the same moment again
        add_some(stream, rng, topics, now, int(rng.integers(0, 4)))
        for _ in range(int(rng.integers(1, 5))):
            check(stream, rng, topics, now)
        if tick % 7 == 3:  # an access moved back in time: the newest access is no longer the latest
            stream.touch([int(rng.integers(0, len(stream)))], now - timedelta(hours=30))
        if tick % 5 == 1:  # the oldest access touched: recency's low end moves
            oldest = int(np.argmin(stream.arrays()[2]))
            stream.touch([oldest], now)
        if tick % 6 == 2:  # rescored past the extremes and back within them
            stream.rescore(int(rng.integers(0, len(stream))), int(rng.choice([1, 10, 5])))
        check(stream, rng, topics, now, touch=False)
        stream.take_changes()
    assert isinstance(stream.kept_for_retrieval, StandingTerms)


def test_memories_resumed_in_a_batch_and_equal_importances_are_covered():
    rng = np.random.default_rng(3)
    topics = rng.standard_normal((4, 32))
    stream = MemoryStream(32)
    for index in range(30):
        stream.add("observation", f"first {index}", START, 4, vector_near(rng, topics))
    check(stream, rng, topics, START)  # every importance equal: normalised to 0.5
    check(stream, rng, topics, START)  # and every access, after a touch at the same moment
    later = START + timedelta(hours=2)
    batch = [Memory(len(stream) + i, "thought", f"resumed {i}", later, later, 4 + i % 2) for i in range(50)]
    stream.extend_stored(batch, np.stack([vector_near(rng, topics) for _ in batch]))
    for _ in range(5):
        check(stream, rng, topics, later)
    check(stream, rng, topics, later + timedelta(minutes=10))


def test_a_query_asked_again_gets_what_scoring_afresh_gives():
    """A stream keeps each query's relevance while it holds the same memories: the same queries
    asked again at the same moment (touching in between), after memories arrive and at a later
    moment, with and without a kind filter, still equal the definition."""
    rng = np.random.default_rng(7)
    topics = rng.standard_normal((6, 64))
    stream = MemoryStream(64)
    add_some(stream, rng, topics, START, 60)
    queries = [vector_near(rng, topics) for _ in range(3)]
    now = START
    for step in range(12):
        if step % 4 == 3:
            add_some(stream, rng, topics, now, 2)
        if step % 3 == 2:
            now += timedelta(minutes=10)
        for query in queries:
            for kinds, limit in ((None, 10), (("observation", "plan"), 5)):
                weights = WEIGHTS[step % len(WEIGHTS)]
                want = expected(stream, query, now, limit, weights, kinds, None)
                found = retrieve(stream, query, now, limit=limit, weights=weights, kinds=kinds)
                assert [(s.memory.id, s.score, s.recency, s.importance, s.relevance)
                        for s in found] == want
    assert stream.kept_for_retrieval.by_query  # the queries were kept


def test_memories_added_past_the_extremes_widen_them():
    """Memories added with an importance past the kept extremes, or accessed after the moment
    asked about (no idle time: no recency above 1), rescale every memory as scoring afresh does."""
    rng = np.random.default_rng(11)
    topics = rng.standard_normal((4, 32))
    stream = MemoryStream(32)
    for index in range(40):
        stream.add("observation", f"middling {index}", START, 4 + index % 3, vector_near(rng, topics))
    now = START
    for importance in (3, 2, 9, 1, 10):
        now += timedelta(minutes=10)
        check(stream, rng, topics, now)
        stream.add("thought", f"rated {importance}", now, importance, vector_near(rng, topics),
                   last_accessed=now + timedelta(hours=importance))
        check(stream, rng, topics, now)
        check(stream, rng, topics, now + timedelta(minutes=10))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_lowest_and_highest_are_the_reductions_values():
    """A column's extremes by argmin and argmax are np.minimum.reduce's and np.maximum.reduce's,
    NaN whenever one is there, at either precision, with ties and infinities; zeros of both
    signs are left out (the one case where they may differ, in the zero's sign)."""
    rng = np.random.default_rng(5)
    for round_ in range(2000):
        values = rng.standard_normal(int(rng.integers(1, 300)))
        values = np.round(values * 2) / 2 if round_ % 3 == 0 else values  # many ties
        for special in (np.nan, np.inf, -np.inf):
            if rng.integers(0, 6) == 0:
                values[rng.integers(0, len(values))] = special
        values[values == 0] = 0.0  # no -0.0
        values = values.astype(np.float32 if round_ % 2 else np.float64)
        for found, reduction in ((lowest(values), np.minimum.reduce), (highest(values), np.maximum.reduce)):
            want = float(reduction(values))
            assert found == want or (math.isnan(found) and math.isnan(want))
            assert type(found) is float
