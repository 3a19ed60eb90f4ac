"""Where a resident is and what it is visibly doing: the engine's side of an agent."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from townbot.json_parts import json_text
from townbot.world.clock import format_game_time, parse_game_time


@dataclass
class Body:
    """Every assignment that changes a field marks the body dirty, so a commit writes only the
    bodies that changed (`take_change`). A body made afresh is dirty; one loaded is clean."""

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

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get(name, _UNSET) != value:
            self.__dict__["dirty"] = True
        self.__dict__[name] = value

    @property
    def dirty(self) -> bool:
        return self.__dict__.get("dirty", True)

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
        """The stored form (JSON) if the body changed since the last call; clears the mark.
        It is json.dumps(to_dict()) written out: most bodies change at every tick, and
        json.dumps's set-up cost more than the few texts it writes."""
        if not self.dirty:
            return None
        values = self.__dict__
        values["dirty"] = False
        return "{" + ", ".join([f"{key}{json_text(values[name])}" for name, key in _KEYS]) + "}"

    @classmethod
    def from_dict(cls, data: dict) -> Body:
        body = cls(**{k: v for k, v in data.items() if k in FIELDS})
        body.__dict__["dirty"] = False  # as stored
        return body


_UNSET = object()
FIELDS = tuple(f.name for f in fields(Body))
_KEYS = [(name, f"{json.dumps(name)}: ") for name in FIELDS]
