"""purpose 'answer': a reply in the agent's own voice (interviews, questions from people).

Its question is built in mind/answering.py, which also passes its check (no meeting claimed
that no memory backs), since that reads the memory stream. Offline: offline/interview.py answers
by the question's kind from the part of the question that backs it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.offline.interview import InterviewView, answer
from townbot.llm.offline.social import HEARD_FROM
from townbot.llm.port import Ask
from townbot.llm.purposes.common import Question
from townbot.prompting import quoted, render
from townbot.world.clock import clock_face, minute_of_day


class Answer(BaseModel):
    text: Annotated[str, Field(min_length=1, max_length=1200)]


def describe_moment(first_name: str, now: datetime, doing: str | None,
                    plan: tuple[str, ...] | None) -> str:
    """The answer prompt's moment: the time, what the agent is doing and today's plan."""
    lines = [f"It is {now:%A %B} {now.day}, {clock_face(minute_of_day(now))}."
             + (f" Right now {first_name} is {doing}." if doing else "")]
    if plan is None:
        lines.append(f"{first_name} has not planned today yet (the plan is made on waking).")
    else:
        lines.append(f"{first_name}'s plan for today:")
        lines += [f"- {line}" for line in plan] or ["- (no plan in mind for today)"]
    return "\n".join(lines)


def without_source(texts: Sequence[str]) -> list[str]:
    return [HEARD_FROM.sub("", text) for text in texts]


@dataclass(frozen=True)
class AnswerQuestion(Question[Answer]):
    """`asker`'s `question` to `name` at `now`, answered from its `summary`, what it is
    `doing`, today's `plan` (None: not planned yet) and the memories retrieved for the
    question. Only the offline model reads the rest: the persona's `background`, the
    memories naming each person asked about (`about_people`, latest first), the news it
    knows (`known`), and its `home` with the people it talked with there (`met_at_home`, most
    often first) and the memories of who lives there (`living`). `check` (from the mind)
    refuses an answer that claims a meeting no memory backs; None when unguarded."""

    purpose = "answer"
    answer_schema = Answer
    name: str
    question: str
    now: datetime
    asker: str = "Someone"
    summary: str = ""
    doing: str | None = None
    plan: tuple[str, ...] | None = ()
    memories: tuple[str, ...] = ()
    background: str = ""
    about_people: Mapping[str, Sequence[str]] = field(default_factory=dict)
    known: tuple[str, ...] = ()
    home: str = ""
    met_at_home: tuple[str, ...] = ()
    living: tuple[str, ...] = ()
    check: Callable[[Answer], str | None] | None = field(default=None, compare=False)

    def prompt(self) -> str:
        first = self.name.split()[0]
        return render("answer", summary=self.summary, first_name=first,
                      moment=describe_moment(first, self.now, self.doing, self.plan),
                      context="\n".join(f"- {t}" for t in self.memories)
                      or "- (nothing comes to mind)",
                      asker=self.asker, question=quoted(self.question))

    def default(self) -> Answer:
        return Answer(text="I'm sorry, I can't think of an answer to that right now.")

    def problem(self, answer: Answer) -> str | None:
        return None if self.check is None else self.check(answer)

    def ask(self, agent: str | None = None) -> Ask[Answer]:
        asked = super().ask(agent)
        return asked if self.check is not None else replace(asked, check=None)

    def offline(self, seed: int) -> Answer:
        # What it is doing now goes to the prompt only: the offline answers read the plan.
        view = InterviewView(
            self.name, self.question, without_source(self.memories), list(self.plan or ()),
            self.summary, self.background, seed, tuple(without_source(self.known)),
            {person: without_source(texts) for person, texts in self.about_people.items()},
            self.home, tuple(self.met_at_home), tuple(self.living))
        return Answer(text=answer(view))
