"""What every platform and `TownService` say to each other: who asks (`Person`), what comes
back (`Outcome`, or `TownError` when a use case is refused), how long each text may be
(`LIMITS`, `bounded`), and the close names a refusal suggests (`closest_names`)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from townbot.prompting import NAME_LIMIT
from townbot.text import clean_text, shows_nothing
from townbot.world.events import TownEvent

LIMITS = {"name": NAME_LIMIT, "description": 120, "say": 500, "whisper": 300, "interview": 500,
          "state": 80, "seed": 600, "announce": 500, "query": 200}
# What each bounded text is called when it is missing.
EMPTY = {"name": "a name is missing", "description": "a description is missing",
         "say": "there is nothing to say", "whisper": "there is nothing to whisper",
         "interview": "the question is missing", "state": "the new state is missing",
         "seed": "the intent is missing", "announce": "the announcement is empty",
         "query": "the memory query is empty"}
SPEED_RANGE = (0.0, 3600.0)  # real seconds per tick
DISPLAY_LIMIT = 80  # characters of a platform's display name kept (Discord allows 32)
ANONYMOUS = "someone"  # a display name that would show as nothing


class TownError(Exception):
    """A use case was refused; the message says what was wrong and what would be right."""


def display_name(name: str) -> str:
    """A platform's display name as the town shows it: cleaned at the door (direction marks
    out), on one line, bounded; blank ones become ANONYMOUS."""
    flat = " ".join(clean_text(name).split())
    if shows_nothing(flat):
        return ANONYMOUS
    return flat if len(flat) <= DISPLAY_LIMIT else flat[:DISPLAY_LIMIT - 1] + "…"


@dataclass(frozen=True)
class Person:
    id: str  # platform-qualified, e.g. "console:local" or "discord:1234"
    name: str  # a platform's display name: a person's text, cleaned as it is made
    moderator: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", display_name(self.name))

    @property
    def role(self) -> str:
        return "moderator" if self.moderator else "everyone"


@dataclass
class Outcome:
    text: str
    events: list[TownEvent] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


def bounded(text: str, what: str) -> str:
    """People's text cleaned at the door (townbot.text), flattened and within its limit; a
    text that would show as blank (only invisible characters) is empty."""
    flat = " ".join(clean_text(text or "").split())
    if shows_nothing(flat):
        raise TownError(f"{EMPTY[what]}; write some text (up to {LIMITS[what]} characters)")
    if len(flat) > LIMITS[what]:
        raise TownError(f"the {what} is {len(flat)} characters long; the limit is "
                        f"{LIMITS[what]}")
    return flat


def closest_names(name: str, options: list[str], aliases: dict[str, str] | None = None) -> str:
    """' (did you mean 'X' or 'Y'?)', or ''. Compared without case; `aliases` maps other forms
    of a name (a first name) to the name to suggest."""
    forms = {o.lower(): o for o in options} | {a.lower(): o for a, o in (aliases or {}).items()}
    close = difflib.get_close_matches(name.strip().lower(), list(forms), n=6, cutoff=0.4)
    matches = list(dict.fromkeys(forms[c] for c in close))[:3]
    return f" (did you mean {' or '.join(repr(m) for m in matches)}?)" if matches else ""
