"""Reflection (paper 4.2): higher-level thoughts that cite the memories they rest on.

Triggered when the importance of memories since the last reflection passes a threshold: the
100 most recent memories yield 3 questions; each question retrieves memories (reflections
included, so reflections build on reflections) from which up to 5 insights are drawn, each
stored with the ids of the memories it cites. The three questions are answered at once, and
each insight comes with its importance, so a reflection is two calls deep, not five.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime

from townbot.llm.port import Ask, LanguageModel
from townbot.llm.purposes import Insight, Insights, ReflectionQuestions
from townbot.mind.memory import Memory, MemoryStream
from townbot.mind.retrieval import retrieve
from townbot.mind.settings import MindSettings
from townbot.prompting import numbered, render


@dataclass(frozen=True)
class Found:
    """An insight to remember: its text, the ids of the memories it cites, its importance
    (None when the model did not rate it)."""

    text: str
    evidence: tuple[int, ...]
    importance: int | None


def due(importance_since: int, settings: MindSettings) -> bool:
    return importance_since >= settings.reflection_threshold


async def ask_questions(model: LanguageModel, name: str, recent: list[Memory]) -> list[str]:
    texts = [m.text for m in recent]
    answer = await model.ask(Ask(
        purpose="reflection_questions", agent=name, schema=ReflectionQuestions,
        prompt=render("reflection_questions", name=name, numbered=numbered(texts)),
        context={"name": name, "texts": texts},
        default=lambda: ReflectionQuestions(questions=[f"What matters most to {name} lately?"])))
    return answer.questions[:3]


def _evidence_problem(answer: Insights, count: int) -> str | None:
    bad = [n for i in answer.insights for n in i.evidence if not 1 <= n <= count]
    return f"evidence numbers {bad} are not among the statements 1-{count}" if bad else None


async def draw_insights(model: LanguageModel, name: str, question: str,
                        memories: list[Memory], limit: int) -> list[Found]:
    """Insights with the ids of the cited memories (numbers in the prompt map back to ids)."""
    texts = [m.text for m in memories]
    answer = await model.ask(Ask(
        purpose="insights", agent=name, schema=Insights,
        prompt=render("insights", name=name, question=question, numbered=numbered(texts)),
        context={"name": name, "question": question, "texts": texts,
                 "kinds": [m.kind for m in memories]},
        check=lambda a: _evidence_problem(a, len(texts)),
        default=lambda: Insights(insights=[Insight(text=f"{name} has been thinking about: "
                                                   f"{question}", evidence=[1])])))
    return [Found(insight.text, tuple(dict.fromkeys(memories[n - 1].id for n in insight.evidence)),
                  insight.importance) for insight in answer.insights[:limit]]


async def reflect(model: LanguageModel, name: str, stream: MemoryStream, now: datetime,
                  settings: MindSettings) -> list[Found]:
    """Questions, then insights for all questions at once; returns what is to be remembered."""
    questions = await ask_questions(model, name, stream.recent(settings.reflection_recent))
    vectors = await model.embed(questions)
    asks = []
    for question, vector in zip(questions, vectors, strict=True):
        memories = [s.memory for s in retrieve(stream, vector, now, limit=settings.retrieval_count,
                                               token_budget=settings.recall.reflection,
                                               weights=settings.weights)]
        if memories:
            asks.append(draw_insights(model, name, question, memories,
                                      settings.insights_per_question))
    return [found for group in await asyncio.gather(*asks) for found in group]
