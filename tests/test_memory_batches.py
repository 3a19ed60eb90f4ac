"""A scoring's rescores in one step (MemoryStream.rescore_all) change a stream as rescoring its
memories one at a time does: the same records, importance column, changes for the store and
revisions for retrieval."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import numpy as np

from townbot.mind.memory import KINDS, MemoryStream

START = datetime(2023, 2, 13, 7, 0)


def revised(stream: MemoryStream) -> tuple[list[int], set[float], set[int]]:
    """What the stream tells retrieval changed in place (rows accessed, in order, the hours they
    were set to, rows rescored), cleared as retrieval clears it once it has caught up."""
    revisions = stream.revisions()
    told = ([row for rows in revisions.accessed for row in rows.tolist()],
            set(revisions.accessed_at), set(revisions.importance))
    revisions.clear()
    return told


def test_rescoring_in_one_step_is_rescoring_one_memory_at_a_time():
    rng = random.Random(5)
    vectors = np.random.default_rng(5)
    single, batched = MemoryStream(dim=8), MemoryStream(dim=8)
    for stream in (single, batched):
        stream.revisions()  # retrieval asked: revisions are recorded from now on
    now = START
    for _ in range(60):
        now += timedelta(minutes=rng.choice([0, 10, 30]))
        for _ in range(rng.randint(1, 9)):
            memory = (rng.choice(KINDS), f"sight {rng.randint(0, 40)}", now, rng.randint(1, 10),
                      vectors.standard_normal(8).astype(np.float32))
            single.add(*memory), batched.add(*memory)
        rescored = rng.sample(range(len(single)), min(len(single), rng.randint(0, 70)))
        scores = [rng.randint(1, 10) for _ in rescored]
        for index, score in zip(rescored, scores, strict=True):
            single.rescore(index, score)
        batched.rescore_all(rescored, scores)
        assert single.memories == batched.memories
        for mine, theirs in zip(single.arrays(), batched.arrays(), strict=True):
            assert mine.tobytes() == theirs.tobytes()
        assert single.take_changes() == batched.take_changes()
        assert revised(single) == revised(batched)
