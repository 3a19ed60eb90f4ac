"""purpose 'takeaways': what each participant of a conversation learned from it (one call for
both).

Its question is built in mind/dialogue.py. Offline: each participant learns the news the other
passed on (offline/news.py), and the talk's importance is never below routine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.offline.news import passed_on
from townbot.llm.purposes.common import Line, Question, Score, Turn, items_choosing, transcript
from townbot.llm.purposes.importance import score_importance
from townbot.prompting import render


class PersonTakeaways(BaseModel):
    """What one participant learned, with the importance of each fact (`scores`, in order) and
    of the conversation itself, so that neither waits for an importance call. Missing or
    miscounted scores are asked for the usual way."""

    name: Line
    facts: Annotated[list[Line], Field(max_length=5)] = []
    scores: Annotated[list[Score], Field(max_length=5)] = []
    importance: Score | None = None


class Takeaways(BaseModel):
    learned: Annotated[list[PersonTakeaways], Field(min_length=1, max_length=2)]


def takeaways_among(names: tuple[str, ...]) -> type[Takeaways]:
    """Takeaways with one entry per participant, each named as one of them."""
    return items_choosing(Takeaways, "learned", PersonTakeaways, "name", names, (1, 2))


@dataclass(frozen=True)
class TakeawaysQuestion(Question[Takeaways]):
    """What each of `names` (the participants who remember the talk, in order) learned from
    its `lines` (speaker, text). Only the offline model reads `pronouns` (speaker -> 'she',
    'he' or 'they'), to tell what someone said of them."""

    purpose = "takeaways"
    answer_schema = Takeaways
    names: tuple[str, ...]
    lines: tuple[Turn, ...]
    pronouns: Mapping[str, str] = field(default_factory=dict)

    def prompt(self) -> str:
        first = self.names[0]
        other = next((s for s, _ in self.lines if s != first), first)
        more = "".join(f', {{"name": "{name}", "facts": [], "scores": [], "importance": 2}}'
                       for name in self.names[1:])  # the example's others learned nothing new
        return render("takeaways", people=" and ".join(self.names),
                      transcript=transcript(self.lines), first=first,
                      other=other.split()[0], others=more)

    def schema(self) -> type[Takeaways]:
        return takeaways_among(tuple(self.names))

    def default(self) -> Takeaways:
        """Nobody learned anything new."""
        return Takeaways(learned=[PersonTakeaways(name=n) for n in self.names])

    def problem(self, answer: Takeaways) -> str | None:
        """Not one entry for each participant."""
        given = [entry.name for entry in answer.learned]
        if sorted(given) != sorted(self.names):
            return f"give one entry for each of {', '.join(self.names)} (got {', '.join(given)})"
        return None

    def offline(self, seed: int) -> Takeaways:
        """Each participant learns what the other (the first other speaker) passed on."""
        talk = " ".join(text for _, text in self.lines)
        importance = max(4, score_importance(talk))  # a talk is never mere routine
        learned = []
        for name in self.names:
            partner = next((s for s, _ in self.lines if s != name), name)
            facts = passed_on(self.lines, partner, self.pronouns.get(partner, "they"),
                              score_importance)[:5]
            learned.append(PersonTakeaways(name=name, facts=facts,
                                           scores=[score_importance(f) for f in facts],
                                           importance=importance))
        return Takeaways(learned=learned)
