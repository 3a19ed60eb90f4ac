"""purpose 'rank_answers' (paper 6.2): the judge ranks a resident's answers to one interview
question, blind and shuffled, the most believable first.

Offline (not a language model's judgement): answers are ranked by how many of the resident's own
remembered words they use (grounded specificity), less for saying they do not know.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.purposes.common import Question, bulleted
from townbot.prompting import quoted, render
from townbot.world.model import Persona

WORD = re.compile(r"[a-z]{4,}")
DOUBT = re.compile(r"\b(don't know|do not know|not sure|no idea|haven't heard|have not heard|"
                   r"never heard|can't recall|cannot recall|nothing comes to mind|no, i|"
                   r"can't think|i'm sorry)\b", re.IGNORECASE)


class Ranking(BaseModel):
    order: Annotated[list[Annotated[str, Field(pattern=r"^[A-Z]$")]], Field(min_length=2,
                                                                            max_length=8)]


def words_in(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


@dataclass(frozen=True)
class RankQuestion(Question[Ranking]):
    """How believable each of `answers` (letter -> answer) is as `persona`'s answer to
    `question`, given a digest of its `memories`."""

    purpose = "rank_answers"
    answer_schema = Ranking
    persona: Persona
    memories: tuple[str, ...]
    question: str
    answers: Mapping[str, str]

    def prompt(self) -> str:
        return render("judge_rank", identity=self.persona.identity(),
                      first_name=self.persona.first_name,
                      memories=bulleted(self.memories, "- (nothing yet)"),
                      question=quoted(self.question), count=len(self.answers),
                      answers="\n".join(f"{k}: {quoted(v, 1200)}" for k, v in self.answers.items()))

    def default(self) -> Ranking:
        return Ranking(order=["A", "A"])  # not a ranking: skipped

    def problem(self, answer: Ranking) -> str | None:
        if sorted(answer.order) != sorted(self.answers):
            return f"rank each of the letters {', '.join(self.answers)} exactly once"
        return None

    def offline(self, seed: int) -> Ranking:
        known = words_in(" ".join(self.memories) + " " + self.persona.identity())

        def grounded(letter: str) -> tuple[int, str]:
            text = self.answers[letter]
            return (-(len(words_in(text) & known) - (5 if DOUBT.search(text) else 0)), letter)

        return Ranking(order=sorted(self.answers, key=grounded))
