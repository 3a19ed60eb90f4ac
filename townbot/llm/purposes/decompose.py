"""purpose 'decompose' (paper 4.3): the next part of an hour-level block as 5-15 minute steps,
each with its object, decomposed just in time when the block begins.

Offline: steps worded by the kind of activity (townbot/llm/offline/steps.py), each at the object
the words point to; going to bed is sleeping in bed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from townbot.llm.offline.activities import vocabulary
from townbot.llm.offline.steps import chunks, object_state, pick_emoji, pick_object, steps_text
from townbot.llm.purposes.common import Line, Question, items_choosing
from townbot.prompting import render
from townbot.wording import progressive
from townbot.world.clock import clock_face, minute_of_day
from townbot.world.model import Persona

ChunkMinutes = Literal[5, 10, 15]


class Step(BaseModel):
    minutes: ChunkMinutes
    action: Line
    object: Line
    object_state: Annotated[str, Field(min_length=1, max_length=80)]
    emoji: Annotated[str, Field(min_length=1, max_length=16)]


class Decomposition(BaseModel):
    steps: Annotated[list[Step], Field(min_length=1, max_length=40)]


def decomposition_among(objects: tuple[str, ...]) -> type[Decomposition]:
    """Decomposition whose steps name one of `objects`."""
    return items_choosing(Decomposition, "steps", Step, "object", objects, (1, 40))


@dataclass(frozen=True)
class DecomposeQuestion(Question[Decomposition]):
    """`persona`'s steps for `minutes` of `activity` from `start`, at `place` ("sector: arena")
    among its `objects`; `resuming` when the block resumes after a reaction cut into it."""

    purpose = "decompose"
    persona: Persona
    activity: str
    place: str
    start: datetime
    minutes: int
    objects: tuple[str, ...]
    resuming: bool = False

    def prompt(self) -> str:
        return render("decompose", identity=self.persona.identity(),
                      first_name=self.persona.first_name,
                      time=clock_face(minute_of_day(self.start)), place=self.place,
                      minutes=self.minutes, activity=self.activity,
                      objects=", ".join(self.objects) or "none")

    def schema(self) -> type[Decomposition]:
        return decomposition_among(self.objects)

    def default(self) -> Decomposition:
        target = self.objects[0] if self.objects else "nothing in particular"
        return Decomposition(steps=[Step(minutes=15, action=progressive(self.activity),
                                         object=target, object_state="in use", emoji="🙂")])

    def problem(self, answer: Decomposition) -> str | None:
        unknown = [s.object for s in answer.steps if s.object not in self.objects]
        return f"unknown objects {unknown}; use names from the list" if unknown and self.objects else None

    def offline(self, seed: int) -> Decomposition:
        activity, objects = self.activity, self.objects
        if activity.lower().startswith(vocabulary().bedtime_starts):
            bed = pick_object("sleep bed", objects, seed)
            return Decomposition(steps=[Step(minutes=15, action="sleeping", object=bed,
                                             object_state=object_state(bed, "sleeping"), emoji="😴")])
        key = f"{self.persona.name}|{self.start.isoformat()}|{activity}"
        sizes = chunks(self.minutes, seed, key)
        steps = []
        for size, text in zip(sizes, steps_text(activity, len(sizes), self.resuming, key, seed),
                              strict=True):
            obj = pick_object(f"{text} {activity}", objects, seed)
            steps.append(Step(minutes=size, action=re.sub(r"\s+", " ", text)[:300], object=obj,
                              object_state=object_state(obj, text), emoji=pick_emoji(text)))
        return Decomposition(steps=steps)
