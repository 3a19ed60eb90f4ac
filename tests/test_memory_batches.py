"""A stream changed a batch at a time (the queue stored together, a scoring's rescores, the
newest ids of what was seen again) is the stream changed a memory at a time: the same records,
arrays, ids, changes for the store and revisions for retrieval, int8 copy included."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import numpy as np
import pytest

from townbot.mind.memory import KINDS, MemoryStream
from townbot.mind.quantised import MIN_DIM, MIN_ROWS

START = datetime(2023, 2, 13, 7, 0)


def same_streams(one: MemoryStream, other: MemoryStream) -> None:
    assert one.memories == other.memories
    for mine, theirs in zip(one.arrays(), other.arrays(), strict=True):
        assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes()
    assert one.kind_mask(KINDS).tolist() == other.kind_mask(KINDS).tolist()
    assert one.kind_rows(("observation",)).tolist() == other.kind_rows(("observation",)).tolist()
    assert one.take_changes() == other.take_changes()
    assert revised(one) == revised(other)


def revised(stream: MemoryStream) -> tuple[list[int], set[float], set[int]]:
    """What the stream tells retrieval changed in place (rows accessed, in order, the hours they
    were set to, rows rescored), cleared as retrieval clears it once it has caught up."""
    revisions = stream.revisions()
    told = ([row for rows in revisions.accessed for row in rows.tolist()],
            set(revisions.accessed_at), set(revisions.importance))
    revisions.clear()
    return told


@pytest.mark.parametrize("dim", [8, MIN_DIM])
def test_a_stream_added_to_and_rescored_in_batches_is_the_stream_changed_one_at_a_time(dim):
    rng = random.Random(5)
    vectors = np.random.default_rng(5)
    single, batched = MemoryStream(dim=dim), MemoryStream(dim=dim)
    for stream in (single, batched):
        stream.revisions()  # retrieval asked: revisions are recorded from now on
    texts = [f"sight {n}" for n in range(40)]  # texts repeat: the newest with one is found
    now = START
    rounds = 60 if dim < MIN_DIM else 3
    for _ in range(rounds):
        now += timedelta(minutes=rng.choice([0, 10, 10, 30]))
        count = rng.randint(1, 9) if dim < MIN_DIM else MIN_ROWS // 2 + 7  # past the copy's size
        kinds = [rng.choice(KINDS) for _ in range(count)]
        batch = [rng.choice(texts) for _ in range(count)]
        created = [now - timedelta(minutes=rng.choice([0, 0, 5])) for _ in range(count)]
        importance = [rng.randint(1, 10) for _ in range(count)]
        evidence = [tuple(rng.sample(range(len(single) + 2), rng.randint(0, 2))) for _ in range(count)]
        matrix = vectors.standard_normal((count, dim)).astype(np.float32)
        ids = [single.add(*memory).id for memory in
               zip(kinds, batch, created, importance, matrix, evidence, strict=True)]
        assert list(batched.add_all(kinds, batch, created, importance, matrix, evidence)) == ids
        seen = rng.sample(texts, 6) + ["never seen"]
        latest = [memory.id for memory in map(single.latest_with, seen) if memory is not None]
        assert batched.latest_ids_with(seen) == latest
        rescored = rng.sample(range(len(single)), min(len(single), rng.randint(0, 12)))
        scores = [rng.randint(1, 10) for _ in rescored]
        for index, score in zip(rescored, scores, strict=True):
            single.rescore(index, score)
        batched.rescore_all(rescored, scores)
        if rng.random() < 0.3:
            single.int8_copy(), batched.int8_copy()
        same_streams(single, batched)
    if dim >= MIN_DIM:
        assert batched.int8_copy() is not None


def test_a_batch_of_unknown_kind_or_wrong_shape_is_refused_whole():
    stream = MemoryStream(dim=4)
    with pytest.raises(ValueError, match="unknown memory kind 'dream'"):
        stream.add_all(["observation", "dream"], ["a", "b"], [START] * 2, [1, 1],
                       np.zeros((2, 4), dtype=np.float32), [(), ()])
    with pytest.raises(ValueError, match="embeddings have shape"):
        stream.add_all(["observation"], ["a"], [START], [1], np.zeros((1, 3), dtype=np.float32), [()])
    assert len(stream) == 0 and not stream.take_changes()[0]
