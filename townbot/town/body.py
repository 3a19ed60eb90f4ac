"""Where a resident is and what it is visibly doing: the engine's side of an agent."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import datetime
from itertools import compress, count
from operator import itemgetter, ne
from typing import Any

from townbot.json_parts import json_text
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
        # The fields' values last written, compared at each commit: cheaper than marking the
        # body at every assignment (a tick sets a body's fields several times, mostly anew).
        self._written: tuple[Any, ...] | None = None
        # Each field's '"name": value' as last written: a commit encodes only the fields that
        # changed (mostly the action and its emoji) and joins the rest as they were.
        self._pieces: list[str] | None = None

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
        """The stored form (JSON) if a field changed since the last call (or since loading).
        It is json.dumps(to_dict()) written out: most bodies change at every tick, and
        json.dumps's set-up cost more than the few texts it writes; only the fields that
        changed are encoded again."""
        values, written = _field_values(self.__dict__), self._written
        if values == written:
            return None
        self._written = values
        pieces = self._pieces
        if pieces is None or written is None:
            pieces = self._pieces = list(map(_piece, _KEYS, values))
        else:
            for index in compress(count(), map(ne, values, written)):
                pieces[index] = _piece(_KEYS[index], values[index])
        return "{" + ", ".join(pieces) + "}"

    @classmethod
    def from_dict(cls, data: dict) -> Body:
        body = cls(**{k: v for k, v in data.items() if k in FIELDS})
        body._written = _field_values(body.__dict__)  # as stored
        return body


def _piece(key: str, value: Any) -> str:
    """One field as json.dumps writes it in a dict: its key (with ": ") and its value."""
    return key + json_text(value)


FIELDS = tuple(f.name for f in fields(Body))
_field_values = itemgetter(*FIELDS)  # a body's fields' values, in order, from its __dict__
_KEYS = [f"{json.dumps(name)}: " for name in FIELDS]
