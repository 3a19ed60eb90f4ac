"""purpose 'importance': how poignant each new memory is, 1 to 10, many memories in one call.

Offline, poignancy comes from keywords (activities.yaml); everyday activity scores 1 or 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Annotated

from pydantic import BaseModel, Field, create_model

from townbot.llm.offline.activities import any_starts, vocabulary, words_of
from townbot.llm.purposes.common import Question, Score
from townbot.prompting import numbered, render


class ImportanceScores(BaseModel):
    scores: list[Score]


@cache
def importance_scores(count: int) -> type[ImportanceScores]:
    """ImportanceScores for exactly `count` memories: a schema-following server cannot give
    another count, and the others are told the count by the schema as well as the prompt."""
    return create_model("ImportanceScores", __base__=ImportanceScores,
                        scores=(Annotated[list[Score], Field(min_length=count, max_length=count)], ...))


def score_importance(text: str) -> int:
    words = words_of(text)
    for score, prefixes in vocabulary().importance:
        if any_starts(words, prefixes):
            return score
    return 2


@dataclass(frozen=True)
class ImportanceQuestion(Question[ImportanceScores]):
    """How poignant each of `texts` is to the resident `name` (described by `identity`)."""

    purpose = "importance"
    name: str
    identity: str
    texts: tuple[str, ...]

    def prompt(self) -> str:
        return render("importance", name=self.name, identity=self.identity,
                      numbered=numbered(list(self.texts)), count=len(self.texts))

    def schema(self) -> type[ImportanceScores]:
        return importance_scores(len(self.texts))

    def default(self) -> ImportanceScores:
        return self.schema()(scores=[3] * len(self.texts))

    def problem(self, answer: ImportanceScores) -> str | None:
        count = len(self.texts)
        return None if len(answer.scores) == count else f"expected {count} scores, got {len(answer.scores)}"

    def offline(self, seed: int) -> ImportanceScores:
        return ImportanceScores(scores=[score_importance(t) for t in self.texts])
