"""News in the town: the pieces of information the paper follows (section 7.1; events.yaml),
who heard of each from whom, and the live status moderators ask for; pure functions of
memories and plans, which the evaluation reads too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict

from townbot.mind.memory import Memory
from townbot.world.clock import parse_game_time

EVENTS_FILE = Path(__file__).with_name("events.yaml")
HEARD_FROM = re.compile(r"\(heard from ([^)]+)\)")
TALKED_WITH = re.compile(r"^(.+?) talked with (.+?) at ")
# Kinds that say how news arrived; a plan or reflection about an event is derived, not a source.
SOURCES = ("conversation", "thought", "observation")


class TrackedEvent(BaseModel):
    """A piece of information the paper follows through the town (see events.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str = ""
    title: str
    originator: str
    about: tuple[str, ...]
    question: str
    answer_names: tuple[str, ...] = ()
    place: str | None = None
    starts: str | None = None
    ends: str | None = None
    paper: dict[str, float] = {}

    @cached_property
    def patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.IGNORECASE) for p in self.about)

    def mentioned_in(self, text: str) -> bool:
        return all(p.search(text) for p in self.patterns)

    @property
    def window(self) -> tuple[datetime, datetime] | None:
        if self.starts is None or self.ends is None:
            return None
        return parse_game_time(self.starts), parse_game_time(self.ends)


def tracked_events(path: Path = EVENTS_FILE) -> dict[str, TrackedEvent]:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {key: TrackedEvent.model_validate({**spec, "key": key}) for key, spec in raw.items()}


# --- who heard, from whom ------------------------------------------------------------------------


@dataclass(frozen=True)
class Heard:
    """The first memory through which a resident learned of an event."""

    resident: str
    time: datetime
    memory_id: int
    text: str
    teller: str | None  # who told them; None for the originator or an unknown source
    how: str  # "originator" | "conversation" | "observation" | "thought"


def _teller(memory: Memory, memories: Sequence[Memory], resident: str) -> str | None:
    """Who told it: '(heard from X)' in a takeaway, else the partner of the conversation
    remembered at the same moment."""
    named = HEARD_FROM.search(memory.text)
    if named:
        return named.group(1).strip()
    for candidate in [memory, *memories]:
        if candidate.kind != "conversation" or candidate.created != memory.created:
            continue
        talk = TALKED_WITH.match(candidate.text)
        if talk and talk.group(1) == resident:
            return talk.group(2)
    return None


def first_heard(resident: str, memories: Sequence[Memory], event: TrackedEvent) -> Heard | None:
    """The earliest memory of the event that says how it arrived."""
    for memory in memories:
        if memory.kind not in SOURCES or not event.mentioned_in(memory.text):
            continue
        if resident == event.originator:
            return Heard(resident, memory.created, memory.id, memory.text, None, "originator")
        teller = _teller(memory, memories, resident) if memory.kind == "conversation" else None
        return Heard(resident, memory.created, memory.id, memory.text, teller, memory.kind)
    return None


def diffusion(memories: Mapping[str, Sequence[Memory]], event: TrackedEvent) -> list[Heard]:
    """Everyone who has a memory of the event, in the order they learned of it."""
    heard = [h for name in sorted(memories)
             if (h := first_heard(name, memories[name], event)) is not None]
    return sorted(heard, key=lambda h: (h.time, h.resident))


# --- live status ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventStatus:
    event: TrackedEvent
    heard: tuple[Heard, ...]
    planning: tuple[str, ...]  # residents with the event in today's plan


def event_status(event: TrackedEvent, memories: Mapping[str, Sequence[Memory]],
                 plans: Mapping[str, Sequence[str]]) -> EventStatus:
    """Who knows of an event (and by which memory), from whom, and who plans for it today."""
    planning = tuple(sorted(name for name, lines in plans.items()
                            if any(event.mentioned_in(line) for line in lines)))
    return EventStatus(event, tuple(diffusion(memories, event)), planning)


def describe_status(status: EventStatus) -> str:
    """A few lines for a moderator: the spread so far, who told whom, who plans to go."""
    event, heard = status.event, status.heard
    lines = [f"{event.title}: {len(heard)} know of it"
             + (f"; {len(status.planning)} have it in today's plan" if status.planning else "")]
    for h in heard:
        source = "started it" if h.how == "originator" else \
            f"heard from {h.teller}" if h.teller else f"by {h.how}"
        lines.append(f"  {h.time:%a %H:%M} {h.resident} ({source}; memory #{h.memory_id})")
    if status.planning:
        lines.append("  plans to be there today: " + ", ".join(status.planning))
    return "\n".join(lines)
