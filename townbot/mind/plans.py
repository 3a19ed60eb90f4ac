"""The plan data an agent carries through the day: blocks of the hourly schedule and their steps."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from townbot.world.clock import format_game_time, parse_game_time

# A clock time a model wrote into an activity ("at 7:20 am", "from 9:00 to 10:30", "(8 pm)"),
# with the word that leads into it: the plan holds the times, the activity says what is done.
CLOCK_TIME = r"\d{1,2}(?::\d{2})?\s*(?:[ap]\.?\s?m\b\.?)|\d{1,2}:\d{2}\b"
CLOCK_PHRASE = re.compile(
    rf"\s*(?:\b(?:at|by|from|until|till|to|around|about|before|after|between|and|starting)\s+"
    rf"|[-–]\s*)?(?:{CLOCK_TIME})", re.IGNORECASE)


def without_clock_times(text: str) -> str:
    """The activity without the clock times in it ("checking the news at 7:20 am" ->
    "checking the news"); the text as it was if nothing else would be left."""
    if not any(ch.isdigit() for ch in text):
        return text
    cleaned = re.sub(r"\(\s*\)", "", CLOCK_PHRASE.sub("", text))
    cleaned = re.sub(r"\s+([,.;:!?])", r"\1", cleaned)
    cleaned = " ".join(cleaned.split()).strip(" ,;:-–")
    return cleaned if re.search(r"[A-Za-z]", cleaned) else text


@dataclass
class PlanStep:
    start: datetime
    end: datetime
    action: str
    object: str
    object_state: str
    emoji: str

    def to_dict(self) -> dict:
        return {**vars(self), "start": format_game_time(self.start),
                "end": format_game_time(self.end)}

    @classmethod
    def from_dict(cls, data: dict) -> PlanStep:
        return cls(**{**data, "start": parse_game_time(data["start"]),
                      "end": parse_game_time(data["end"])})


@dataclass
class PlanBlock:
    start: datetime
    end: datetime
    activity: str
    sector: str | None = None
    arena: str | None = None
    steps: list[PlanStep] = field(default_factory=list)
    resumed: bool = False  # what is left of a block after a reaction cut into it
    tending: bool = False  # a reaction dealing with an object in trouble (only it may put it right)

    def covers(self, moment: datetime) -> bool:
        return self.start <= moment < self.end

    def step_at(self, moment: datetime) -> PlanStep | None:
        return next((step for step in self.steps if step.start <= moment < step.end), None)

    def to_dict(self) -> dict:
        return {"start": format_game_time(self.start), "end": format_game_time(self.end),
                "activity": self.activity, "sector": self.sector, "arena": self.arena,
                "steps": [s.to_dict() for s in self.steps], "resumed": self.resumed,
                **({"tending": True} if self.tending else {})}

    @classmethod
    def from_dict(cls, data: dict) -> PlanBlock:
        return cls(parse_game_time(data["start"]), parse_game_time(data["end"]), data["activity"],
                   data.get("sector"), data.get("arena"),
                   [PlanStep.from_dict(s) for s in data.get("steps", [])],
                   bool(data.get("resumed", False)), bool(data.get("tending", False)))
