"""The judge (paper 6.2 to 6.4): a model ranks the conditions' answers for believability, blind
and shuffled; the rankings become TrueSkill ratings. The same model labels yes/no answers of
the end-to-end interviews, in batches.

The paper's rankings came from 100 people; here a configured chat model stands in for them. With
the offline model the ranking follows a fixed word-overlap rule and the report says so.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

import trueskill

from townbot.llm.port import Ask, LanguageModel
from townbot.llm.purposes import Labels, Ranking
from townbot.mind.answering import own_words
from townbot.mind.memory import Memory
from townbot.prompting import numbered, quoted, render
from townbot.world.model import Persona

DIGEST_SIZE = 20  # memories shown to the judge: the most important ones
LABEL_BATCH = 20  # answers labelled per call


def memory_digest(memories: Sequence[Memory], size: int = DIGEST_SIZE) -> list[str]:
    """What the judge sees of the memory stream (the paper's evaluators saw all of it)."""
    top = sorted(memories, key=lambda m: (-m.importance, m.id))[:size]
    return [m.text[:240] for m in sorted(top, key=lambda m: m.id)]


@dataclass(frozen=True)
class Ranked:
    resident: str
    question_id: str
    category: str
    order: tuple[str, ...]  # condition keys, most believable first; empty if the judge failed
    shown: tuple[str, ...]  # the conditions in the order the judge saw them (A, B, ...)


async def rank_answers(judge: LanguageModel, persona: Persona, digest: list[str],
                       question: str, answers: dict[str, str], rng: random.Random,
                       question_id: str, category: str) -> Ranked:
    """One blind ranking: answers shuffled and lettered; the letters map back to conditions."""
    shown = list(answers)
    rng.shuffle(shown)
    letters = string.ascii_uppercase[:len(shown)]
    lettered = {letter: answers[condition] for letter, condition in zip(letters, shown,
                                                                         strict=True)}
    prompt = render("judge_rank", identity=persona.identity(), first_name=persona.first_name,
                    memories="\n".join(f"- {m}" for m in digest) or "- (nothing yet)",
                    question=quoted(question), count=len(shown),
                    answers="\n".join(f"{k}: {quoted(v, 1200)}" for k, v in lettered.items()))

    def complete(answer: Ranking) -> str | None:
        if sorted(answer.order) != sorted(letters):
            return f"rank each of the letters {', '.join(letters)} exactly once"
        return None

    ranking = await judge.ask(Ask(
        purpose="rank_answers", prompt=prompt, schema=Ranking, agent=persona.name,
        check=complete, default=lambda: Ranking(order=["A", "A"]),  # not a ranking: skipped
        context={"identity": persona.identity(), "memories": digest, "answers": lettered}))
    valid = complete(ranking) is None
    order = tuple(shown[letters.index(letter)] for letter in ranking.order) if valid else ()
    return Ranked(persona.name, question_id, category, order, tuple(shown))


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float
    mean_rank: float  # 1 = always judged the most believable
    matches: int


def rate(rankings: Sequence[Ranked], conditions: Sequence[str], seed: int) -> dict[str, Rating]:
    """TrueSkill from rankings, the paper's way: each ranking is one free-for-all match among
    the conditions. The library's default environment (mu 25, sigma 25/3); matches are played
    in an order shuffled with the seed, since TrueSkill depends on order."""
    env = trueskill.TrueSkill()
    ratings = {c: env.create_rating() for c in conditions}
    played = [r for r in rankings if r.order]
    random.Random(seed).shuffle(played)
    ranks: dict[str, list[int]] = {c: [] for c in conditions}
    for ranked in played:
        teams = [(ratings[c],) for c in ranked.order]
        for condition, (new,) in zip(ranked.order, env.rate(teams, ranks=range(len(teams))),
                                     strict=True):
            ratings[condition] = new
        for place, condition in enumerate(ranked.order, 1):
            ranks[condition].append(place)
    return {c: Rating(round(ratings[c].mu, 2), round(ratings[c].sigma, 2),
                      round(sum(ranks[c]) / len(ranks[c]), 2) if ranks[c] else 0.0, len(ranks[c]))
            for c in conditions}


@dataclass(frozen=True)
class LabelItem:
    question: str
    answer: str
    subject: tuple[str, ...]  # patterns naming what a "yes" must be about (offline labeller)


async def label_answers(judge: LanguageModel, what: str, items: Sequence[LabelItem],
                        agent: str | None = None) -> list[bool]:
    """Yes/no for each answer (does it show the resident knows `what`?), in batches; a batch
    the judge cannot label is labelled "no" (counted as a fallback by metering)."""
    labels: list[bool] = []
    for start in range(0, len(items), LABEL_BATCH):
        labels += await _label_batch(judge, what, list(items[start:start + LABEL_BATCH]), agent)
    return labels


async def _label_batch(judge: LanguageModel, what: str, batch: list[LabelItem],
                       agent: str | None) -> list[bool]:
    size = len(batch)
    text = numbered([f"Question: {quoted(i.question)} Answer: {quoted(i.answer, 800)}"
                     for i in batch])
    answer = await judge.ask(Ask(
        purpose="label_answers", prompt=render("judge_label", what=what, items=text),
        schema=Labels, agent=agent,
        check=lambda a: None if len(a.labels) == size else f"give exactly {size} labels, one per item",
        default=lambda: Labels(labels=["no"] * size),
        context={"items": [{"answer": i.answer, "own_words": own_words(i.answer),
                            "subject": list(i.subject)} for i in batch]}))
    return [label == "yes" for label in answer.labels]


def names_pattern(name: str) -> tuple[str, ...]:
    return (rf"\b{re.escape(name.split()[0])}\b",)
