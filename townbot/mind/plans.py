"""The plan data an agent carries through the day: blocks of the hourly schedule and their steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from townbot.world.clock import format_game_time, parse_game_time


@dataclass
class PlanStep:
    start: datetime
    end: datetime
    action: str
    object: str
    object_state: str
    emoji: str

    def to_dict(self) -> dict:
        return {"start": format_game_time(self.start), "end": format_game_time(self.end),
                "action": self.action, "object": self.object, "object_state": self.object_state,
                "emoji": self.emoji}

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

    def covers(self, moment: datetime) -> bool:
        return self.start <= moment < self.end

    def step_at(self, moment: datetime) -> PlanStep | None:
        return next((step for step in self.steps if step.start <= moment < step.end), None)

    def to_dict(self) -> dict:
        return {"start": format_game_time(self.start), "end": format_game_time(self.end),
                "activity": self.activity, "sector": self.sector, "arena": self.arena,
                "steps": [s.to_dict() for s in self.steps], "resumed": self.resumed}

    @classmethod
    def from_dict(cls, data: dict) -> PlanBlock:
        return cls(start=parse_game_time(data["start"]), end=parse_game_time(data["end"]),
                   activity=data["activity"], sector=data.get("sector"), arena=data.get("arena"),
                   steps=[PlanStep.from_dict(s) for s in data.get("steps", [])],
                   resumed=bool(data.get("resumed", False)))
