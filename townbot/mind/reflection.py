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

from townbot.llm.port import Ask, LanguageModel
from townbot.llm.purposes import Insight, Insights, ReflectionQuestions
from townbot.mind.memory import Memory, MemoryStream
from townbot.mind.retrieval import recall
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


def _statements(groups: list[tuple[str, list[Memory]]]) -> tuple[list[Memory], dict[int, int], str]:
    """Every retrieved memory numbered once (memory id -> number), and the prompt's list: each
    question followed by its statements (one that bears on two questions has its number under
    both)."""
    numbers: dict[int, int] = {}
    memories: list[Memory] = []
    parts = []
    for index, (question, found) in enumerate(groups, 1):
        lines = []
        for memory in found:
            if memory.id not in numbers:
                memories.append(memory)
                numbers[memory.id] = len(memories)
            lines.append(f"{numbers[memory.id]}. {memory.text}")
        parts.append(f'Question {index}: "{question}"\n' + "\n".join(lines))
    return memories, numbers, "\n\n".join(parts)


def _default_insights(name: str, groups: list[tuple[str, list[Memory]]],
                      numbers: dict[int, int]) -> Insights:
    return Insights(insights=[Insight(question=index, text=f"{name} has been thinking about: "
                                      f"{question}", evidence=[numbers[found[0].id]])
                              for index, (question, found) in enumerate(groups, 1)])


async def draw_insights(model: LanguageModel, name: str, groups: list[tuple[str, list[Memory]]],
                        limit: int) -> list[Found]:
    """Insights for every question in one call, with the ids of the cited memories (numbers in
    the prompt map back to ids), at most `limit` per question."""
    memories, numbers, listing = _statements(groups)
    texts = [m.text for m in memories]
    answer = await model.ask(Ask(
        purpose="insights", agent=name, schema=Insights,
        prompt=render("insights", name=name, questions=listing, count=len(groups)),
        context={"name": name, "questions": [q for q, _ in groups], "texts": texts,
                 "kinds": [m.kind for m in memories],
                 "groups": [[numbers[m.id] for m in found] for _, found in groups]},
        check=lambda a: _evidence_problem(a, len(texts)),
        default=lambda: _default_insights(name, groups, numbers)))
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
    questions = await ask_questions(model, name, stream.recent(settings.reflection_recent))
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
