"""purpose 'react' (paper 4.3.1): carry on with the plan, or react to what was just noticed
(talk to a person, deal with an object); for a person, `wait` instead means waiting for them to
finish before going on.

Offline: an object in trouble (burning, leaking, broken) is dealt with; a person awake and not
busy is talked to by chance, more often when known and much more often by someone with an event
or a campaign on their mind (as Isabella seeks people out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from townbot.llm.offline.words import seeded_index
from townbot.llm.purposes.common import Question, bulleted
from townbot.prompting import render
from townbot.world.clock import clock_face, minute_of_day

ALARMS: list[tuple[tuple[str, ...], str, str, str]] = [
    (("burning", "fire", "smok", "on fire"), "turn off the {obj} and clear away what was burning",
     "being put out", "🧯"),
    (("overflow", "flood"), "turn off the tap and mop up around the {obj}", "being mopped up",
     "🧽"),
    (("leak", "dripping"), "fix the leaking {obj}", "being repaired", "🔧"),
    (("broken", "jammed", "stuck", "not working"), "repair the {obj}", "being repaired", "🔧"),
    (("left on", "running with no one"), "switch off the {obj}", "being switched off", "✋"),
]
EAGER = re.compile(r"\b(party|invit\w*|campaign\w*|running for|run for)\b", re.IGNORECASE)


class Reaction(BaseModel):
    react: bool
    wait: bool = False
    action: Annotated[str, Field(max_length=200)] = ""
    minutes: Literal[5, 10, 15, 20, 30] = 10
    object_state: Annotated[str, Field(max_length=80)] = ""
    emoji: Annotated[str, Field(max_length=16)] = "❗"


@dataclass(frozen=True)
class ReactQuestion(Question[Reaction]):
    """Whether `name` (described by `summary`), doing `action` at `now`, reacts to a sighting
    (`observation`, of a `kind` of thing: a person's name or an object's path as `subject`, and
    its `status`), given what it remembers (`memories`) and, for a person, `last_talk`."""

    purpose = "react"
    answer_schema = Reaction
    name: str
    summary: str
    now: datetime
    action: str
    observation: str
    kind: str  # agent | object | speech | notice
    subject: str
    status: str
    memories: tuple[str, ...]
    last_talk: str = ""

    def prompt(self) -> str:
        first_name = self.name.split()[0]
        if self.kind == "agent":
            guidance = render("react_guidance_person", subject=self.subject,
                              last_talk=self.last_talk, first_name=first_name)
        else:
            guidance = render("react_guidance_object", subject=self.subject.split(": ")[-1])
        return render("react", summary=self.summary, time=clock_face(minute_of_day(self.now)),
                      first_name=first_name, action=self.action, observation=self.observation,
                      context=bulleted(self.memories), guidance=guidance)

    def default(self) -> Reaction:
        return Reaction(react=False)

    def offline(self, seed: int) -> Reaction:
        status = self.status.lower()
        if self.kind == "object":
            obj = self.subject.split(": ")[-1]
            for words, action, state, emoji in ALARMS:
                if any(word in status for word in words):
                    return Reaction(react=True, action=action.format(obj=obj), minutes=15,
                                    object_state=state, emoji=emoji)
            return Reaction(react=False)
        if "sleeping" in status or "talking with" in status or "sleeping" in self.action:
            return Reaction(react=False)
        chance = seeded_index(seed, self.name, self.subject, self.now.date().isoformat(),
                              self.status, modulo=100)
        knows = any(self.subject in text for text in self.memories)
        eager = EAGER.search(self.summary) is not None
        if chance < (35 if knows else 12) + (25 if eager else 0):
            return Reaction(react=True, action=f"chat with {self.subject}", minutes=10, emoji="💬")
        return Reaction(react=False)
