"""purpose 'conversation': a whole exchange in one call (the cheaper setting).

Its question is built in mind/dialogue.py. Offline: the two speak line by line as for
'utterance' (offline/talk.py), each from what it had in mind when the talk began.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.offline import talk
from townbot.llm.purposes.common import Line, Question, Recalled, items_choosing
from townbot.llm.purposes.importance import score_importance
from townbot.prompting import render


class Exchange(BaseModel):
    speaker: Line
    text: Annotated[str, Field(min_length=1, max_length=400)]


class WholeConversation(BaseModel):
    lines: Annotated[list[Exchange], Field(min_length=2, max_length=16)]


def conversation_among(names: tuple[str, ...]) -> type[WholeConversation]:
    """WholeConversation whose speakers are the participants."""
    return items_choosing(WholeConversation, "lines", Exchange, "speaker", names, (2, 16))


@dataclass(frozen=True)
class ConversationQuestion(Question[WholeConversation]):
    """The whole talk of `first` and `second` at `place` and `moment`: each side (`_a` the
    first's, `_b` the second's) with its summary, action, what it makes of the other
    (`relation_*`) and the memories retrieved for the talk (text, importance and kind). Only
    the offline model reads the news each knows (`known_*`) and what each has already told
    the other in earlier talks (`already_said_*`)."""

    purpose = "conversation"
    answer_schema = WholeConversation
    first: str
    second: str
    summary_a: str = ""
    summary_b: str = ""
    action_a: str = ""
    action_b: str = ""
    relation_a: str = ""
    relation_b: str = ""
    place: str = ""
    moment: str = ""
    memories_a: tuple[Recalled, ...] = ()
    memories_b: tuple[Recalled, ...] = ()
    known_a: tuple[Recalled, ...] = ()
    known_b: tuple[Recalled, ...] = ()
    already_said_a: tuple[str, ...] = ()
    already_said_b: tuple[str, ...] = ()

    def prompt(self) -> str:
        return render("conversation", summary_a=self.summary_a, summary_b=self.summary_b,
                      moment=self.moment, place=self.place, first=self.first,
                      second=self.second, action_a=self.action_a or "talking",
                      action_b=self.action_b or "talking", relation_a=self.relation_a,
                      relation_b=self.relation_b,
                      context_a="; ".join(m.text for m in self.memories_a)
                      or "nothing in particular",
                      context_b="; ".join(m.text for m in self.memories_b)
                      or "nothing in particular")

    def schema(self) -> type[WholeConversation]:
        return conversation_among((self.first, self.second))

    def default(self) -> WholeConversation:
        """The two greet each other."""
        first, second = self.first, self.second
        return WholeConversation(lines=[
            Exchange(speaker=first, text=f"Hello, {second.split()[0]}!"),
            Exchange(speaker=second, text=f"Hi, {first.split()[0]}. Good to see you.")])

    def problem(self, answer: WholeConversation) -> str | None:
        strangers = {line.speaker for line in answer.lines} - {self.first, self.second}
        return f"speakers {sorted(strangers)} are not in this conversation" if strangers else None

    def offline(self, seed: int) -> WholeConversation:
        first = talk.TalkView(self.first, self.second, memories=list(self.memories_a),
                              speaker_action=self.action_a, partner_action=self.action_b,
                              place=self.place, moment=self.moment,
                              already_said=list(self.already_said_a), seed=seed,
                              known=tuple(self.known_a))
        second = talk.TalkView(self.second, self.first, memories=list(self.memories_b),
                               speaker_action=self.action_b, partner_action=self.action_a,
                               place=self.place, moment=self.moment,
                               already_said=list(self.already_said_b), seed=seed,
                               known=tuple(self.known_b))
        lines = talk.exchange(first, second, score_importance)
        return WholeConversation(lines=[Exchange(speaker=s, text=t) for s, t in lines])
