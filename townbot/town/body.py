"""Where a resident is and what it is visibly doing: the engine's side of an agent."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from townbot.world.clock import format_game_time, parse_game_time


@dataclass
class Body:
    """A commit writes only the bodies whose fields differ from what it last wrote of them
    (`take_change`): a body made afresh is written, one loaded is as stored."""

    sector: str | None
    arena: str | None
    action: str = "sleeping"
    emoji: str = "😴"
    object_path: str | None = None
    object_state: str | None = None
    travel_sector: str | None = None
    travel_arena: str | None = None
    arrive_at: str | None = None
    announced: str | None = None
    visitor: str | None = None  # a person's one-line description; None for residents

    def __post_init__(self) -> None:
        # The fields as last written, compared at each commit: a body changes in many places
        # during a tick, so comparing once beats marking it at every assignment.
        self._written: dict[str, Any] | None = None

    @property
    def walking(self) -> bool:
        return self.travel_sector is not None

    @property
    def place(self) -> str:
        if self.walking:
            return f"on the way to {self.travel_sector}"
        return f"{self.sector}: {self.arena}"

    def arrive(self) -> None:
        self.sector, self.arena = self.travel_sector, self.travel_arena
        self.travel_sector = self.travel_arena = self.arrive_at = None

    def arrives_by(self, moment: datetime) -> bool:
        return self.arrive_at is not None and parse_game_time(self.arrive_at) <= moment

    def set_travel(self, sector: str, arena: str, arrive_at: datetime) -> None:
        self.travel_sector, self.travel_arena = sector, arena
        self.arrive_at = format_game_time(arrive_at)
        self.sector = self.arena = None

    def to_dict(self) -> dict:
        return {name: self.__dict__[name] for name in FIELDS}

    def take_change(self) -> str | None:
        """The stored form (JSON) if a field changed since the last call (or since loading)."""
        values = self.to_dict()
        if values == self._written:
            return None
        self._written = values
        return json.dumps(values)

    @classmethod
    def from_dict(cls, data: dict) -> Body:
        body = cls(**{k: v for k, v in data.items() if k in FIELDS})
        body._written = body.to_dict()  # as stored
        return body


FIELDS = tuple(f.name for f in fields(Body))
