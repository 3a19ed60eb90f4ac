"""The offline model's plans: a resident's routine with today's appointments cut in (dated,
timed events found in the memories), and its rest from a moment of replanning."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from operator import attrgetter

from townbot.llm.offline.social import TIME_RANGE, _minute
from townbot.world.model import RoutineStep

MONTHS = ("January February March April May June July August September October November "
          "December").split()
EVENT = re.compile(r"((?:[A-Z][\w']*\s){0,3}(?:party|meeting|exhibition|show|rally|debate|"
                   r"opening|concert|reading))")


@dataclass(frozen=True)
class Appointment:
    """A dated event the resident means to host or attend, in minutes of the day."""

    start: int
    end: int
    activity: str


def appointments(intentions: tuple[str, ...], date_iso: str, name: str,
                 places: tuple[str, ...]) -> list[Appointment]:
    """Dated, timed events in the agent's memories that fall on this date."""
    year, month, day = (int(part) for part in date_iso.split("-"))
    month_name = MONTHS[month - 1]
    labels = (f"{month_name} {day}", f"{month_name[:3]} {day}", f"{day} {month_name}")
    found = []
    for text in intentions:
        when = TIME_RANGE.search(text)
        if not when or not any(label in text for label in labels) or " talked with " in text:
            continue
        start = _minute(when.group(1), when.group(2), when.group(3) or when.group(6))
        end = _minute(when.group(4), when.group(5), when.group(6))
        if end <= start:
            continue
        event = EVENT.search(text)
        what = event.group(1).strip() if event else "event"
        place = next((p for p in places if p in text), None)
        hosting = re.match(rf"{re.escape(name)} (?:intends|plans|is planning|will|hopes) to "
                           r"(?:host|throw|hold|organi[sz]e|give)", text)
        verb = "host" if hosting else "attend"
        activity = f"{verb} the {what}" + (f" at {place}" if place else "")
        found.append(Appointment(start, end, activity))
    return found


def with_appointments(routine: tuple[RoutineStep, ...], intentions: tuple[str, ...],
                      date_iso: str, name: str, places: tuple[str, ...]) -> list[RoutineStep]:
    """The routine with today's appointments cut in (an appointment's place is chosen when it
    begins; the step it interrupts resumes when it ends)."""
    steps = list(routine)
    for event in appointments(intentions, date_iso, name, places):
        kept = [s for s in steps if not event.start <= s.minute < event.end]
        before = [s for s in kept if s.minute < event.start]
        kept.append(RoutineStep(event.start, event.activity, "", ""))
        if before and all(s.minute != event.end for s in kept):
            kept.append(replace(before[-1], minute=event.end))
        steps = sorted(kept, key=attrgetter("minute"))
    return steps


def from_now(routine: list[RoutineStep], begins: int | None,
             directive: str | None) -> list[RoutineStep]:
    """When replanning: the rest of the day, opening with the new decision if there is one."""
    if begins is None:
        return routine
    earlier = [s for s in routine if s.minute <= begins]
    rest = [replace(earlier[-1], minute=begins)] if earlier else []
    rest += [s for s in routine if s.minute > begins]
    if directive and rest:
        resume = begins + 30
        rest = [RoutineStep(begins, f"think over a new decision ({directive})", "", ""),
                replace(rest[0], minute=max(resume, rest[0].minute)),
                *[s for s in rest[1:] if s.minute > resume]]
    return rest
