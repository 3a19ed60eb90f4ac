"""The paper's end-to-end measures (section 7.1), as pure functions of memories, labelled
answers and town events: whether a "yes" is backed by a memory (the hallucination check),
network density, and who came to a gathering. Who heard from whom is in townbot/town/news.py.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from townbot.mind.memory import Memory
from townbot.town.news import Heard, TrackedEvent
from townbot.world.clock import parse_game_time
from townbot.world.events import TownEvent

Spans = dict[str, list[tuple[datetime, datetime]]]  # resident -> (arrived, left) at a place


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

    def report(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "unmet": list(self.unmet),
                "hallucinated": self.hallucinated}


def awareness(checked: Sequence[Checked]) -> dict[str, Any]:
    """Who knows of an event: the share counts only answers backed by a memory."""
    knowing = sorted(c.resident for c in checked if c.said_yes and not c.hallucinated)
    return {"share": round(len(knowing) / len(checked), 3) if checked else 0.0,
            "knowing": len(knowing), "asked": len(checked),
            "said_yes": sum(c.said_yes for c in checked),
            "hallucinated": sum(c.hallucinated for c in checked), "residents": knowing,
            "answers": [c.report() for c in checked]}


def hallucinations(checked: Sequence[Checked]) -> dict[str, Any]:
    """The paper's "1.3% (n=6) of 453": hallucinated answers among the answers that claim
    something, as the model said them (unguarded) and as the town's guards would have left them."""
    claims = [c for c in checked if c.claims]
    kept = [c for c in claims if not c.stopped_by_guards]
    found, kept_found = sum(c.hallucinated for c in claims), sum(c.hallucinated for c in kept)
    return {"hallucinated": found, "claims": len(claims),
            "said_yes": sum(c.said_yes for c in checked),
            "share": round(found / len(claims), 4) if claims else 0.0,
            "guarded": {"hallucinated": kept_found, "claims": len(kept),
                        "share": round(kept_found / len(kept), 4) if kept else 0.0}}


def known_pairs(residents: Sequence[str],
                knows: Mapping[tuple[str, str], bool]) -> list[tuple[str, str]]:
    """The network's undirected edges, each pair sorted: both know of each other (answers that
    were hallucinated count as not knowing)."""
    names = sorted(residents)
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
            if knows.get((a, b)) and knows.get((b, a))]


def density(residents: int, edges: int) -> float:
    """The paper's eta = 2|E| / (|V| (|V| - 1))."""
    return 2 * edges / (residents * (residents - 1)) if residents > 1 else 0.0


def presence(events: Sequence[TownEvent], channel: str, until: datetime,
             residents: Iterable[str]) -> Spans:
    """When each resident was at a place: from their first event there (an action or speech in
    its channel) until they walk off anywhere or act in another channel."""
    people = set(residents)
    here: dict[str, datetime] = {}
    spans: Spans = {}
    for event in events:
        who = event.actor
        if who not in people or event.kind not in ("action", "speech", "move"):
            continue
        when = parse_game_time(event.game_time)
        inside = event.channel == channel and event.kind != "move"
        if inside and who not in here:
            here[who] = when
        elif not inside and who in here:
            spans.setdefault(who, []).append((here.pop(who), when))
    for who, since in here.items():
        spans.setdefault(who, []).append((since, until))
    return spans


def attendance(heard: Sequence[Heard], where: Spans, event: TrackedEvent,
               now: datetime) -> dict[str, Any] | None:
    """Who was invited (knew of it, backed by memory, before it began; not the host), who of
    them came (present during the window), who came without having heard of it, and whether
    the town's clock got past its start."""
    if event.window is None:
        return None
    start, end = event.window
    invited = sorted(h.resident for h in heard if h.time < start and h.resident != event.originator)
    present = {who for who, spans in where.items() if who != event.originator
               and any(a < end and b > start for a, b in spans)}
    return {"invited": invited, "came": sorted(present & set(invited)),
            "uninvited": sorted(present - set(invited)), "reached": now > start}
