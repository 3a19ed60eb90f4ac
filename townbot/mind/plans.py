"""The plan data an agent carries through the day: blocks of the hourly schedule and their steps."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from townbot.world.clock import format_game_time, parse_game_time

# A plan is stored whenever any of it changes, but most of its blocks and steps are as they
# were: their JSON is kept, keyed by their values (so a changed step simply misses), rather
# than encoded again. Enough entries for every step of a hundred residents' days.
JSON_CACHE = 1 << 15


@dataclass
class PlanStep:
    start: datetime
    end: datetime
    action: str
    object: str
    object_state: str
    emoji: str

    def to_dict(self) -> dict:
        # Written out by hand: dataclasses.asdict deep-copies and dominated the tick's time.
        return {"start": format_game_time(self.start), "end": format_game_time(self.end),
                "action": self.action, "object": self.object, "object_state": self.object_state,
                "emoji": self.emoji}

    def __setattr__(self, name: str, value: object) -> None:
        self.__dict__.pop("_json", None)  # a changed step is encoded again
        object.__setattr__(self, name, value)

    def json(self) -> str:
        """`json.dumps(self.to_dict())`, kept on the step until one of its fields is set."""
        text = self.__dict__.get("_json")
        if text is None:
            text = self.__dict__["_json"] = _step_json(
                self.start, self.end, self.action, self.object, self.object_state, self.emoji)
        return text

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
        return next((s for s in self.steps if s.start <= moment < s.end), None)

    def to_dict(self) -> dict:
        return {"start": format_game_time(self.start), "end": format_game_time(self.end),
                "activity": self.activity, "sector": self.sector, "arena": self.arena,
                "steps": [s.to_dict() for s in self.steps], "resumed": self.resumed}

    def __setattr__(self, name: str, value: object) -> None:
        self.__dict__.pop("_head", None)  # a changed block is encoded again
        object.__setattr__(self, name, value)

    def json(self) -> str:
        """`json.dumps(self.to_dict())`, from the kept JSON of its steps and of its other fields
        (kept on the block until one of its fields is set)."""
        head = self.__dict__.get("_head")
        if head is None:
            head = self.__dict__["_head"] = _block_head(self.start, self.end, self.activity,
                                                        self.sector, self.arena)
        steps = ", ".join([step.json() for step in self.steps])
        return f"{head}{steps}], \"resumed\": {'true' if self.resumed else 'false'}}}"

    @classmethod
    def from_dict(cls, data: dict) -> PlanBlock:
        return cls(start=parse_game_time(data["start"]), end=parse_game_time(data["end"]),
                   activity=data["activity"], sector=data.get("sector"), arena=data.get("arena"),
                   steps=[PlanStep.from_dict(s) for s in data.get("steps", [])],
                   resumed=bool(data.get("resumed", False)))


@lru_cache(maxsize=JSON_CACHE)
def _step_json(start: datetime, end: datetime, action: str, object: str, object_state: str,
               emoji: str) -> str:
    return json.dumps(PlanStep(start, end, action, object, object_state, emoji).to_dict())


@lru_cache(maxsize=JSON_CACHE)
def _block_head(start: datetime, end: datetime, activity: str, sector: str | None,
                arena: str | None) -> str:
    """A block's JSON up to the opening bracket of its steps (the fields before them)."""
    fields = json.dumps({"start": format_game_time(start), "end": format_game_time(end),
                         "activity": activity, "sector": sector, "arena": arena})
    return f'{fields[:-1]}, "steps": ['
