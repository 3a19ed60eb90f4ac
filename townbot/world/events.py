"""Town events: what happened, where, to be shown in a channel and kept for replay."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TownEvent:
    game_time: str
    channel: str
    kind: str  # action | move | speech | object | announcement | notice
    actor: str
    text: str
    emoji: str = ""
    place: str = ""

    def line(self) -> str:
        """One transcript line: time, emoji, who, what, where."""
        clock = self.game_time[-5:]
        emoji = f"{self.emoji} " if self.emoji else ""
        where = f"  [{self.place}]" if self.place else ""
        if self.kind == "speech":
            return f'{clock} {emoji}{self.actor}: "{self.text}"{where}'
        return f"{clock} {emoji}{self.actor} {self.text}{where}"
