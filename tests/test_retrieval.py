"""Retrieval pinned term by term: recency, importance and relevance each point the right way,
are min-max normalised, weighted, bounded by a token budget, and refresh last access."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from townbot.mind.memory import MemoryStream
from townbot.mind.retrieval import RetrievalWeights, recall, retrieve, score_stream

NOW = datetime(2023, 2, 14, 12, 0)
QUERY = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
ALIGNED = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
ORTHOGONAL = np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32)


def stream_of(*memories: tuple[str, int, float, np.ndarray], kind: str = "observation"):
    stream = MemoryStream(dim=4)
    for text, importance, hours_ago, vector in memories:
        when = NOW - timedelta(hours=hours_ago)
        stream.add(kind, text, when, importance, vector)
    stream.take_changes()
    return stream


def order(stream, **kwargs) -> list[str]:
    return [s.memory.text for s in retrieve(stream, QUERY, NOW, touch=False, **kwargs)]


def test_recently_accessed_memories_rank_higher_not_the_oldest():
    stream = stream_of(("old", 5, 48, ALIGNED), ("new", 5, 1, ALIGNED))
    assert order(stream) == ["new", "old"]
    _, recency, _, _ = score_stream(stream, QUERY, NOW)
    assert recency.tolist() == [0.0, 1.0]


def test_more_important_memories_rank_higher():
    stream = stream_of(("dull", 2, 5, ALIGNED), ("vital", 9, 5, ALIGNED))
    assert order(stream) == ["vital", "dull"]


def test_more_relevant_memories_rank_higher():
    stream = stream_of(("unrelated", 5, 5, ORTHOGONAL), ("related", 5, 5, ALIGNED))
    assert order(stream) == ["related", "unrelated"]


def test_recency_decays_by_0995_per_game_hour_then_is_min_max_normalised():
    stream = stream_of(("a", 5, 0, ALIGNED), ("b", 5, 50, ALIGNED), ("c", 5, 100, ALIGNED))
    _, recency, importance, relevance = score_stream(stream, QUERY, NOW)
    expected_middle = (0.995 ** 50 - 0.995 ** 100) / (1 - 0.995 ** 100)
    assert recency.tolist() == pytest.approx([1.0, expected_middle, 0.0])
    assert importance.tolist() == [0.5, 0.5, 0.5], "a constant term carries no information"
    assert all(0.0 <= value <= 1.0 for value in relevance)


def test_weights_are_configurable():
    stream = stream_of(("recent and vital", 10, 0, ORTHOGONAL), ("on topic", 1, 90, ALIGNED))
    assert order(stream)[0] == "recent and vital"
    assert order(stream, weights=RetrievalWeights(recency=0, importance=0, relevance=1))[0] == \
        "on topic"


def test_results_fit_the_token_budget():
    stream = stream_of(*[(f"memory number {i} " + "word " * 30, 5, i, ALIGNED) for i in range(6)])
    found = retrieve(stream, QUERY, NOW, limit=6, token_budget=100, touch=False)
    assert 0 < len(found) < 6
    assert sum(len(s.memory.text) // 4 + 1 for s in found) <= 100


def test_retrieval_refreshes_last_access_of_what_it_returns_only():
    stream = stream_of(("kept", 9, 30, ALIGNED), ("left", 1, 30, ORTHOGONAL))
    retrieve(stream, QUERY, NOW, limit=1)
    kept, left = stream.memories
    assert kept.last_accessed == NOW
    assert left.last_accessed == NOW - timedelta(hours=30)
    _, touched = stream.take_changes()
    assert [m.text for m in touched] == ["kept"], "the store is told to save the new access time"


def test_kinds_can_be_excluded():
    stream = stream_of(("a plan", 9, 0, ALIGNED), kind="plan")
    stream.add("observation", "a sight", NOW, 1, ORTHOGONAL)
    assert order(stream, kinds=("observation",)) == ["a sight"]


def test_retrieval_over_ten_thousand_memories_returns_the_best_in_order():
    rng = np.random.default_rng(0)
    stream = MemoryStream(dim=256)
    for index in range(10_000):
        vector = rng.standard_normal(256).astype(np.float32)
        stream.add("observation", f"m{index}", NOW - timedelta(minutes=index), index % 10 + 1,
                   vector / np.linalg.norm(vector))
    query = rng.standard_normal(256).astype(np.float32)
    found = retrieve(stream, query, NOW, limit=10, touch=False)
    total, *_ = score_stream(stream, query, NOW)
    assert [s.score for s in found] == pytest.approx(sorted(total, reverse=True)[:10])


def test_a_memory_last_recalled_after_the_query_time_counts_as_just_recalled():
    """A clock moved back (or a query dated in the past) must not lift recency above 1."""
    stream = stream_of(("later", 5, -3, ALIGNED), ("now", 5, 0, ALIGNED), ("old", 5, 50, ALIGNED))
    found = {s.memory.text: s.recency for s in retrieve(stream, QUERY, NOW, touch=False)}
    assert found == {"later": 1.0, "now": 1.0, "old": 0.0}


def test_score_stream_gives_other_kinds_no_score_and_uses_the_decay_it_is_given():
    stream = stream_of(("a sight", 5, 0, ALIGNED), ("an old sight", 5, 2, ALIGNED))
    stream.add("reflection", "a thought", NOW - timedelta(hours=1), 5, ALIGNED)
    total = score_stream(stream, QUERY, NOW, kinds=("reflection",))[0]
    assert total[:2].tolist() == [-np.inf, -np.inf] and np.isfinite(total[2])
    recency = score_stream(stream, QUERY, NOW, decay=0.5)[1]
    assert recency.tolist() == pytest.approx([1.0, 0.0, (0.5 - 0.25) / (1 - 0.25)])


def test_equal_scores_at_the_edge_of_the_limit_go_to_the_older_memories():
    stream = MemoryStream(dim=4)
    same = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    for index in range(50):
        stream.add("observation", f"same {index}", NOW, 5, same)
    stream.add("observation", "other", NOW - timedelta(hours=5), 1,
               np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32))
    found = retrieve(stream, same, NOW, limit=7, touch=False)
    assert [s.memory.id for s in found] == list(range(7))


def test_recall_of_an_empty_stream_or_an_absent_kind_is_empty():
    stream = MemoryStream(dim=4)
    assert recall(stream, np.ones(4, dtype=np.float32), NOW) == []
    stream.add("plan", "wake up", NOW, 3, np.ones(4, dtype=np.float32))
    assert recall(stream, np.ones(4, dtype=np.float32), NOW, kinds=("reflection",)) == []
    assert [m.text for m in recall(stream, np.ones(4, dtype=np.float32), NOW)] == ["wake up"]


def test_a_limit_of_nothing_returns_nothing_and_touches_nothing():
    stream = stream_of(*[(f"m {n}", 5, n, ALIGNED) for n in range(100)])
    assert retrieve(stream, QUERY, NOW, limit=0) == [] and stream.take_changes() == ([], [])
