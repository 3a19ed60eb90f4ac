"""purpose 'day_plan' (paper 4.3): the day in broad strokes, from the summary, yesterday and
what is on the resident's mind.

Offline: the routine with today's appointments cut in, its closest steps joined until eight are
left.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.offline.plans import with_appointments
from townbot.llm.purposes.common import NOTHING, Line, Question, bulleted
from townbot.prompting import render
from townbot.world.clock import clock_face
from townbot.world.model import Persona


class DayPlan(BaseModel):
    items: Annotated[list[Line], Field(min_length=3, max_length=10)]


@dataclass(frozen=True)
class DayPlanQuestion(Question[DayPlan]):
    """`persona`'s plan for `today`, given its `summary`, `yesterday` and `intentions` (what it
    remembers that could shape the day)."""

    purpose = "day_plan"
    answer_schema = DayPlan
    persona: Persona
    summary: str
    today: datetime
    yesterday: str
    intentions: tuple[str, ...]

    def prompt(self) -> str:
        persona = self.persona
        return render("day_plan", summary=self.summary, first_name=persona.first_name,
                      routine="; ".join(f"{clock_face(s.minute)} {s.activity}" for s in persona.routine),
                      yesterday=self.yesterday, intentions=bulleted(self.intentions, NOTHING),
                      date=self.today.strftime("%A %B %d"), wakes=clock_face(persona.wakes),
                      sleeps=clock_face(persona.sleeps))

    def default(self) -> DayPlan:
        steps = self.persona.routine[:8]
        return DayPlan(items=[f"{s.activity} at {clock_face(s.minute)}" for s in steps]
                       + ["go about the day"] * max(0, 3 - len(steps)))

    def offline(self, seed: int) -> DayPlan:
        persona = self.persona
        routine = with_appointments(persona.routine, self.intentions, self.today.date().isoformat(),
                                    persona.name, tuple(persona.starting_sectors()))
        while len(routine) > 8:  # join the two steps closest in time (never the first)
            gaps = [b.minute - a.minute for a, b in zip(routine, routine[1:], strict=False)]
            merge = min(range(1, len(gaps)), key=lambda i: gaps[i]) if len(gaps) > 1 else 0
            first, second = routine[merge], routine[merge + 1]
            routine[merge] = replace(first, activity=f"{first.activity}, then {second.activity}")
            del routine[merge + 1]
        items = [f"{step.activity} at {clock_face(step.minute)}" for step in routine]
        while len(items) < 3:
            items.append("get on with whatever the day brings")
        return DayPlan(items=items)
