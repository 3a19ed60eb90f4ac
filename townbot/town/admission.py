"""Who may use a use case, and when: moderators' use cases, a paused town, and each person's
rate limits; and how a use case's arguments are kept in the audit log."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from townbot.text import clean_text
from townbot.town.requests import Person, TownError

MODERATOR_ONLY = frozenset({"seed", "scenario", "announce", "pause", "resume", "speed", "memories",
                            "takeover", "event_status", "web_rotate", "web_close"})
USE_CASES = ("join", "say", "go", "leave", "takeover", "whisper", "interview", "set", "look",
             "seed", "scenario", "announce", "pause", "resume", "speed", "status", "where",
             "profile", "memories", "event_status", "web_link", "web_rotate", "web_close")
CHANGES_THE_TOWN = frozenset({"join", "say", "go", "takeover", "whisper", "interview", "set",
                              "seed", "scenario", "announce"})
# Use cases that only read the town, each in one synchronous step (see TownService._run).
READ_OUTS = frozenset({"status", "where", "look", "profile"})


@dataclass
class RateLimit:
    """At most `count` uses per `seconds` of real time, per person and use case."""

    count: int
    seconds: float


# Every use case that costs model calls or posts to a platform has a limit: one person's
# join-and-leave loop would otherwise queue thousands of posts and audit rows.
DEFAULT_RATES = {"whisper": RateLimit(3, 60), "set": RateLimit(5, 60),
                 "interview": RateLimit(5, 60), "say": RateLimit(10, 60),
                 "join": RateLimit(3, 60), "leave": RateLimit(3, 60), "go": RateLimit(10, 60),
                 "announce": RateLimit(5, 60), "scenario": RateLimit(3, 60)}


class Admission:
    """Admits a person's use case or refuses it with a `TownError` saying why and what to do;
    counts the uses that were accepted toward their rate limits."""

    def __init__(self, permissions: dict[str, str] | None, rates: dict[str, RateLimit] | None,
                 now: Callable[[], float]) -> None:
        self.permissions = {case: ("moderator" if case in MODERATOR_ONLY else "everyone")
                            for case in USE_CASES}
        self.permissions.update(permissions or {})
        self.rates = dict(DEFAULT_RATES if rates is None else rates)
        self.now = now  # real seconds
        self.uses: dict[tuple[str, str], deque[float]] = defaultdict(deque)

    def admit(self, case: str, person: Person, *, paused: bool) -> None:
        if self.permissions.get(case) == "moderator" and not person.moderator:
            raise TownError(f"only moderators may use {case}; ask a moderator")
        if paused and case in CHANGES_THE_TOWN:
            raise TownError("the town is paused; a moderator can resume it")
        limit = self.rates.get(case)
        if limit is None:
            return
        uses = self.uses[(person.id, case)]
        moment = self.now()
        while uses and moment - uses[0] >= limit.seconds:
            uses.popleft()
        if len(uses) >= limit.count:
            wait = int(limit.seconds - (moment - uses[0])) + 1
            raise TownError(f"you have used {case} {limit.count} times in the last "
                            f"{int(limit.seconds)} s; try again in {wait} s")

    def count(self, case: str, person: Person) -> None:
        if case in self.rates:
            self.uses[(person.id, case)].append(self.now())


AUDIT_TEXT = 600  # characters of one argument kept in the audit log


def audited(value: Any) -> Any:
    """An argument as the audit log keeps it: cleaned, and cut to AUDIT_TEXT characters with
    its full length noted, so a flood of text is recorded without being stored."""
    if not isinstance(value, str):
        return value
    text = clean_text(value)
    if len(text) <= AUDIT_TEXT:
        return text
    return f"{text[:AUDIT_TEXT]}… [{len(text)} characters in all]"
