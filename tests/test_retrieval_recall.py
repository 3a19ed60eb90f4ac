"""recall, the retrieval for callers that read only the memories, returns exactly the memories
retrieve returns, in the same order, and leaves the stream as retrieve leaves it (the same
access times, touched ids and revisions), over small streams and streams with an int8 copy,
kind filters, weights, limits, token budgets, touching or not, and totals that are not finite."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest
from test_retrieval_exact import FILTERS, NOW, town_like_stream

from townbot.mind.memory import MemoryStream
from townbot.mind.retrieval import RetrievalWeights, recall, retrieve

WEIGHTS = [RetrievalWeights(), RetrievalWeights(recency=0.5, importance=1.0, relevance=2.0)]
BUDGETS = [None, 1, 40, 400, 100_000]


def same_state(one: MemoryStream, other: MemoryStream) -> None:
    assert [m.last_accessed for m in one.memories] == [m.last_accessed for m in other.memories]
    assert one.arrays()[2].tobytes() == other.arrays()[2].tobytes()
    assert one.touched_ids == other.touched_ids
    mine, theirs = one.revisions(), other.revisions()
    assert [rows.tolist() for rows in mine.accessed] == [rows.tolist() for rows in theirs.accessed]
    assert (mine.accessed_at, mine.importance) == (theirs.accessed_at, theirs.importance)


def compare(scored: MemoryStream, plain: MemoryStream, query: np.ndarray, now: datetime = NOW,
            **options) -> list[int]:
    """retrieve on one stream and recall on its twin: the same memories, the same state after."""
    want = [found.memory.id for found in retrieve(scored, query, now, **options)]
    got = recall(plain, query, now, **options)
    assert [memory.id for memory in got] == want, options
    assert all(memory is plain.memories[memory.id] for memory in got)
    same_state(scored, plain)
    return want


@pytest.mark.parametrize(("dim", "count"), [(16, 300), (256, 4200)])
def test_recall_returns_retrieves_memories_and_touches_alike(dim, count):
    scored, topics = town_like_stream(dim, count, seed=dim)
    plain, _ = town_like_stream(dim, count, seed=dim)
    assert (scored.int8_copy() is None) == (dim == 16)
    rng = np.random.default_rng(dim)
    sizes = set()
    for round_ in range(60):
        query = topics[rng.integers(0, len(topics))] + 0.5 * rng.standard_normal(dim)
        now = NOW + timedelta(minutes=10 * (round_ // 4))  # a few retrievals at each moment
        found = compare(scored, plain, query.astype(np.float32), now=now,
                        limit=int(rng.choice([1, 5, 10, 30])),
                        token_budget=BUDGETS[int(rng.integers(0, len(BUDGETS)))],
                        weights=WEIGHTS[int(rng.integers(0, len(WEIGHTS)))],
                        kinds=FILTERS[int(rng.integers(0, len(FILTERS)))],
                        touch=bool(rng.integers(0, 4)))
        sizes.add(len(found))
    assert len(sizes) > 3  # budgets and limits cut the results at several lengths


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_recall_drops_what_retrieve_drops_at_totals_that_are_not_finite():
    scored, topics = town_like_stream(16, 200, seed=3)
    plain, _ = town_like_stream(16, 200, seed=3)
    for stream in (scored, plain):  # a memory whose cosine is infinite: its relevance is NaN
        stream.add("observation", "too bright", NOW, 5, np.full(16, np.inf, dtype=np.float32))
    query = np.abs(topics[0]) + 0.1
    found = compare(scored, plain, query, limit=len(scored), token_budget=None)
    assert 0 < len(found) < len(scored)
    assert compare(scored, plain, query, limit=len(scored), token_budget=300)
    assert compare(scored, plain, np.full(16, np.nan, dtype=np.float32), limit=10) == []
    for weights in (RetrievalWeights(recency=np.inf), RetrievalWeights(importance=-np.inf)):
        compare(scored, plain, topics[1], limit=10, weights=weights, token_budget=100)


def test_recall_of_an_empty_stream_or_an_absent_kind_is_empty():
    stream = MemoryStream(dim=4)
    assert recall(stream, np.ones(4, dtype=np.float32), NOW) == []
    stream.add("plan", "wake up", NOW, 3, np.ones(4, dtype=np.float32))
    assert recall(stream, np.ones(4, dtype=np.float32), NOW, kinds=("reflection",)) == []
    assert [m.text for m in recall(stream, np.ones(4, dtype=np.float32), NOW)] == ["wake up"]
