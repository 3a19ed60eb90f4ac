"""Reflection (paper 4.2): higher-level thoughts that cite the memories they rest on.

Triggered when the importance of memories since the last reflection passes a threshold: the
100 most recent memories yield 3 questions; each question retrieves memories (reflections
included, so reflections build on reflections) from which up to 5 insights are drawn, each
stored with the ids of the memories it cites. The insights of all three questions are asked in
one call, each with its importance: a reflection is two calls, not five.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from townbot.llm.port import LanguageModel
from townbot.llm.purposes.insights import InsightsQuestion
from townbot.llm.purposes.reflection_questions import SalientQuestions
from townbot.mind.memory import Memory, MemoryStream
from townbot.mind.retrieval import recall
from townbot.mind.settings import MindSettings


@dataclass(frozen=True)
class Found:
    """An insight to remember: its text, the ids of the memories it cites, its importance
    (None when the model did not rate it)."""

    text: str
    evidence: tuple[int, ...]
    importance: int | None


def due(importance_since: int, settings: MindSettings) -> bool:
    return importance_since >= settings.reflection_threshold


def _numbered(groups: list[tuple[str, list[Memory]]]) -> tuple[list[Memory], dict[int, int]]:
    """Every retrieved memory numbered once, from 1 (memory id -> number)."""
    numbers: dict[int, int] = {}
    memories: list[Memory] = []
    for _, found in groups:
        for memory in found:
            if memory.id not in numbers:
                memories.append(memory)
                numbers[memory.id] = len(memories)
    return memories, numbers


async def draw_insights(model: LanguageModel, name: str, groups: list[tuple[str, list[Memory]]],
                        limit: int) -> list[Found]:
    """Insights for every question in one call, with the ids of the cited memories (numbers in
    the prompt map back to ids), at most `limit` per question."""
    memories, numbers = _numbered(groups)
    question = InsightsQuestion(name, tuple(q for q, _ in groups),
                                tuple(m.text for m in memories), tuple(m.kind for m in memories),
                                tuple(tuple(numbers[m.id] for m in found) for _, found in groups))
    answer = await model.ask(question.ask(name))
    kept: dict[int | None, int] = {}
    found: list[Found] = []
    for insight in answer.insights:
        kept[insight.question] = kept.get(insight.question, 0) + 1
        if kept[insight.question] <= limit:
            found.append(Found(insight.text,
                               tuple(dict.fromkeys(memories[n - 1].id for n in insight.evidence)),
                               insight.importance))
    return found


async def reflect(model: LanguageModel, name: str, stream: MemoryStream, now: datetime,
                  settings: MindSettings) -> list[Found]:
    """Questions, a retrieval per question, then the insights of all questions in one call;
    returns what is to be remembered."""
    recent = stream.recent(settings.reflection_recent)
    salient = SalientQuestions(name, tuple(m.text for m in recent))
    questions = (await model.ask(salient.ask(name))).questions[:3]
    vectors = await model.embed(questions)
    groups = []
    for question, vector in zip(questions, vectors, strict=True):
        memories = recall(stream, vector, now, limit=settings.retrieval_count,
                          token_budget=settings.recall.reflection, weights=settings.weights)
        if memories:
            groups.append((question, memories))
    if not groups:
        return []
    return await draw_insights(model, name, groups, settings.insights_per_question)
