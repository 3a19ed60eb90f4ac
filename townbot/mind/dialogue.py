"""Dialogue (paper 4.3.2): before each line the speaker summarises its relationship with the
listener from what it remembers about them, then retrieves again on that summary, on what the
listener is doing and on the last lines; the line is conditioned on those memories, today's
date and time, the speaker's own action and the conversation so far, until someone ends it or
the turn cap is reached (both speakers' relationship summaries are asked at once when the
conversation begins). Afterwards each participant remembers the conversation and what it
learned, which is how news spreads.

A setting generates the whole exchange in one call instead (the paper's suggested saving).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from townbot.llm.port import LanguageModel
from townbot.llm.purposes.common import Recalled
from townbot.llm.purposes.conversation import ConversationQuestion
from townbot.llm.purposes.relationship import RelationshipQuestion
from townbot.llm.purposes.takeaways import Takeaways, TakeawaysQuestion
from townbot.llm.purposes.utterance import Utterance, UtteranceQuestion
from townbot.mind.memory import Memory, MemoryStream
from townbot.mind.planning import dated_memories
from townbot.mind.retrieval import recall
from townbot.world.clock import clock_face, minute_of_day
from townbot.world.model import Persona

Line = tuple[str, str]  # (speaker, text)


@dataclass
class Voice:
    """What a speaker brings to a conversation: who it is, what it is doing, what it remembers
    and what it has already told each person. One Voice lasts one conversation."""

    name: str
    summary: str
    stream: MemoryStream
    action: str
    told: dict[str, list[str]] = field(default_factory=dict)  # listener -> lines said before
    recall_tokens: int = 450  # remembered text per line's prompt
    relationship_tokens: int = 400  # statements the relationship summary is drawn from
    relationships: dict[str, str] = field(default_factory=dict)  # summarised this conversation
    plans: tuple[str, ...] = ()  # today's plan blocks ("5:00 pm: attend the party"), for the
    # offline model (a language model reads its plans from the memories retrieved)
    known: list[Recalled] | None = None  # what it knows of the news, read once a talk (`news_known`)

    def told_to(self, listener: str) -> list[str]:
        return list(self.told.get(listener, []))

    def knows(self, now: datetime) -> list[Recalled]:
        if self.known is None:
            self.known = news_known(self.stream, self.name, now)
        return self.known


TOLD_KEPT = 30  # facts learned in talks that a speaker keeps in mind beside its retrieval
TALKS_KEPT = 16  # of the latest memories of talks, the last day's transcripts: what was said


def _entry(memory: Memory) -> Recalled:
    return Recalled(memory.text, memory.importance, memory.kind)


def news_known(stream: MemoryStream, name: str, now: datetime) -> list[Recalled]:
    """What the speaker knows of the news beside what each line's retrieval brings up, for the
    offline model, which reads only what it is given: the latest facts it was told in talks
    (with whom they came from), what it remembers of today's and tomorrow's dated events, and
    its talks of the last day (what it heard mentioned, and what came up with whom).
    A language model gets the retrieved memories alone, as in the paper; the offline model
    uses these to know what it has heard, never as more news to tell."""
    talks = stream.by_kind("conversation")
    told = [m for m in talks if not m.text.startswith(f"{name} talked with ")][-TOLD_KEPT:]
    heard = [m for m in talks[-TALKS_KEPT:] if m.text.startswith(f"{name} talked with ")
             and now - m.created < timedelta(days=1)]
    dated = dated_memories(stream, now) + dated_memories(stream, now + timedelta(days=1))
    chosen: dict[str, Recalled] = {}
    for memory in [*reversed(told), *dated, *reversed(heard)]:
        chosen.setdefault(memory.text, _entry(memory))
    return list(chosen.values())


async def relationship_with(model: LanguageModel, voice: Voice, partner: Voice,
                            now: datetime, count: int) -> str:
    """The paper's first step before speaking: what the speaker makes of the listener, from
    what it remembers about them (retrieved on the listener's name, as the original does).
    Summarised once per conversation and speaker; it changes little within one talk."""
    if partner.name in voice.relationships:
        return voice.relationships[partner.name]
    vector = (await model.embed([partner.name]))[0]
    found = [m.text for m in recall(voice.stream, vector, now, limit=count,
                                    token_budget=voice.relationship_tokens)]
    first = voice.name.split()[0]
    if not any(partner.name in text for text in found):
        summary = f"{first} does not know {partner.name} yet."  # no call: there is nothing to sum
    else:
        question = RelationshipQuestion(voice.name, voice.summary, partner.name, tuple(found))
        summary = (await model.ask(question.ask(voice.name))).text
    voice.relationships[partner.name] = summary
    return summary


async def recall_for(model: LanguageModel, voice: Voice, partner: Voice, relationship: str,
                     lines: list[Line], now: datetime, count: int) -> list[Recalled]:
    """The paper's second retrieval: on the relationship, on what the listener is doing, and
    on the last lines (or, before anyone spoke, on what the two might talk about)."""
    recent = " ".join([text for _, text in lines[-4:]])
    queries = [relationship, f"{partner.name} is {partner.action}",
               recent or f"things {voice.name} would bring up with {partner.name}"]
    vectors = await model.embed(queries)
    found: dict[int, Recalled] = {}
    share = max(1, voice.recall_tokens // len(queries))
    for vector in vectors:
        for m in recall(voice.stream, vector, now, limit=count, token_budget=share):
            found.setdefault(m.id, _entry(m))  # found again by another query: kept in place
    return list(found.values())


def moment(now: datetime) -> str:
    """'Tuesday February 14, 2023, 3:10 pm': the date too, so 'February 14' means today."""
    return f"{now:%A %B} {now.day}, {now.year}, {clock_face(minute_of_day(now))}"


async def next_line(model: LanguageModel, voice: Voice, partner: Voice, lines: list[Line],
                    now: datetime, place: str, count: int) -> Utterance:
    relationship = await relationship_with(model, voice, partner, now, count)
    memories = await recall_for(model, voice, partner, relationship, lines, now, count)
    question = UtteranceQuestion(
        voice.name, partner.name, summary=voice.summary, speaker_action=voice.action,
        partner_action=partner.action, relationship=relationship, place=place,
        moment=moment(now), memories=tuple(memories), history=tuple(lines),
        already_said=(*voice.told_to(partner.name), *[t for s, t in lines if s == voice.name]),
        plans=tuple(voice.plans), known=tuple(voice.knows(now)))
    return await model.ask(question.ask(voice.name))


async def relationships(model: LanguageModel, first: Voice, second: Voice, now: datetime,
                        count: int) -> tuple[str, str]:
    """Both speakers' relationship summaries, asked at once (neither needs the other's)."""
    mine, theirs = await asyncio.gather(relationship_with(model, first, second, now, count),
                                        relationship_with(model, second, first, now, count))
    return mine, theirs


async def converse_by_lines(model: LanguageModel, first: Voice, second: Voice, now: datetime,
                            place: str, turn_cap: int, count: int) -> list[Line]:
    await relationships(model, first, second, now, count)  # both speak at least once
    lines: list[Line] = []
    speakers = (first, second)
    while len(lines) < turn_cap:
        speaker, listener = speakers[len(lines) % 2], speakers[(len(lines) + 1) % 2]
        reply = await next_line(model, speaker, listener, lines, now, place, count)
        lines.append((speaker.name, reply.text))
        if reply.end and len(lines) >= 2:
            break
    return lines


async def converse_in_one_call(model: LanguageModel, first: Voice, second: Voice, now: datetime,
                               place: str, count: int) -> list[Line]:
    relation_a, relation_b = await relationships(model, first, second, now, count)
    memories_a, memories_b = await asyncio.gather(
        recall_for(model, first, second, relation_a, [], now, count),
        recall_for(model, second, first, relation_b, [], now, count))
    question = ConversationQuestion(
        first.name, second.name, summary_a=first.summary, summary_b=second.summary,
        action_a=first.action, action_b=second.action, relation_a=relation_a,
        relation_b=relation_b, place=place, moment=moment(now), memories_a=tuple(memories_a),
        memories_b=tuple(memories_b), known_a=tuple(first.knows(now)),
        known_b=tuple(second.knows(now)), already_said_a=tuple(first.told_to(second.name)),
        already_said_b=tuple(second.told_to(first.name)))
    answer = await model.ask(question.ask(first.name))
    return [(line.speaker, line.text) for line in answer.lines]


def pronoun_of(persona: Persona) -> str:
    """'she', 'he' or 'they': as the persona's own description speaks of them (a description
    naming no one but them by pronoun; 'they' when it uses neither)."""
    text = f"{persona.background} {persona.currently}".lower()
    counts = {p: len(re.findall(rf"\b{p}\b", text)) for p in ("she", "he")}
    counts["she"] += len(re.findall(r"\bher\b", text))
    counts["he"] += len(re.findall(r"\b(?:his|him)\b", text))
    best = max(counts, key=lambda p: counts[p])
    return best if counts[best] else "they"


@dataclass(frozen=True)
class Learned:
    """What a participant took from a conversation: facts with their importance where the
    model gave it (None: to be scored the usual way), and the importance of the talk."""

    facts: dict[str, int | None]
    importance: int | None


class JointTakeaways:
    """What everyone who remembers a conversation learned from it, asked in one call: the
    first participant to ask starts it, the other shares its answer."""

    def __init__(self, model: LanguageModel, names: list[str], lines: list[Line],
                 pronouns: Mapping[str, str] | None = None) -> None:
        self.model, self.names, self.lines = model, names, lines
        self.pronouns = dict(pronouns or {})  # speaker -> 'she', 'he' or 'they' (the default)
        self._lock = asyncio.Lock()
        self._answer: Takeaways | None = None

    async def of(self, name: str) -> Learned:
        async with self._lock:
            if self._answer is None:
                question = TakeawaysQuestion(tuple(self.names), tuple(self.lines), self.pronouns)
                self._answer = await self.model.ask(question.ask(self.names[0]))
        entry = next(e for e in self._answer.learned if e.name == name)
        scores: list[int | None] = list(entry.scores)
        if len(scores) != len(entry.facts):
            scores = [None] * len(entry.facts)
        return Learned(dict(zip(entry.facts, scores, strict=True)), entry.importance)
