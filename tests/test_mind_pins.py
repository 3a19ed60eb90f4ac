"""Pins for retrieval's budget and ranking and for reflection's asks, found by the mutation run
(docs/reliability.md): what is asked, of whom, from which memories, and what is kept."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from townbot.llm.port import Ask
from townbot.llm.purposes import Insight, Insights, ReflectionQuestions
from townbot.mind.memory import MemoryStream
from townbot.mind.reflection import reflect
from townbot.mind.retrieval import RetrievalWeights, retrieve, score_stream
from townbot.mind.settings import MindSettings, RecallBudget

NOW = datetime(2023, 2, 14, 12, 0)
QUERY = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


# --- retrieval ----------------------------------------------------------------------------------


def ranked(importances: list[int], texts: list[str] | None = None) -> MemoryStream:
    stream = MemoryStream(dim=4)
    for index, importance in enumerate(importances):
        text = texts[index] if texts else f"m{index}"
        stream.add("observation", text, NOW - timedelta(hours=1), importance,
                   np.array([1, 0, 0, 0], dtype=np.float32))
    stream.take_changes()
    return stream


def picked(stream: MemoryStream, **kwargs) -> list[str]:
    return [s.memory.text for s in retrieve(stream, QUERY, NOW, touch=False, **kwargs)]


@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_the_top_memories_are_the_best_scored_whatever_the_limit(limit):
    rng = np.random.default_rng(limit)
    stream = MemoryStream(dim=4)
    for index in range(600):  # enough that numpy's selection does not simply sort
        stream.add("observation", f"m{index}", NOW - timedelta(hours=float(rng.uniform(0, 90))),
                   int(rng.integers(1, 11)), rng.normal(size=4).astype(np.float32))
    stream.take_changes()
    total = score_stream(stream, QUERY, NOW)[0]
    best = [f"m{i}" for i in np.argsort(-total, kind="stable")[:limit]]
    assert picked(stream, limit=limit) == best


def test_the_default_limit_is_ten():
    assert len(picked(ranked([5] * 30))) == 10


# Costs are len // 4 + 1 tokens: 10 characters cost 3, 12 cost 4, 40 cost 11.
A, B, C, LONG = "a" * 10, "b" * 12, "c" * 12, "l" * 40


@pytest.mark.parametrize(("budget", "expected"), [(7, [A, B]), (6, [A]), (3, [A]), (2, [])])
def test_the_token_budget_is_filled_exactly(budget, expected):
    stream = ranked([9, 5, 2], [A, B, C])
    assert picked(stream, token_budget=budget) == expected


def test_a_memory_too_long_for_the_budget_leaves_room_for_shorter_ones():
    stream = ranked([9, 5], [LONG, A])
    assert picked(stream, token_budget=7) == [A]


# --- reflection ---------------------------------------------------------------------------------


async def test_reflection_keeps_at_most_the_configured_insights_per_question():
    model = Scripted(["What matters?"], insights=3)
    found = await reflect(model, "Klaus Mueller", numbered_stream(20), NOW,
                          MindSettings(insights_per_question=2))
    assert len(found) == 2


class Scripted:
    """A model that records every Ask and answers reflection's two purposes from a script."""

    label = embedding_model = "scripted"
    embedding_dim = 4

    def __init__(self, questions: list[str], vectors: dict[str, list[float]] | None = None,
                 insights: int = 1):
        self.questions = questions
        self.insights = insights
        self.vectors = vectors or {}
        self.asks: list[Ask] = []

    async def ask(self, request: Ask):
        self.asks.append(request)
        if request.purpose == "reflection_questions":
            return ReflectionQuestions(questions=self.questions)
        found = []
        for number, (question, group) in enumerate(zip(request.context.questions,
                                                       request.context.groups, strict=True), 1):
            found += [Insight(question=number, text=f"insight on {question}",
                              evidence=group[:2])] * self.insights
        return Insights(insights=found)

    async def embed(self, texts):
        return np.array([self.vectors.get(t, [1, 0, 0, 0]) for t in texts], dtype=np.float32)


def numbered_stream(count: int) -> MemoryStream:
    stream = MemoryStream(dim=4)
    for index in range(count):
        stream.add("observation", f"memory number {index:03d}", NOW - timedelta(minutes=count - index),
                   5, np.array([1, 0, 0, 0], dtype=np.float32))
    stream.take_changes()
    return stream


async def test_reflection_asks_three_questions_of_the_hundred_latest_memories_as_this_agent():
    model = Scripted(["What does Klaus care about?", "Who does Klaus see?", "What is new?"])
    found = await reflect(model, "Klaus Mueller", numbered_stream(120), NOW, MindSettings())
    first = model.asks[0]
    assert (first.purpose, first.agent) == ("reflection_questions", "Klaus Mueller")
    assert "Klaus Mueller" in first.prompt
    assert "1. memory number 020" in first.prompt and "100. memory number 119" in first.prompt
    assert "memory number 019" not in first.prompt
    assert first.context.name == "Klaus Mueller" and len(first.context.texts) == 100
    assert "Klaus Mueller" in first.default().questions[0]

    insight_asks = model.asks[1:]
    assert [a.purpose for a in insight_asks] == ["insights"], "one call for the three questions"
    ask = insight_asks[0]
    assert ask.agent == "Klaus Mueller" and "Klaus Mueller" in ask.prompt
    for number, question in enumerate(model.questions, 1):
        assert f'Question {number}: "{question}"' in ask.prompt
    assert "1. memory number" in ask.prompt
    assert ask.context.name == "Klaus Mueller" and list(ask.context.questions) == model.questions
    assert ask.context.kinds == ("observation",) * len(ask.context.texts)
    assert all(ask.context.texts[n - 1].startswith("memory number")
               for group in ask.context.groups for n in group)
    fallback = ask.default().insights
    assert [i.question for i in fallback] == [1, 2, 3]
    assert all("Klaus Mueller" in i.text and q in i.text
               for i, q in zip(fallback, model.questions, strict=True))
    assert [f.text for f in found] == [f"insight on {q}" for q in model.questions]
    assert all(len(f.evidence) == 2 for f in found)


class FallingBack(Scripted):
    """A model whose insights answer is unusable, so reflection gets the Ask's default."""

    async def ask(self, request: Ask):
        if request.purpose == "insights":
            self.asks.append(request)
            return request.default()
        return await super().ask(request)


async def test_the_fallback_insight_cites_the_first_statement_even_when_only_one_was_found():
    model = FallingBack(["What matters?", "Who matters?"])
    found = await reflect(model, "Klaus Mueller", numbered_stream(1), NOW, MindSettings())
    only = numbered_stream(1).recent(1)[0]
    assert [f.evidence for f in found] == [(only.id,), (only.id,)]
    assert [f.text for f in found] == ["Klaus Mueller has been thinking about: What matters?",
                                       "Klaus Mueller has been thinking about: Who matters?"]


async def test_the_insights_prompt_lists_each_question_with_its_numbered_statements():
    model = Scripted(["What matters?", "Who matters?"])
    await reflect(model, "Klaus Mueller", numbered_stream(2), NOW, MindSettings())
    ask = model.asks[1]
    texts, (first, second) = ask.context.texts, ask.context.groups
    listing = ['Question 1: "What matters?"', *(f"{n}. {texts[n - 1]}" for n in first), "",
               'Question 2: "Who matters?"', *(f"{n}. {texts[n - 1]}" for n in second)]
    assert "thinking over 2 questions" in ask.prompt
    assert "\n".join(listing) in ask.prompt


async def test_a_statement_two_questions_share_has_one_number():
    model = Scripted(["What matters?", "Who matters?"])
    await reflect(model, "Klaus Mueller", numbered_stream(20), NOW, MindSettings())
    ask = model.asks[1]
    first, second = ask.context.groups
    assert sorted(first) == sorted(second), "the same memories bear on both questions here"
    assert len(ask.context.texts) == len(first), "each listed once in the numbering"


async def test_an_insight_citing_a_statement_that_was_not_shown_is_unusable():
    model = Scripted(["What matters?"])
    await reflect(model, "Klaus Mueller", numbered_stream(20), NOW, MindSettings())
    ask = model.asks[1]
    shown = len(ask.context.texts)
    good = Insights(insights=[Insight(text="fine", evidence=[1, shown])])
    bad = Insights(insights=[Insight(text="made up", evidence=[shown + 1])])
    assert ask.check(good) is None
    assert ask.check(bad) == f"evidence numbers [{shown + 1}] are not among the statements " \
                             f"1-{shown}"


async def test_reflection_retrieves_with_the_minds_count_budget_and_weights():
    stream = numbered_stream(30)
    stream.add("observation", "an old unimportant note about chess", NOW - timedelta(days=30), 1,
               np.array([0, 1, 0, 0], dtype=np.float32))
    stream.take_changes()
    vectors = {"Chess?": [0, 1, 0, 0]}
    by_count = Scripted(["Chess?"], vectors)
    await reflect(by_count, "Klaus Mueller", stream, NOW, MindSettings(retrieval_count=4))
    assert len(by_count.asks[1].context.texts) == 4
    by_budget = Scripted(["Chess?"], vectors)
    await reflect(by_budget, "Klaus Mueller", stream, NOW,
                  MindSettings(recall=RecallBudget(reflection=12)))
    assert len(by_budget.asks[1].context.texts) == 2  # 6 tokens each
    by_relevance = Scripted(["Chess?"], vectors)
    await reflect(by_relevance, "Klaus Mueller", stream, NOW, MindSettings(
        retrieval_count=1, weights=RetrievalWeights(recency=0, importance=0, relevance=1)))
    assert by_relevance.asks[1].context.texts == ("an old unimportant note about chess",)


# --- plans cut by a reaction ------------------------------------------------------------------


def test_a_block_resumes_with_the_steps_still_ahead_of_it():
    from townbot.mind.planning import insert_block
    from townbot.mind.plans import PlanBlock, PlanStep

    at = NOW.replace(hour=9, minute=0)
    steps = [PlanStep(at + timedelta(minutes=m), at + timedelta(minutes=m + 15), action, "desk",
                      "in use", "📚") for m, action in ((0, "reading"), (15, "taking notes"),
                                                       (30, "writing"))]
    work = PlanBlock(at, at + timedelta(minutes=45), "study", "Oak Hill College", "library", steps)
    talk = PlanBlock(at + timedelta(minutes=10), at + timedelta(minutes=20), "talking with Maria")
    before, _, after = insert_block([work], talk)
    assert [(s.action, s.start.minute, s.end.minute) for s in before.steps] == [("reading", 0, 10)]
    assert after.resumed and (after.sector, after.arena) == ("Oak Hill College", "library")
    assert [(s.action, s.start.minute, s.end.minute) for s in after.steps] == [
        ("taking notes", 20, 30), ("writing", 30, 45)], "no new decomposition is needed"


def test_what_was_learned_about_a_date_comes_before_transcripts_that_repeat_it():
    from townbot.mind.planning import dated_memories

    stream = MemoryStream(dim=4)
    vector = np.array([1, 0, 0, 0], dtype=np.float32)
    fact = "Maria is hosting a party on February 14 from 5 pm to 7 pm (heard from Maria)"
    stream.add("conversation", fact, NOW - timedelta(hours=9), 8, vector)
    for partner in ("Ayesha", "Tom", "Ryan"):  # later talks that retell it at length
        stream.add("conversation", f"Klaus talked with {partner} at the pub. Klaus: Maria is "
                   "hosting a party on February 14 from 5 pm to 7 pm.", NOW - timedelta(hours=8),
                   8, vector)
    found = [m.text for m in dated_memories(stream, NOW)]
    assert found[0] == fact and len(found) == 3
