"""What a speaker knows of the news beside the memories retrieved for each line (issue 32):
the facts it was told in talks, today's and tomorrow's dated events, the last day's talks;
and the offline speaker, asked through the real dialogue, not claiming it never heard."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from townbot.llm.offline import OfflineModel
from townbot.llm.offline.words import alternatives
from townbot.mind import dialogue
from townbot.mind.memory import MemoryStream

NOON = datetime(2023, 2, 13, 12, 0)
PARTY = ("Isabella Rodriguez intends to host a Valentine's Day party at Hobbs Cafe on "
         "February 14, from 5 pm until 7 pm. (heard from Jane Moreno)")


def stream_of(*memories: tuple[str, str, datetime, int]) -> MemoryStream:
    stream = MemoryStream(256)
    for kind, text, when, importance in memories:
        stream.add(kind, text, when, importance, np.zeros(256, dtype=np.float32))
    return stream


def test_news_known_is_what_was_told_the_dated_events_and_the_last_days_talks():
    long_ago = NOON - timedelta(days=2)
    stream = stream_of(
        ("conversation", PARTY, NOON - timedelta(hours=3), 8),
        ("conversation", "Klaus Mueller talked with Wolfgang Schulz at the dorm. Wolfgang: "
                         "I'm off to the Valentine's Day party tomorrow.", NOON - timedelta(hours=2), 6),
        ("conversation", "Klaus Mueller talked with Maria Lopez at the library. Maria: Hi!",
         long_ago, 4),
        ("observation", "Klaus Mueller is reading in the library", NOON, 2),
        ("plan", "Klaus Mueller's plan for Monday February 13: read, then write", NOON, 5))
    known = [entry.text for entry in dialogue.news_known(stream, "Klaus Mueller", NOON)]
    assert known[0] == PARTY  # told, and dated tomorrow: once
    assert known.count(PARTY) == 1
    assert any(text.startswith("Klaus Mueller talked with Wolfgang") for text in known)
    assert not any("Maria Lopez" in text or "reading" in text or "plan for" in text
                   for text in known)


async def test_a_speaker_asked_of_a_party_it_was_told_of_long_ago_says_it_is_going():
    """The party was told at breakfast and the day since is full of other memories that the
    line's retrieval brings up first; the offline speaker still knows of it."""
    morning = NOON - timedelta(hours=4)
    busy = [("observation", f"Klaus Mueller is reading chapter {n} of a book on sociology",
             morning + timedelta(minutes=5 * n), 9) for n in range(40)]
    stream = stream_of(("conversation", PARTY, morning, 3), *busy)
    model = OfflineModel(seed=0)
    klaus = dialogue.Voice("Klaus Mueller", "Klaus Mueller is a student.", stream,
                           "reading a book on sociology", recall_tokens=60)
    maria = dialogue.Voice("Maria Lopez", "Maria Lopez is a student.", MemoryStream(256),
                           "studying physics")
    klaus.relationships["Maria Lopez"] = "Klaus knows Maria Lopez from college."
    lines = [("Maria Lopez", "Hi Klaus!"), ("Klaus Mueller", "Good, thanks, Maria."),
             ("Maria Lopez", "Are you going to Isabella's Valentine's Day party, Klaus?")]
    reply = await dialogue.next_line(model, klaus, maria, lines, NOON, "library", 5)
    assert reply.text in {t.format(partner="Maria") for t in alternatives("already_going")}


async def test_what_someone_said_of_themselves_is_remembered_with_their_own_pronoun(world):
    isabella = world.personas["Isabella Rodriguez"]
    assert dialogue.pronoun_of(isabella) == "she"
    lines = [("Maria Lopez", "Hi Isabella!"),
             ("Isabella Rodriguez", "I wanted to tell you: I intend to host a Valentine's Day "
                                    "party, and I hope to invite everyone I meet to my party.")]
    shared = dialogue.JointTakeaways(OfflineModel(seed=0), ["Maria Lopez"], lines,
                                     {"Isabella Rodriguez": dialogue.pronoun_of(isabella)})
    learned = await shared.of("Maria Lopez")
    assert any("she hopes to invite everyone she meets to her party" in fact
               for fact in learned.facts), learned.facts
    unknown = await dialogue.JointTakeaways(OfflineModel(seed=0), ["Maria Lopez"], lines
                                            ).of("Maria Lopez")
    assert any("they hope to invite everyone they meet" in fact for fact in unknown.facts)
