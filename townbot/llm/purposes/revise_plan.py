"""purpose 'revise_plan': whether news changes the rest of today's plan, and how (paper 4.3.1:
the plan is regenerated from the moment of a reaction).

Offline: revise when the news holds an appointment later today that the plan does not have.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.offline.plans import appointments
from townbot.llm.purposes.common import NOTHING, Question, bulleted
from townbot.prompting import render
from townbot.world.clock import clock_face, minute_of_day


class PlanRevision(BaseModel):
    revise: bool
    reason: Annotated[str, Field(max_length=300)] = ""


@dataclass(frozen=True)
class RevisionQuestion(Question[PlanRevision]):
    """Whether `news` changes what is left of today for `name`, who is `doing` something at
    `now`; `schedule` is the rest of the plan as (minute of the day, activity)."""

    purpose = "revise_plan"
    answer_schema = PlanRevision
    optional = True  # under a tight budget the plan simply stands
    name: str
    summary: str
    now: datetime
    doing: str
    schedule: tuple[tuple[int, str], ...]
    news: tuple[str, ...]
    places: tuple[str, ...]

    def prompt(self) -> str:
        now = self.now
        return render("revise_plan", summary=self.summary,
                      moment=f"{now:%A %B} {now.day}, {clock_face(minute_of_day(now))}",
                      first_name=self.name.split()[0], action=self.doing,
                      schedule=bulleted([f"{clock_face(m)} {a}" for m, a in self.schedule], NOTHING),
                      news=bulleted(self.news, NOTHING))

    def default(self) -> PlanRevision:
        return PlanRevision(revise=False)

    def offline(self, seed: int) -> PlanRevision:
        planned = " ".join(activity.lower() for _, activity in self.schedule)
        for event in appointments(self.news, self.now.date().isoformat(), self.name, self.places):
            if event.end > minute_of_day(self.now) and event.activity.lower() not in planned:
                return PlanRevision(revise=True, reason=f"{event.activity} from "
                                    f"{clock_face(event.start)} to {clock_face(event.end)}")
        return PlanRevision(revise=False)
