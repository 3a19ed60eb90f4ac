"""Answering as the agent (paper 6.1's interviews): a reply in the agent's voice from retrieval,
its summary and today's plan, optionally to an interviewer persona, under the paper's ablations.

It writes no memory and leaves last-access times alone unless asked to remember. An answer
knows its moment: the date and time, what the agent is doing right now, and today's plan (or
that today is not planned yet, before waking), so yesterday's plan is never recited as today's.

Two guards, on in a town (`MindSettings.interview_guards`) and off in the evaluation, which
measures what the model says unguarded as the paper did: a question about a person the agent
has no memory of is answered "I don't know them" without asking the model, and an answer that
claims a meeting or talk the agent has no memory of is refused, repaired once, then defaulted.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from townbot.llm.port import LanguageModel
from townbot.llm.purposes.answer import Answer, AnswerQuestion
from townbot.mind.dialogue import news_known
from townbot.mind.memory import KINDS, Memory, MemoryStream
from townbot.mind.planning import dated_memories
from townbot.mind.plans import PlanBlock
from townbot.mind.retrieval import retrieve
from townbot.mind.summary import render_summary, summarise
from townbot.world.clock import clock_face, minute_of_day
from townbot.world.model import Persona

# The paper's three switches and the kinds of memory each one governs. Conversations and
# thoughts are what the agent observed or was told, so they go with observations.
GOVERNED = {"observations": ("observation", "conversation", "thought"),
            "reflections": ("reflection",), "plans": ("plan",)}
# Someone unnamed in the town list but asked about by full name ("Who is Kane Martinez?").
ASKED_ABOUT = re.compile(r"\b(?i:who is|who's|know of|know|about|think of|met)\s+"
                         r"([A-Z][a-z]+(?: [A-Z][a-z]+)+)")
# A sentence that says the speaker and someone met or talked (past tense: a claim, not a wish).
CLAIMED = re.compile(r"\b(?:met|talked|spoke|chatted|ran into|bumped into|caught up|"
                     r"had (?:a|an|our|some)\b[\w\s,']{0,30}?\b(?:conversation|chat|talk))\b",
                     re.IGNORECASE)
# ... unless it is denied or only hoped for ("I've never met her", "I'd like to talk to him").
NOT_A_CLAIM = re.compile(r"\b(?:never|not|no|haven't|hasn't|didn't|don't|can't|would|could|"
                         r"should|might|hope|want|wish|like to|plan|going to|will)\b|'d\b",
                         re.IGNORECASE)
# The person a claim names when nobody in the town has that name ("I talked with Ana Ruiz").
CLAIMED_WITH = re.compile(r"\b(?:met|(?:talked|spoke|chatted|conversation|caught up) (?:with|to)|"
                          r"ran into|bumped into)\s+([A-Z][a-z]+ [A-Z][a-z]+)")
# Whom a memory of a talk was with ("Klaus Mueller talked with Wolfgang Schulz at ...").
TALKED_WITH = re.compile(r"^[A-Z][\w'-]+ [A-Z][\w'-]+ talked with ([A-Z][\w'-]+ [A-Z][\w'-]+) at ")
# What a memory of meeting someone says (beside a memory of the kind "conversation").
MET_WORDS = re.compile(r"\b(?:talk|talked|talks|chat|chatted|spoke|speak|met|meet|meets|"
                       r"conversation|told|tells|said|says|asked|asks|invited|visited|helped)\b",
                       re.IGNORECASE)
# Words of others an answer repeats: in quotation marks, or a recalled transcript's lines
# ("Sam: I am running for mayor."), which run to the end of the answer.
QUOTED = re.compile(r'"[^"]*"|\u201c[^\u201d]*\u201d|\b[A-Z][a-z]+: .*$', re.DOTALL)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Ablation:
    """Which parts of the memory stream the agent may use (the paper's evaluation conditions).

    Switching a part off removes every memory of its kinds, from retrieval and from the summary
    the answer starts from; with everything off only the persona's own description is left.
    """

    observations: bool = True
    reflections: bool = True
    plans: bool = True

    def kinds(self) -> tuple[str, ...]:
        banned = {kind for switch, kinds in GOVERNED.items() if not getattr(self, switch)
                  for kind in kinds}
        return tuple(kind for kind in KINDS if kind not in banned)

    @property
    def full(self) -> bool:
        return self.observations and self.reflections and self.plans


@dataclass(frozen=True)
class SelfKnowledge:
    """What the agent knows about itself under an ablation: the summary and today's plan
    (None: today is not planned yet; empty: no plan in mind, as under the no-planning
    ablation)."""

    summary: str
    plan: tuple[str, ...] | None = ()


@dataclass(frozen=True)
class Answered:
    text: str
    memory_ids: tuple[int, ...]  # the memories retrieved for the answer, best first
    unknown_person: str | None = None  # set when answered "I don't know them" without a call


def plan_lines(blocks: Sequence[PlanBlock]) -> tuple[str, ...]:
    """Today's schedule as the agent would recite it: '9:00 am to 12:00 pm: serving coffee'."""
    return tuple(f"{clock_face(minute_of_day(b.start))} to {clock_face(minute_of_day(b.end))}: "
                 f"{b.activity}" + (f" ({b.sector})" if b.sector else "") for b in blocks)


def todays_plan(day: date | None, blocks: Sequence[PlanBlock], now: datetime
                ) -> tuple[str, ...] | None:
    """The plan lines of `now`'s day, or None when the plan held is another day's (before
    waking, the plan in mind is still yesterday's)."""
    return plan_lines(blocks) if day == now.date() else None


async def self_knowledge(model: LanguageModel, persona: Persona, stream: MemoryStream,
                         now: datetime, access: Ablation, *, summary: str,
                         plan: Sequence[str] | None = ()) -> SelfKnowledge:
    """The summary and plan an answer may use. `summary` and `plan` are the full architecture's
    (`plan` None: not planned today yet); an ablation summarises again from the kinds it allows
    (one call, no access times touched)."""
    kept_plan = None if plan is None else tuple(plan)
    if access.full:
        return SelfKnowledge(summary, kept_plan)
    if not access.observations and not access.reflections and not access.plans:
        return SelfKnowledge(render_summary(persona, None), ())
    kept_plan = kept_plan if access.plans else ()
    parts = await summarise(model, persona, stream, now, kinds=access.kinds(), touch=False)
    return SelfKnowledge(render_summary(persona, parts), kept_plan)


def _mentions(name: str, first_unique: bool, text: str) -> bool:
    if name in text:
        return True
    return first_unique and re.search(rf"\b{re.escape(name.split()[0])}\b", text) is not None


def people_asked_about(question: str, people: Collection[str], own_name: str) -> list[str]:
    """Residents named in the question (full name, or an unambiguous first name), and any
    other full name the question asks about."""
    firsts = [p.split()[0] for p in people]
    named = [p for p in people if p != own_name
             and _mentions(p, firsts.count(p.split()[0]) == 1, question)]
    strangers = [m for m in ASKED_ABOUT.findall(question)
                 if m != own_name and m not in people and not any(m in p for p in named)]
    return named + strangers


def unknown_person(question: str, people: Collection[str], persona: Persona, summary: str,
                   stream: MemoryStream, kinds: tuple[str, ...]) -> str | None:
    """The first person the question asks about whom the agent has no memory of (under the
    allowed kinds) and whom its summary does not mention, or None."""
    firsts = [p.split()[0] for p in people]
    for person in people_asked_about(question, people, persona.name):
        unique = firsts.count(person.split()[0]) == 1
        if _mentions(person, unique, summary):
            continue
        if not any(m.kind in kinds and _mentions(person, unique, m.text) for m in stream.memories):
            return person
    return None


def dont_know(person: str) -> str:
    return f"{person}? I don't know them - I can't recall ever meeting or hearing of {person}."


def own_words(text: str) -> str:
    """What a speaker says in its own voice: the text without the lines it quotes of others
    (in quotation marks, or after a speaker's name as a remembered talk gives them)."""
    return " ".join(QUOTED.sub(" ", text).split())


def claimed_meetings(text: str, people: Collection[str], own_name: str) -> list[str]:
    """The people the speaker says, in its own words, it met or talked with: residents named
    (full name, or an unambiguous first name) in a sentence that claims a meeting, and any other
    full name such a sentence names as the partner. Denials and wishes are not claims."""
    firsts = [p.split()[0] for p in people]
    claimed: list[str] = []
    for sentence in SENTENCE_END.split(own_words(text)):
        if not CLAIMED.search(sentence) or NOT_A_CLAIM.search(sentence):
            continue
        named = [p for p in people if p != own_name
                 and _mentions(p, firsts.count(p.split()[0]) == 1, sentence)]
        others = [m for m in CLAIMED_WITH.findall(sentence)
                  if m != own_name and m.split()[0] not in firsts]
        claimed += [p for p in named + others if p not in claimed]
    return claimed


def unmet_claims(text: str, people: Collection[str], own_name: str, stream: MemoryStream,
                 kinds: Collection[str]) -> list[str]:
    """The meetings an answer claims that no memory (of the allowed kinds) backs: a memory backs
    one when it is a conversation naming the person, or names them beside a word of meeting."""
    firsts = [p.split()[0] for p in people]

    def has_met(person: str) -> bool:
        unique = firsts.count(person.split()[0]) <= 1
        return any(m.kind in kinds and _mentions(person, unique, m.text)
                   and (m.kind == "conversation" or MET_WORDS.search(m.text) is not None)
                   for m in stream.memories)

    return [p for p in claimed_meetings(text, people, own_name) if not has_met(p)]


ABOUT_KEPT = 40  # memories naming someone asked about, latest first, for the offline model
LIVING = re.compile(r"\b(?:live|lives|living|lived)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Background:
    """What `what_it_knows` finds (the answer question's fields of the same names)."""

    about_people: dict[str, list[str]]
    known: tuple[str, ...]
    home: str
    met_at_home: tuple[str, ...]
    living: tuple[str, ...]


def what_it_knows(persona: Persona, stream: MemoryStream, question: str, now: datetime,
                  people: Collection[str], kinds: Collection[str]) -> Background:
    """What the agent knows that bears on a question beside the memories retrieved for it, for
    the offline model (a language model answers from the prompt alone, as in the paper; the
    offline model reads only what it is given): the memories naming each person asked about
    (what they are to me, what they love doing), the news it knows (what it was told, the
    dated events of yesterday to tomorrow), and its home: where it is, the memories of who
    lives there, the people it has talked with there. All of the allowed kinds only."""
    def allowed(memory: Memory) -> bool:
        return memory.kind in kinds and memory.kind != "plan"

    memories = stream.memories
    about = {}
    for person in people_asked_about(question, people, persona.name):
        naming = [memories[i] for i in stream.ids_containing(person)]
        about[person] = [m.text for m in reversed(naming) if allowed(m)][:ABOUT_KEPT]
    news = [entry.text for entry in news_known(stream, persona.name, now) if entry.kind in kinds]
    news += [m.text for m in dated_memories(stream, now - timedelta(days=1)) if allowed(m)]
    home = persona.home_sector
    talks_home = [memories[i] for i in stream.ids_containing(f" at {home}: ")]
    met_at_home = Counter(found.group(1) for m in talks_home if allowed(m)
                          and (found := TALKED_WITH.match(m.text)) and m.text.startswith(persona.name))
    living = [memories[i].text for i in stream.ids_containing("live") if allowed(memories[i])
              and LIVING.search(memories[i].text) and persona.name in memories[i].text]
    return Background(about, tuple(dict.fromkeys(news)), home,
                      tuple(name for name, _ in met_at_home.most_common()), tuple(living[:4]))


async def interview_as(model: LanguageModel, persona: Persona, knowledge: SelfKnowledge,
                       stream: MemoryStream, question: str, now: datetime, *,
                       asker: str = "Someone", access: Ablation = Ablation(),
                       remember: bool = False, count: int = 10,
                       people: Collection[str] = (), doing: str | None = None,
                       guarded: bool = True) -> Answered:
    """Answer one question with the given self-knowledge (see `self_knowledge`), knowing what
    the agent is `doing` at `now`; `guarded` switches on the two guards (module docstring)."""
    kinds = access.kinds()
    if guarded:
        stranger = unknown_person(question, people, persona, knowledge.summary, stream, kinds)
        if stranger is not None:
            return Answered(dont_know(stranger), (), stranger)
    vector = (await model.embed([question]))[0]
    found = retrieve(stream, vector, now, limit=count, kinds=kinds, touch=remember)
    memories = [s.memory.text for s in found]
    first = persona.first_name

    def stays_with_what_happened(answer: Answer) -> str | None:
        unmet = unmet_claims(answer.text, people, persona.name, stream, kinds)
        if not unmet:
            return None
        return (f"{first} has no memory of meeting or talking with {' or '.join(unmet)}; answer "
                "again from what is remembered, without claiming that meeting")

    known = what_it_knows(persona, stream, question, now, people, kinds)
    asked = AnswerQuestion(
        persona.name, question, now, asker=asker, summary=knowledge.summary, doing=doing,
        plan=knowledge.plan, memories=tuple(memories), background=persona.background,
        about_people=known.about_people, known=known.known, home=known.home,
        met_at_home=known.met_at_home, living=known.living,
        check=stays_with_what_happened if guarded else None)
    answer = await model.ask(asked.ask(persona.name))
    return Answered(answer.text, tuple(s.memory.id for s in found))


async def answer_as(model: LanguageModel, persona: Persona, summary: str, stream: MemoryStream,
                    question: str, now: datetime, *, asker: str = "Someone",
                    access: Ablation = Ablation(), remember: bool = False,
                    count: int = 10, plan: Sequence[str] | None = (),
                    people: Collection[str] = (), doing: str | None = None,
                    guarded: bool = True) -> str:
    """One answer as text; `summary` and `plan` are the agent's own (full architecture; `plan`
    None when today is not planned yet)."""
    knowledge = await self_knowledge(model, persona, stream, now, access, summary=summary,
                                     plan=plan)
    answered = await interview_as(model, persona, knowledge, stream, question, now, asker=asker,
                                  access=access, remember=remember, count=count, people=people,
                                  doing=doing, guarded=guarded)
    return answered.text
