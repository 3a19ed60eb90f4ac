"""The judge (paper 6.2 to 6.4), a chat model in place of the paper's 100 people: it ranks the
conditions' answers for believability, blind and shuffled, and the rankings become TrueSkill
ratings; it labels the yes/no answers of the end-to-end interviews, in batches.
"""

from __future__ import annotations

import random
import statistics
import string
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import trueskill

from townbot.eval.conditions import MATCH_ORDERS
from townbot.llm.port import LanguageModel
from townbot.llm.purposes.label_answers import LabelItem, LabelQuestion
from townbot.llm.purposes.rank_answers import RankQuestion
from townbot.mind.answering import own_words
from townbot.mind.memory import Memory
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
    asked = RankQuestion(persona, tuple(digest), question, lettered)
    ranking = await judge.ask(asked.ask(persona.name))
    valid = asked.problem(ranking) is None
    order = tuple(shown[letters.index(letter)] for letter in ranking.order) if valid else ()
    return Ranked(persona.name, question_id, category, order, tuple(shown))


@dataclass(frozen=True)
class Rating:
    """A condition's TrueSkill over many match orders of the same rankings: TrueSkill depends
    on the order matches are played in, so one order's figure is one draw among many."""

    mu: float  # mean over the orders
    sigma: float  # mean over the orders
    low: float  # the 2.5th percentile of mu over the orders
    high: float  # the 97.5th percentile: [low, high] holds 95% of the orders' mu
    mean_rank: float  # 1 = always judged the most believable
    matches: int
    orders: int

    def overlaps(self, other: Rating) -> bool:
        return self.low <= other.high and other.low <= self.high


def _play(played: Sequence[Ranked], conditions: Sequence[str],
          env: trueskill.TrueSkill) -> dict[str, trueskill.Rating]:
    """One pass over the rankings, each a free-for-all match among the conditions."""
    ratings = {c: env.create_rating() for c in conditions}
    for ranked in played:
        teams = [(ratings[c],) for c in ranked.order]
        for condition, (new,) in zip(ranked.order, env.rate(teams, ranks=range(len(teams))),
                                     strict=True):
            ratings[condition] = new
    return ratings


def rate(rankings: Sequence[Ranked], conditions: Sequence[str], seed: int,
         orders: int = MATCH_ORDERS) -> dict[str, Rating]:
    """TrueSkill from rankings, the paper's way (the library's default environment: mu 25,
    sigma 25/3), played in `orders` random orders shuffled with the seed; each condition's mu
    is the mean over the orders, with the interval that holds 95% of them."""
    env = trueskill.TrueSkill()
    played = [r for r in rankings if r.order]
    rng = random.Random(seed)
    mus: dict[str, list[float]] = {c: [] for c in conditions}
    sigmas: dict[str, list[float]] = {c: [] for c in conditions}
    for _ in range(max(1, orders) if played else 1):
        shuffled = list(played)
        rng.shuffle(shuffled)
        for condition, rating in _play(shuffled, conditions, env).items():
            mus[condition].append(rating.mu)
            sigmas[condition].append(rating.sigma)
    ranks: dict[str, list[int]] = {c: [] for c in conditions}
    for ranked in played:
        for place, condition in enumerate(ranked.order, 1):
            ranks[condition].append(place)
    result = {}
    for c in conditions:
        low, high = np.percentile(mus[c], [2.5, 97.5])
        result[c] = Rating(round(statistics.fmean(mus[c]), 2),
                           round(statistics.fmean(sigmas[c]), 2), round(float(low), 2),
                           round(float(high), 2),
                           round(statistics.fmean(ranks[c]), 2) if ranks[c] else 0.0,
                           len(ranks[c]), len(mus[c]))
    return result


def not_told_apart(ratings: dict[str, Rating]) -> dict[str, list[str]]:
    """For each condition, the others whose 95% intervals overlap its own."""
    return {c: [o for o in ratings if o != c and r.overlaps(ratings[o])]
            for c, r in ratings.items()}


async def label_answers(judge: LanguageModel, what: str, items: Sequence[LabelItem]) -> list[bool]:
    """Yes/no for each answer (does it show the resident knows `what`?), in batches; a batch
    the judge cannot label is labelled "no" (counted as a fallback by metering)."""
    labels: list[bool] = []
    for start in range(0, len(items), LABEL_BATCH):
        batch = tuple(items[start:start + LABEL_BATCH])
        question = LabelQuestion(what, batch, tuple(own_words(i.answer) for i in batch))
        labels += [label == "yes" for label in (await judge.ask(question.ask())).labels]
    return labels
