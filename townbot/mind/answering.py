"""Answering as the agent (paper 6.1's interviews): a reply in the agent's voice from retrieval,
its summary and today's plan, optionally to an interviewer persona, under the paper's ablations.

It writes no memory and leaves last-access times alone unless asked to remember. A question
about a person the agent has no memory of is answered "I don't know them" without asking the
model, so the answer can never be a guess.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from townbot.llm.port import Ask, LanguageModel
from townbot.llm.purposes import Answer
from townbot.mind.memory import KINDS, MemoryStream
from townbot.mind.plans import PlanBlock
from townbot.mind.retrieval import retrieve
from townbot.mind.summary import render_summary, summarise
from townbot.prompting import quoted, render
from townbot.world.clock import clock_face, minute_of_day
from townbot.world.model import Persona

# The paper's three switches and the kinds of memory each one governs. Conversations and
# thoughts are what the agent observed or was told, so they go with observations.
GOVERNED = {"observations": ("observation", "conversation", "thought"),
            "reflections": ("reflection",), "plans": ("plan",)}
# Someone unnamed in the town list but asked about by full name ("Who is Kane Martinez?").
ASKED_ABOUT = re.compile(r"\b(?i:who is|who's|know of|know|about|think of|met)\s+"
                         r"([A-Z][a-z]+(?: [A-Z][a-z]+)+)")


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
    """What the agent knows about itself under an ablation: the summary and today's plan."""

    summary: str
    plan: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answered:
    text: str
    memory_ids: tuple[int, ...]  # the memories retrieved for the answer, best first
    unknown_person: str | None = None  # set when answered "I don't know them" without a call


def plan_lines(blocks: Sequence[PlanBlock]) -> tuple[str, ...]:
    """Today's schedule as the agent would recite it: '9:00 am to 12:00 pm: serving coffee'."""
    return tuple(f"{clock_face(minute_of_day(b.start))} to {clock_face(minute_of_day(b.end))}: "
                 f"{b.activity}" + (f" ({b.sector})" if b.sector else "") for b in blocks)


async def self_knowledge(model: LanguageModel, persona: Persona, stream: MemoryStream,
                         now: datetime, access: Ablation, *, summary: str,
                         plan: Sequence[str] = ()) -> SelfKnowledge:
    """The summary and plan an answer may use. `summary` and `plan` are the full architecture's;
    an ablation summarises again from the kinds it allows (one call, no access times touched)."""
    if access.full:
        return SelfKnowledge(summary, tuple(plan))
    kept_plan = tuple(plan) if access.plans else ()
    if not access.observations and not access.reflections and not access.plans:
        return SelfKnowledge(render_summary(persona, None), kept_plan)
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


async def interview_as(model: LanguageModel, persona: Persona, knowledge: SelfKnowledge,
                       stream: MemoryStream, question: str, now: datetime, *,
                       asker: str = "Someone", access: Ablation = Ablation(),
                       remember: bool = False, count: int = 10,
                       people: Collection[str] = ()) -> Answered:
    """Answer one question with the given self-knowledge (see `self_knowledge`)."""
    kinds = access.kinds()
    stranger = unknown_person(question, people, persona, knowledge.summary, stream, kinds)
    if stranger is not None:
        return Answered(dont_know(stranger), (), stranger)
    vector = (await model.embed([question]))[0]
    found = retrieve(stream, vector, now, limit=count, kinds=kinds, touch=remember)
    memories = [s.memory.text for s in found]
    plan = "\n".join(f"- {line}" for line in knowledge.plan) or "- (no plan in mind for today)"
    prompt = render("answer", summary=knowledge.summary, first_name=persona.first_name,
                    now=f"{now:%A %B} {now.day}, {clock_face(minute_of_day(now))}", plan=plan,
                    context="\n".join(f"- {t}" for t in memories) or "- (nothing comes to mind)",
                    asker=asker, question=quoted(question))
    answer = await model.ask(Ask(
        purpose="answer", prompt=prompt, schema=Answer, agent=persona.name,
        default=lambda: Answer(text="I'm sorry, I can't think of an answer to that right now."),
        context={"name": persona.name, "question": question, "memories": memories,
                 "asker": asker, "background": persona.background, "plan": list(knowledge.plan),
                 "summary": knowledge.summary}))
    return Answered(answer.text, tuple(s.memory.id for s in found))


async def answer_as(model: LanguageModel, persona: Persona, summary: str, stream: MemoryStream,
                    question: str, now: datetime, *, asker: str = "Someone",
                    access: Ablation = Ablation(), remember: bool = False,
                    count: int = 10, plan: Sequence[str] = (),
                    people: Collection[str] = ()) -> str:
    """One answer as text; `summary` and `plan` are the agent's own (full architecture)."""
    knowledge = await self_knowledge(model, persona, stream, now, access, summary=summary,
                                     plan=plan)
    answered = await interview_as(model, persona, knowledge, stream, question, now, asker=asker,
                                  access=access, remember=remember, count=count, people=people)
    return answered.text
