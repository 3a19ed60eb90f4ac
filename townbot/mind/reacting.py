"""Reacting (paper 4.3.1): carry on with the plan, or react to what was just noticed.

The context comes from the paper's two retrievals: the observer's relationship with the
observed entity, and the entity's current status. People may be talked to (never while
asleep, and not again within a cooldown per pair) or waited for, as the original code does;
the decision knows when the two last talked and about what. Unusual object states (a burning
stove, a leaking shower) may be dealt with.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from townbot.llm.port import LanguageModel
from townbot.llm.purposes.react import Reaction, ReactQuestion
from townbot.mind.memory import MemoryStream
from townbot.mind.retrieval import recall
from townbot.mind.settings import MindSettings
from townbot.world.clock import clock_face, minute_of_day


@dataclass(frozen=True)
class Sighting:
    """Something perceived, with enough structure to decide on a reaction."""

    text: str
    kind: str  # agent | object | speech | notice
    subject: str  # a person's name, or an object's path
    status: str  # what the person is doing, or the object's state
    attended: bool = False  # an object state that someone using it is responsible for
    available: bool = True  # a person who could be talked to now (awake, not busy)

    @property
    def short_subject(self) -> str:
        return self.subject.split(": ")[-1]


def last_talk(stream: MemoryStream, name: str, partner: str) -> str:
    """When the two last talked and about what (what was learned, else how it went)."""
    first = name.split()[0]
    prefix = f"{name} talked with {partner} at "
    conversations = stream.by_kind("conversation")
    for talk in reversed(conversations):  # the latest talk with them
        if talk.text.startswith(prefix):
            break
    else:
        return f"{first} and {partner} have not talked before."
    learned = [m.text for m in conversations
               if m.created == talk.created and f"(heard from {partner})" in m.text]
    about = "; ".join(learned) or talk.text.split(". ", 1)[-1]
    when = f"{talk.created:%A %B} {talk.created.day} at {clock_face(minute_of_day(talk.created))}"
    about = about if len(about) <= 240 else about[:239] + "…"
    return f"{first} last talked with {partner} on {when}, about: {about}"


async def decide(model: LanguageModel, name: str, summary: str, stream: MemoryStream,
                 now: datetime, action: str, sighting: Sighting,
                 settings: MindSettings) -> Reaction:
    # The paper's two retrievals: the relationship with what was seen, and its status.
    seen = f"the {sighting.short_subject}" if sighting.kind == "object" else sighting.subject
    queries = [f"What is {name}'s relationship with {seen}?",
               f"{sighting.short_subject} is {sighting.status}"]
    budget = settings.recall.react // len(queries)
    remembered = list(dict.fromkeys(
        m.text for vector in await model.embed(queries)
        for m in recall(stream, vector, now, limit=settings.retrieval_count, token_budget=budget,
                        weights=settings.weights)))
    talked = last_talk(stream, name, sighting.subject) if sighting.kind == "agent" else ""
    question = ReactQuestion(name, summary, now, action, sighting.text, sighting.kind,
                             sighting.subject, sighting.status, tuple(remembered), talked)
    return await model.ask(question.ask(name))
