"""purpose 'insights': up to five insights per question (three questions at most), citing
numbered statements as evidence, each rated for importance as it is drawn (no importance call
of its own).

Offline, insights rest on what happened (earlier insights are not restated inside new ones): a
relationship question gets who the resident keeps meeting, a news question the news heard, any
other what the resident spends their time on.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.offline.social import HEARD_FROM, PERSON, clip, is_news
from townbot.llm.purposes.common import Line, Question, Score
from townbot.llm.purposes.importance import score_importance
from townbot.prompting import render

# How the offline insights begin and join: what an insight is made of, never an insight's basis.
REFLECTION_MARKERS = (" knows that ", " has been taking in: ", " has been talking with ",
                      " spends a lot of time ", " keeps running into ", " and is getting to know them")
TALKED = re.compile(r"^[A-Z][\w'-]+ [A-Z][\w'-]+ talked with (.+?) at ([^:.]+)")


class Insight(BaseModel):
    question: int | None = None  # the number of the question it answers
    text: Line
    evidence: Annotated[list[int], Field(min_length=1, max_length=10)]
    importance: Score | None = None  # None: scored the usual way


class Insights(BaseModel):
    insights: Annotated[list[Insight], Field(min_length=1, max_length=15)]


def lower_first(text: str) -> str:
    """Lower-case the start of a sentence that continues another, but never a name."""
    if PERSON.match(text) or text.startswith(("I ", "I'")):
        return text
    return text[:1].lower() + text[1:]


@dataclass(frozen=True)
class InsightsQuestion(Question[Insights]):
    """The insights `name` draws on each of `questions`. The statements `texts` (of memories of
    `kinds`) are numbered once, from 1; `groups` holds each question's numbers."""

    purpose = "insights"
    answer_schema = Insights
    name: str
    questions: tuple[str, ...]
    texts: tuple[str, ...]
    kinds: tuple[str, ...]
    groups: tuple[tuple[int, ...], ...]

    def prompt(self) -> str:
        """Each question followed by its statements (one that bears on two questions has its
        number under both)."""
        listing = "\n\n".join(f'Question {index}: "{question}"\n'
                              + "\n".join(f"{n}. {self.texts[n - 1]}" for n in numbers)
                              for index, (question, numbers)
                              in enumerate(zip(self.questions, self.groups, strict=True), 1))
        return render("insights", name=self.name, questions=listing, count=len(self.questions))

    def default(self) -> Insights:
        return Insights(insights=[
            Insight(question=index, text=f"{self.name} has been thinking about: {question}",
                    evidence=[numbers[0]])
            for index, (question, numbers) in enumerate(zip(self.questions, self.groups,
                                                            strict=True), 1)])

    def problem(self, answer: Insights) -> str | None:
        count = len(self.texts)
        bad = [n for i in answer.insights for n in i.evidence if not 1 <= n <= count]
        return f"evidence numbers {bad} are not among the statements 1-{count}" if bad else None

    def offline(self, seed: int) -> Insights:
        """The insights of each question from its own statements, numbered as in the prompt."""
        found: list[Insight] = []
        for index, (question, numbers) in enumerate(zip(self.questions, self.groups,
                                                        strict=True), 1):
            texts = [self.texts[n - 1] for n in numbers]
            kinds = [self.kinds[n - 1] for n in numbers]
            for insight in insights_on(self.name, question, texts, kinds):
                found.append(insight.model_copy(update={
                    "question": index, "evidence": [numbers[n - 1] for n in insight.evidence]}))
        return Insights(insights=found[:15])


def insights_on(name: str, question: str, texts: list[str], kinds: list[str]) -> list[Insight]:
    """The offline insights on one question from its statements (numbered from 1)."""
    lived = [i for i, (t, k) in enumerate(zip(texts, kinds, strict=True), 1)
             if k != "reflection" and not any(marker in t for marker in REFLECTION_MARKERS)]
    found: list[Insight] = []
    person = re.search(r"relationship with (.+)\?$", question)
    if person:
        other = person.group(1)
        cited = [i for i, t in enumerate(texts, 1) if other in t]
        if cited:
            talked = [i for i in cited if "talked with" in texts[i - 1]]
            relation = "has been talking with" if talked else "keeps running into"
            found.append(Insight(text=f"{name} {relation} {other} and is getting to know them",
                                 evidence=cited[:5]))
    news = [i for i in lived if is_news(texts[i - 1], score_importance)
            and not HEARD_FROM.sub("", texts[i - 1]).startswith(name)]  # not one's own news
    if "news" in question and news:
        for index in news[:3]:
            content = HEARD_FROM.sub("", texts[index - 1])
            found.append(Insight(text=clip(f"{name} knows that {lower_first(content)}"),
                                 evidence=[index]))
    own = Counter(texts[i - 1][len(name) + 4:] for i in lived
                  if texts[i - 1].startswith(f"{name} is "))
    if own and not found:
        activity, _ = own.most_common(1)[0]
        cited = [i for i in lived if texts[i - 1] == f"{name} is {activity}"]
        found.append(Insight(text=clip(f"{name} spends a lot of time {activity}"),
                             evidence=cited[:5]))
    if not found and lived:
        first = texts[lived[0] - 1]
        talk = TALKED.match(first)
        # A remembered talk is summarised, never its lines kept inside the insight.
        seen = f"{name} has been talking with {talk.group(1)} at {talk.group(2)}" if talk \
            else f"{name} has been taking in: {first}"
        found.append(Insight(text=clip(seen), evidence=[lived[0]]))
    if not found:
        found.append(Insight(text=f"{name} has been thinking things over", evidence=[1]))
    return [i.model_copy(update={"importance": score_importance(i.text)}) for i in found[:5]]
