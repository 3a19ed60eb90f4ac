"""Where a resident is and what it is visibly doing: the engine's side of an agent."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from townbot.world.clock import format_game_time, parse_game_time


@dataclass
class Body:
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
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Body:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
