"""The paper's end-to-end measures (section 7.1), as pure functions of memories, labelled
answers and town events: whether a "yes" is backed by a memory (the hallucination check),
network density and what it gained and lost, and who came to a gathering. Who heard of an event
from whom lives in townbot/town/news.py, which the live `/event status` shares.

No model calls and no I/O here: the runner gathers the inputs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from townbot.mind.memory import Memory
from townbot.town.news import Heard, TrackedEvent
from townbot.world.clock import parse_game_time
from townbot.world.events import TownEvent


def backing_memory(memories: Sequence[Memory], patterns: Iterable[re.Pattern[str]],
                   kinds: tuple[str, ...] | None = None) -> Memory | None:
    """The first memory that mentions the subject: what makes a "yes" not a hallucination."""
    wanted = tuple(patterns)
    return next((m for m in memories if (kinds is None or m.kind in kinds)
                 and all(p.search(m.text) for p in wanted)), None)


def name_patterns(person: str, people: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    """A person is mentioned by full name, or by first name when no one else shares it."""
    first = person.split()[0]
    if sum(p.split()[0] == first for p in people) == 1:
        return (re.compile(rf"\b{re.escape(first)}\b"),)
    return (re.compile(re.escape(person)),)


# --- labelled answers ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Checked:
    """One labelled yes/no answer with its hallucination check."""

    resident: str
    subject: str  # the event key, or the person asked about
    answer: str
    said_yes: bool
    backing_id: int | None  # the memory that backs a yes (or would have backed one)
    backing_text: str | None = None
    unmet: tuple[str, ...] = ()  # people the answer claims to have met with no memory of it
    town_guard: bool = False  # the town would have answered "I don't know them" unasked

    @property
    def claims(self) -> bool:
        """The answer claims something: knowing the subject, or a meeting."""
        return self.said_yes or bool(self.unmet)

    @property
    def hallucinated(self) -> bool:
        """A yes no memory backs, or a claimed meeting no memory backs."""
        return (self.said_yes and self.backing_id is None) or bool(self.unmet)

    @property
    def stopped_by_guards(self) -> bool:
        """With the town's guards on, this answer would not have been given."""
        return self.town_guard or bool(self.unmet)


@dataclass(frozen=True)
class Awareness:
    asked: int
    said_yes: int
    hallucinated: int
    residents: tuple[str, ...]  # who said yes with a backing memory

    @property
    def share(self) -> float:
        """Share of residents who know, counting only answers backed by a memory."""
        return len(self.residents) / self.asked if self.asked else 0.0


def awareness(checked: Sequence[Checked]) -> Awareness:
    knowing = tuple(sorted(c.resident for c in checked if c.said_yes and not c.hallucinated))
    return Awareness(len(checked), sum(c.said_yes for c in checked),
                     sum(c.hallucinated for c in checked), knowing)


@dataclass(frozen=True)
class Network:
    residents: tuple[str, ...]
    edges: tuple[tuple[str, str], ...]  # undirected, each pair sorted

    @property
    def density(self) -> float:
        """The paper's eta = 2|E| / (|V| (|V| - 1))."""
        count = len(self.residents)
        return 2 * len(self.edges) / (count * (count - 1)) if count > 1 else 0.0


def network(residents: Sequence[str], knows: Mapping[tuple[str, str], bool]) -> Network:
    """An undirected edge where both know of each other (answers that were hallucinated count
    as not knowing)."""
    names = tuple(sorted(residents))
    edges = tuple((a, b) for i, a in enumerate(names) for b in names[i + 1:]
                  if knows.get((a, b)) and knows.get((b, a)))
    return Network(names, edges)


@dataclass(frozen=True)
class Hallucinations:
    """The paper's "1.3% (n=6) of 453": hallucinated answers among the answers that claim
    something, as the model said them (unguarded) and as the town's guards would have left them."""

    hallucinated: int
    claims: int
    said_yes: int
    guarded_hallucinated: int  # those the guards would not have stopped
    guarded_claims: int

    @property
    def share(self) -> float:
        return self.hallucinated / self.claims if self.claims else 0.0

    @property
    def guarded_share(self) -> float:
        return self.guarded_hallucinated / self.guarded_claims if self.guarded_claims else 0.0


def count_hallucinations(checked: Sequence[Checked]) -> Hallucinations:
    claims = [c for c in checked if c.claims]
    kept = [c for c in claims if not c.stopped_by_guards]
    return Hallucinations(sum(c.hallucinated for c in claims), len(claims),
                          sum(c.said_yes for c in checked), sum(c.hallucinated for c in kept),
                          len(kept))


@dataclass(frozen=True)
class NetworkChange:
    gained: tuple[tuple[str, str], ...]
    lost: tuple[tuple[str, str], ...]


def network_change(start: Network, end: Network) -> NetworkChange:
    """Pairs that know each other at the end but not at the start, and the other way round."""
    before, after = set(start.edges), set(end.edges)
    return NetworkChange(tuple(sorted(after - before)), tuple(sorted(before - after)))


# --- attendance ----------------------------------------------------------------------------------


@dataclass
class Presence:
    """When each resident was at a place, rebuilt from the town's events."""

    intervals: dict[str, list[tuple[datetime, datetime]]] = field(default_factory=dict)

    def present_during(self, resident: str, start: datetime, end: datetime) -> bool:
        return any(a < end and b > start for a, b in self.intervals.get(resident, []))


def presence(events: Sequence[TownEvent], channel: str, until: datetime,
             residents: Iterable[str]) -> Presence:
    """A resident is at a place from their first event there (an action or speech in its
    channel) until they walk off anywhere or act in another channel."""
    people = set(residents)
    here: dict[str, datetime] = {}
    result = Presence()
    for event in events:
        who = event.actor
        if who not in people or event.kind not in ("action", "speech", "move"):
            continue
        when = parse_game_time(event.game_time)
        inside = event.channel == channel and event.kind != "move"
        if inside and who not in here:
            here[who] = when
        elif not inside and who in here:
            result.intervals.setdefault(who, []).append((here.pop(who), when))
    for who, since in here.items():
        result.intervals.setdefault(who, []).append((since, until))
    return result


@dataclass(frozen=True)
class Attendance:
    invited: tuple[str, ...]  # knew of it (backed by memory) before it began; not the host
    came: tuple[str, ...]  # invited and present during the window
    uninvited: tuple[str, ...]  # present without having heard of it
    reached: bool  # whether the town's clock got past the start of the gathering


def attendance(heard: Sequence[Heard], where: Presence, event: TrackedEvent,
               now: datetime) -> Attendance | None:
    window = event.window
    if window is None:
        return None
    start, end = window
    invited = tuple(sorted(h.resident for h in heard
                           if h.time < start and h.resident != event.originator))
    present = {who for who in where.intervals if who != event.originator
               and where.present_during(who, start, end)}
    return Attendance(invited, tuple(sorted(present & set(invited))),
                      tuple(sorted(present - set(invited))), now > start)


