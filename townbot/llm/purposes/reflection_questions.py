"""purpose 'reflection_questions': the most salient high-level questions about recent memories.

Offline: the relationship with the person met most often, what the resident is focused on, and
what news they heard.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.offline.social import PERSON, PLACE_WORDS
from townbot.llm.purposes.common import Line, Question
from townbot.prompting import numbered, render


class ReflectionQuestions(BaseModel):
    questions: Annotated[list[Line], Field(min_length=1, max_length=3)]


def people_in(texts: tuple[str, ...], exclude: str) -> Counter[str]:
    found: Counter[str] = Counter()
    for text in texts:
        for name in PERSON.findall(text):
            if name != exclude and not set(name.split()) & PLACE_WORDS:
                found[name] += 1
    return found


@dataclass(frozen=True)
class SalientQuestions(Question[ReflectionQuestions]):
    """What `name` should reflect on, from the recent memories `texts`."""

    purpose = "reflection_questions"
    answer_schema = ReflectionQuestions
    name: str
    texts: tuple[str, ...]

    def prompt(self) -> str:
        return render("reflection_questions", name=self.name, numbered=numbered(list(self.texts)))

    def default(self) -> ReflectionQuestions:
        return ReflectionQuestions(questions=[f"What matters most to {self.name} lately?"])

    def offline(self, seed: int) -> ReflectionQuestions:
        name, questions = self.name, []
        people = people_in(self.texts, name).most_common(1)
        if people:
            questions.append(f"What is {name}'s relationship with {people[0][0]}?")
        questions.append(f"What is {name} most focused on these days?")
        questions.append(f"What news has {name} heard lately?")
        return ReflectionQuestions(questions=questions[:3])

