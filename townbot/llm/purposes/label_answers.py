"""purpose 'label_answers' (paper 7): the judge labels answers of the end-to-end interviews yes
or no (does the answer show the resident knows `what`?), in batches.

Offline (not a language model's judgement): "yes" when the answer names the subject asked about
and the resident's own words (the answer without the lines it quotes of others) do not say it
does not know.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from townbot.llm.purposes.common import Question
from townbot.llm.purposes.rank_answers import DOUBT
from townbot.prompting import numbered, quoted, render


class Labels(BaseModel):
    labels: Annotated[list[Literal["yes", "no"]], Field(min_length=1, max_length=40)]


@dataclass(frozen=True)
class LabelItem:
    question: str
    answer: str
    subject: tuple[str, ...]  # patterns naming what a "yes" must be about (offline labeller)


@dataclass(frozen=True)
class LabelQuestion(Question[Labels]):
    """Whether each of `items` shows knowledge `what`; `own_words` is each answer without the
    lines it quotes of others."""

    purpose = "label_answers"
    answer_schema = Labels
    what: str
    items: tuple[LabelItem, ...]
    own_words: tuple[str, ...]

    def prompt(self) -> str:
        return render("judge_label", what=self.what, items=numbered([
            f"Question: {quoted(i.question)} Answer: {quoted(i.answer, 800)}" for i in self.items]))

    def default(self) -> Labels:
        return Labels(labels=["no"] * len(self.items))

    def problem(self, answer: Labels) -> str | None:
        size = len(self.items)
        return None if len(answer.labels) == size else f"give exactly {size} labels, one per item"

    def offline(self, seed: int) -> Labels:
        labels = []
        for item, own in zip(self.items, self.own_words, strict=True):
            named = all(re.search(p, item.answer, re.IGNORECASE) for p in item.subject)
            labels.append("yes" if named and not DOUBT.search(own) else "no")
        return Labels(labels=labels)
