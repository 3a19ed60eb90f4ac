"""purpose 'hourly_schedule' (paper 4.3): the waking day, or its rest when replanning, as
hour-level blocks, each with the known place and area it happens in (a place that is not known
is chosen when the block begins).

Offline: the routine with today's appointments cut in, in blocks of one to two hours, each
routine block at its routine place when that is known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.offline.plans import from_now, with_appointments
from townbot.llm.purposes.choose_place import places_text
from townbot.llm.purposes.common import NOTHING, Line, Question, bulleted, items_choosing
from townbot.prompting import render
from townbot.world.clock import clock_face, minute_of_day, parse_clock
from townbot.world.model import Persona


class ScheduleBlock(BaseModel):
    start: str = Field(pattern=r"^\d{2}:\d{2}$")
    minutes: Annotated[int, Field(ge=5, le=720)]
    activity: Line
    place: Annotated[str, Field(max_length=200)] = ""  # "sector: arena"; "" to choose later


class HourlySchedule(BaseModel):
    blocks: Annotated[list[ScheduleBlock], Field(min_length=1, max_length=40)]


def schedule_among(spots: tuple[str, ...]) -> type[HourlySchedule]:
    """HourlySchedule whose blocks name one of `spots` ("place: area"), or "" to choose later."""
    if not spots:
        return HourlySchedule
    return items_choosing(HourlySchedule, "blocks", ScheduleBlock, "place", ("", *spots), (1, 40), "")


def clock(minute: int) -> str:
    """'07:05' for a minute of the day."""
    return f"{minute // 60:02d}:{minute % 60:02d}"


@dataclass(frozen=True)
class ScheduleQuestion(Question[HourlySchedule]):
    """`persona`'s hour blocks on `day` from its day plan (`items`) and `intentions`, among the
    places it knows (`known`: place -> areas); from `start` on when replanning, perhaps after
    a new decision (`directive`)."""

    purpose = "hourly_schedule"
    persona: Persona
    day: datetime
    items: tuple[str, ...]
    intentions: tuple[str, ...]
    known: Mapping[str, Sequence[str]]
    start: datetime | None = None
    directive: str | None = None

    @property
    def begins(self) -> int | None:
        return None if self.start is None else minute_of_day(self.start)

    def prompt(self) -> str:
        persona, begins = self.persona, self.begins
        home = f"{persona.home_sector}: {persona.home_arena}"
        work = (f"{persona.work_sector}: {persona.work_arena}"
                if persona.work_sector and persona.work_arena else home)
        return render("hourly_schedule", identity=persona.identity(), first_name=persona.first_name,
                      places=places_text(self.known), home=home, work=work,
                      date=self.day.strftime("%A %B %d"), plan=bulleted(self.items, NOTHING),
                      intentions=bulleted(([f"(new) {self.directive}"] if self.directive else [])
                                          + list(self.intentions), NOTHING),
                      wakes=clock_face(begins if begins is not None else persona.wakes),
                      sleeps=clock_face(persona.sleeps))

    def schema(self) -> type[HourlySchedule]:
        known = self.known
        return schedule_among(tuple(f"{s}: {a}" for s in sorted(known) for a in known[s]))

    def default(self) -> HourlySchedule:
        steps = self.persona.routine
        return HourlySchedule(blocks=[
            ScheduleBlock(start=clock(a.minute), minutes=max(5, b.minute - a.minute),
                          activity=a.activity) for a, b in zip(steps, steps[1:], strict=False)])

    def problem(self, answer: HourlySchedule) -> str | None:
        previous = -1
        for block in answer.blocks:
            try:
                minute = parse_clock(block.start)
            except ValueError as error:
                return str(error)
            if minute <= previous:
                return f"block at {block.start} does not come after the one before"
            previous = minute
        first = self.persona.wakes if self.begins is None else self.begins
        if parse_clock(answer.blocks[0].start) > first + 60:
            return f"the schedule must start at {clock_face(first)}"
        return None

    def offline(self, seed: int) -> HourlySchedule:
        """Each routine step until the next; a long stretch of one activity becomes blocks of
        one and a half to two hours."""
        persona, known = self.persona, self.known
        routine = from_now(with_appointments(persona.routine, self.intentions,
                                             self.day.date().isoformat(), persona.name,
                                             tuple(sorted(known))), self.begins, self.directive)
        blocks: list[ScheduleBlock] = []
        carried: int | None = None  # start of a too-short first step, folded into the next
        for step, following in zip(routine, routine[1:], strict=False):
            start, end = step.minute, following.minute
            if carried is not None:
                start, carried = carried, None
            if end - start < 5:  # too short for a block of its own: fold it into a neighbour
                if blocks:
                    blocks[-1] = blocks[-1].model_copy(
                        update={"minutes": blocks[-1].minutes + end - start})
                else:
                    carried = start
                continue
            hours = max(2, round((end - start) / 110)) if end - start > 150 else 1
            edges = [start + (end - start) * i // hours for i in range(hours + 1)]
            place = f"{step.sector}: {step.arena}" if step.arena in known.get(step.sector, ()) else ""
            for index in range(hours):
                activity = step.activity if index == 0 else (
                    f"finish off: {step.activity}" if index == hours - 1 and hours > 2
                    else f"continue to {step.activity}")
                blocks.append(ScheduleBlock(start=clock(edges[index]),
                                            minutes=edges[index + 1] - edges[index],
                                            activity=activity, place=place))
        return HourlySchedule(blocks=blocks)
