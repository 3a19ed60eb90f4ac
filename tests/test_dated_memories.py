"""The memories that name a date and the memories made on a date, found through what the stream
keeps (its search by part of a text, its ids by date): the same memories, in the same order, as
reading every memory."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta

import numpy as np

from townbot.mind.memory import KINDS, Memory, MemoryStream
from townbot.mind.planning import dated_memories, notable_memories

START = datetime(2023, 1, 30, 7, 0)
VECTOR = np.array([1, 0, 0, 0], dtype=np.float32)
# Labels inside longer ones ("February 1" in "February 14", "1 February" in "21 February"),
# other months, the short month name, and words that hold a month's name without a date.
FRAGMENTS = ("February 1", "February 14", "Feb 1", "Feb 14th", "1 February", "21 February",
             "January 31", "Jan 31", "31 January", "March 1", "Mar 1", "1 March", "February",
             "Feb", "Februaryish 1", "talked with Maria", " talked with ", "the party", "at 5 pm")


def scanned(stream: MemoryStream, day: datetime, limit: int) -> list[Memory]:
    """What dated_memories returns, by reading every memory's text."""
    labels = (f"{day:%B} {day.day}", f"{day:%b} {day.day}", f"{day.day} {day:%B}")
    named = [m for m in stream.memories
             if m.kind not in ("plan", "reflection") and any(label in m.text for label in labels)]
    return sorted(named, key=lambda m: (-m.importance, " talked with " in m.text, -m.id))[:limit]


def add_some(stream: MemoryStream, rng: random.Random, count: int, now: datetime) -> None:
    for _ in range(count):
        text = " ".join(rng.choices(FRAGMENTS, k=rng.randint(1, 4)))
        stream.add(rng.choice(KINDS), text, now, rng.randint(1, 10), VECTOR)


def test_dated_memories_are_those_a_reading_of_every_text_finds_as_the_stream_grows():
    rng = random.Random(13)
    stream = MemoryStream(dim=4)
    days = [START + timedelta(days=offset) for offset in range(0, 33, 2)]
    days += [START + timedelta(days=2), START + timedelta(days=15)]  # a month asked for again
    for day in days:
        add_some(stream, rng, rng.randint(0, 40), day)
        for _ in range(5):  # importance moves after a memory was found
            stream.rescore_all([rng.randrange(len(stream))], [rng.randint(1, 10)])
        for limit in (3, 1000):
            assert dated_memories(stream, day, limit) == scanned(stream, day, limit)
    assert any(dated_memories(stream, day, 1000) for day in days)


def test_the_ids_holding_a_part_follow_the_stream_as_it_grows():
    rng = random.Random(7)
    stream = MemoryStream(dim=4)
    for _ in range(6):
        add_some(stream, rng, rng.randint(0, 20), START)
        for part in ("February ", " February", "Feb ", "Maria", "nowhere"):
            assert stream.ids_containing(part) == tuple(
                m.id for m in stream.memories if part in m.text)


def made_on(stream: MemoryStream, day: date, limit: int) -> list[Memory]:
    """What notable_memories returns, by reading every memory."""
    return sorted((m for m in stream.memories if m.created.date() == day and m.kind != "plan"),
                  key=lambda m: (-m.importance, m.id))[:limit]


def test_a_days_notable_memories_are_those_a_reading_of_every_memory_finds():
    rng = random.Random(5)
    stream = MemoryStream(dim=4)
    for step in range(12):
        for _ in range(rng.randint(0, 30)):  # times out of order, as a memory remembered late
            made = START + timedelta(hours=rng.randint(0, 24 * (step + 1)))
            stream.add(rng.choice(KINDS), "m", made, rng.randint(1, 10), VECTOR)
        for _ in range(5):
            stream.rescore_all([rng.randrange(len(stream))], [rng.randint(1, 10)])
        for offset in range(step + 3):
            day = (START + timedelta(days=offset)).date()
            for limit in (4, 1000):
                assert notable_memories(stream, day, limit) == made_on(stream, day, limit)
            assert stream.ids_created_on(day) == tuple(
                m.id for m in stream.memories if m.created.date() == day)
