"""purpose 'utterance' (paper 4.3.2): the next line of a conversation, and whether it ends it.

Its question is built in mind/dialogue.py. Offline: offline/talk.py says the line, from who the
two are to each other, where they are, what each is doing and what the speaker already knows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.offline import talk
from townbot.llm.purposes.common import Question, Recalled, Turn, bulleted, transcript
from townbot.llm.purposes.importance import score_importance
from townbot.prompting import render


class Utterance(BaseModel):
    text: Annotated[str, Field(min_length=1, max_length=400)]
    end: bool


def default_line() -> Utterance:
    """The safe line: a polite goodbye, which ends the talk."""
    return Utterance(text="Anyway, I should get going. See you later!", end=True)


@dataclass(frozen=True)
class UtteranceQuestion(Question[Utterance]):
    """The next line `speaker` (described by `summary`, doing `speaker_action`) says to
    `partner` (doing `partner_action`) at `place` and `moment`, given what it makes of them
    (`relationship`), the memories retrieved for this line (`memories`: text, importance and
    kind), the conversation so far (`history`) and what it has already said to them
    (`already_said`, in earlier talks and this one). Only the offline model reads today's plan
    (`plans`) and the news it knows (`known`); a language model finds them in the memories."""

    purpose = "utterance"
    answer_schema = Utterance
    speaker: str
    partner: str
    summary: str = ""
    speaker_action: str = ""
    partner_action: str = ""
    relationship: str = ""
    place: str = ""
    moment: str = ""  # 'Tuesday February 14, 2023, 3:10 pm'
    memories: tuple[Recalled, ...] = ()
    history: tuple[Turn, ...] = ()
    already_said: tuple[str, ...] = ()
    plans: tuple[str, ...] = ()  # '5:00 pm: attend the party'
    known: tuple[Recalled, ...] = ()

    def prompt(self) -> str:
        return render("utterance", summary=self.summary, moment=self.moment, place=self.place,
                      first_name=self.speaker.split()[0],
                      action=self.speaker_action or "talking", partner=self.partner,
                      partner_action=self.partner_action, relationship=self.relationship,
                      context=bulleted(m.text for m in self.memories),
                      history=transcript(self.history))

    def default(self) -> Utterance:
        return default_line()

    def offline(self, seed: int) -> Utterance:
        view = talk.TalkView(self.speaker, self.partner, list(self.history), list(self.memories),
                             self.speaker_action, self.partner_action, self.relationship,
                             self.place, self.moment, list(self.already_said), seed,
                             tuple(self.plans), tuple(self.known))
        spoken = talk.utterance(view, score_importance)
        return Utterance(text=spoken.text, end=spoken.end)
