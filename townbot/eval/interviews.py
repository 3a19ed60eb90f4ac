"""Interviews (paper 6.1): the 25 questions of questions.yaml put to a resident under each of
the paper's conditions, and the end-to-end questions, through the mind's own `interview_as`.
The model is asked without the town's interview guards, as the paper asked it; each record
says what the guards would have done, so both figures can be reported (docs/evaluation.md).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from string import Template

import yaml

from townbot.eval.conditions import CONDITION_SWITCHES
from townbot.eval.snapshot import ResidentView, TownMoment
from townbot.llm.port import LanguageModel
from townbot.mind.answering import (
    Ablation,
    SelfKnowledge,
    interview_as,
    self_knowledge,
    unknown_person,
    unmet_claims,
)
from townbot.town.news import TALKED_WITH

QUESTIONS_FILE = Path(__file__).with_name("questions.yaml")
CATEGORIES = ("self_knowledge", "memory", "plans", "reactions", "reflections")
# The paper's conditions (section 6.2), each with its label and its switches as an Ablation.
CONDITIONS: dict[str, tuple[str, Ablation]] = {
    name: (label, Ablation(**switches)) for name, (label, switches) in CONDITION_SWITCHES.items()}
STRANGER = "Rosa Lindqvist"  # nobody in Smallville: a resident should not claim to know her
INTERVIEWER = "An interviewer"


@dataclass(frozen=True)
class Question:
    id: str  # e.g. "memory.2"
    category: str
    template: str


def load_questions(path: Path = QUESTIONS_FILE) -> list[Question]:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if set(raw) != set(CATEGORIES):
        raise ValueError(f"{path}: expected the categories {', '.join(CATEGORIES)}, "
                         f"found {', '.join(raw)}")
    return [Question(f"{category}.{index}", category, text)
            for category in CATEGORIES for index, text in enumerate(raw[category], 1)]


def acquaintances(view: ResidentView, people: list[str]) -> Counter[str]:
    """People the resident talked with, else people its memories mention, by frequency."""
    name = view.persona.name
    talked = Counter(found.group(2) for m in view.memories if m.kind == "conversation"
                     and (found := TALKED_WITH.match(m.text)) and found.group(1) == name
                     and found.group(2) in people)
    if talked:
        return talked
    return Counter(person for memory in view.memories for person in people
                   if person != name and person in memory.text)


def fill(question: Question, view: ResidentView, people: list[str], seed: int) -> str:
    """The question for this resident, placeholders filled from its memories."""
    known = acquaintances(view, people)
    others = [p for p in people if p != view.persona.name]
    ranked = [p for p, _ in sorted(known.items(), key=lambda kv: (-kv[1], kv[0]))] or others[:1]
    pool = sorted(known) or others
    picked = random.Random(f"{seed}:{view.persona.name}").sample(pool, k=min(2, len(pool)))
    values = {"acquaintance": picked[0], "other_acquaintance": picked[-1],
              "closest": ranked[0], "stranger": STRANGER}
    return Template(question.template).substitute(values)


@dataclass(frozen=True)
class AnswerRecord:
    resident: str
    question_id: str
    category: str
    question: str
    condition: str
    moment: str
    answer: str
    memory_ids: tuple[int, ...]
    # What the town's guards would have done: answered "I don't know them" without asking...
    town_guard: bool
    # ... or refused the answer for claiming meetings with these people that no memory backs.
    unmet_claims: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {**asdict(self), "memory_ids": list(self.memory_ids),
                "unmet_claims": list(self.unmet_claims)}


class Interviewer:
    """Puts questions to residents of one moment of a town, under a condition, caching the
    self-knowledge each (resident, condition) starts from."""

    def __init__(self, model: LanguageModel, moment: TownMoment, people: list[str],
                 retrieval_count: int = 10) -> None:
        self.model = model
        self.moment = moment
        self.people = people
        self.count = retrieval_count
        self._knowledge: dict[tuple[str, str], asyncio.Task[SelfKnowledge]] = {}

    def _self_knowledge(self, name: str, condition: str) -> asyncio.Task[SelfKnowledge]:
        key = (name, condition)
        if key not in self._knowledge:
            view = self.moment.residents[name]
            self._knowledge[key] = asyncio.ensure_future(self_knowledge(
                self.model, view.persona, view.stream, self.moment.now, CONDITIONS[condition][1],
                summary=view.summary, plan=view.plan))
        return self._knowledge[key]

    async def ask(self, name: str, question: str, condition: str = "full", *,
                  question_id: str = "", category: str = "") -> AnswerRecord:
        view = self.moment.residents[name]
        knowledge = await self._self_knowledge(name, condition)
        access = CONDITIONS[condition][1]
        answered = await interview_as(
            self.model, view.persona, knowledge, view.stream, question, self.moment.now,
            asker=INTERVIEWER, access=access, count=self.count, people=self.people,
            doing=view.doing, guarded=False)
        kinds = access.kinds()
        guard = unknown_person(question, self.people, view.persona, knowledge.summary,
                               view.stream, kinds) is not None
        unmet = unmet_claims(answered.text, self.people, name, view.stream, kinds)
        return AnswerRecord(name, question_id, category, question, condition, self.moment.label,
                            answered.text, answered.memory_ids, guard, tuple(unmet))
