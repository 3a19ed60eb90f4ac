"""A mind's state, part by part. Each part belongs to the module of the paper's mechanism that
uses it, keeps typed values (datetimes, not strings) and becomes a plain dict only at the store
boundary (`to_dict`/`from_dict`, which ignores keys it does not know, so a town saved by an
older version opens).

Each part carries a dirty flag: whoever changes a part marks it (`part.mark()`), and a commit
encodes and writes only the marked parts (`MindState.take_changes`), so an unchanged part is
never serialised to find out whether it changed. A part made afresh is dirty (never saved); a
part loaded from the store is clean. With `CHECK_UNMARKED` on (the test suite turns it on),
every commit also encodes the clean parts and fails loudly if one changed without a mark.

A part's stored form uses the keys the whole mind used before parts existed, so the parts of a
mind merge into one flat dict (what `Store.agents` returns, and what export reads).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, ClassVar

from townbot.mind.plans import PlanBlock
from townbot.world.clock import format_game_time, parse_game_time

# Set by the test suite: each commit checks that no clean part differs from its stored form.
CHECK_UNMARKED = False


def _time(value: str | None) -> datetime | None:
    return parse_game_time(value) if value else None


def _text(value: datetime | None) -> str | None:
    return format_game_time(value) if value is not None else None


def _times(data: Mapping[str, str]) -> dict[str, datetime]:
    return {key: parse_game_time(value) for key, value in data.items()}


def _texts(data: Mapping[str, datetime]) -> dict[str, str]:
    return {key: format_game_time(value) for key, value in data.items()}


@dataclass
class Part:
    """What every part offers the store, and its dirty flag (set by `mark`, cleared when the
    store takes the part's changes)."""

    name: ClassVar[str]
    dirty: bool = field(default=True, compare=False, repr=False, kw_only=True)

    def mark(self) -> None:
        self.dirty = True

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def encode(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Part:
        raise NotImplementedError


@dataclass
class PlanState(Part):
    """Planning (mind/planning.py): today's plan and its revision after news."""

    name: ClassVar[str] = "planning"
    day: date | None = None
    day_plan: list[str] = field(default_factory=list)
    blocks: list[PlanBlock] = field(default_factory=list)
    notable: list[str] = field(default_factory=list)  # important news since the last revision
    last_revision: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"day": self.day.isoformat() if self.day else None, "day_plan": self.day_plan,
                "blocks": [b.to_dict() for b in self.blocks], "notable": self.notable,
                "last_revision": _text(self.last_revision)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanState:
        day = data.get("day")
        return cls(date.fromisoformat(day) if day else None, list(data.get("day_plan", [])),
                   [PlanBlock.from_dict(b) for b in data.get("blocks", [])],
                   list(data.get("notable", [])), _time(data.get("last_revision")))


@dataclass
class Refusal:
    until: datetime
    reason: str


@dataclass
class PlaceKnowledge(Part):
    """Acting (choose_place in mind/planning.py): the places known, and those the world just refused."""

    name: ClassVar[str] = "places"
    known: dict[str, list[str]] = field(default_factory=dict)
    refused: dict[str, Refusal] = field(default_factory=dict)  # "Sector: arena" -> why, until

    def to_dict(self) -> dict[str, Any]:
        return {"known": self.known, "refused": {
            key: f"{format_game_time(r.until)}|{r.reason}" for key, r in self.refused.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlaceKnowledge:
        refused = {key: text.partition("|") for key, text in data.get("refused", {}).items()}
        return cls({k: list(v) for k, v in data.get("known", {}).items()},
                   {key: Refusal(parse_game_time(until), reason)
                    for key, (until, _, reason) in refused.items()})


@dataclass
class AttentionState(Part):
    """Attention (note_sight in mind/agent.py): when each sight was last seen; the last own action noted.
    Stored by the time seen (migration 16): the sights of a time share its text, and an awake
    resident's part, written at every tick, is a fifth shorter to encode and compress."""

    name: ClassVar[str] = "attention"
    sights: dict[str, datetime] = field(default_factory=dict)
    last_step: str | None = None

    def to_dict(self) -> dict[str, Any]:
        seen_at: dict[datetime, list[str]] = {}
        for text, seen in self.sights.items():
            seen_at.setdefault(seen, []).append(text)
        return {"seen_at": {format_game_time(seen): texts for seen, texts in seen_at.items()},
                "last_step": self.last_step}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AttentionState:
        return cls({text: parse_game_time(seen) for seen, texts in data.get("seen_at", {}).items()
                    for text in texts}, data.get("last_step"))


@dataclass
class Pending:
    kind: str
    text: str
    evidence: tuple[int, ...]
    created: datetime


@dataclass
class MemoryQueue(Part):
    """The memory queue (mind/agent.py): memories waiting to be stored, ids waiting for their
    importance score, and when the last batch was scored."""

    name: ClassVar[str] = "memory_queue"
    pending: list[Pending] = field(default_factory=list)
    unscored: list[int] = field(default_factory=list)
    last_scored: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"pending": [[p.kind, p.text, list(p.evidence), format_game_time(p.created)]
                            for p in self.pending],
                "unscored": self.unscored, "last_scored": _text(self.last_scored)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryQueue:
        pending = [Pending(kind, text, tuple(evidence), parse_game_time(created))
                   for kind, text, evidence, created in data.get("pending", [])]
        return cls(pending, list(data.get("unscored", [])), _time(data.get("last_scored")))


@dataclass
class SummaryState(Part):
    """The agent summary (mind/summary.py), cached with the time it was made."""

    name: ClassVar[str] = "summary"
    summary: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SummaryState:
        return cls(data.get("summary"))


@dataclass
class ReflectionState(Part):
    """Reflection (mind/reflection.py): importance gathered since the last reflection."""

    name: ClassVar[str] = "reflection"
    importance_since_reflection: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"importance_since_reflection": self.importance_since_reflection}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReflectionState:
        return cls(int(data.get("importance_since_reflection", 0)))


@dataclass
class ReactionState(Part):
    """Reacting (mind/reacting.py): cooldowns per person and the last decision about people."""

    name: ClassVar[str] = "reacting"
    last_talked: dict[str, datetime] = field(default_factory=dict)
    last_considered: dict[str, datetime] = field(default_factory=dict)
    last_reaction_check: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"last_talked": _texts(self.last_talked),
                "last_considered": _texts(self.last_considered),
                "last_reaction_check": _text(self.last_reaction_check)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReactionState:
        return cls(_times(data.get("last_talked", {})), _times(data.get("last_considered", {})),
                   _time(data.get("last_reaction_check")))


@dataclass
class ConversationState(Part):
    """Dialogue (mind/dialogue.py): what we told each person, so we do not repeat ourselves."""

    name: ClassVar[str] = "dialogue"
    told: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"told": self.told}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConversationState:
        return cls({k: list(v) for k, v in data.get("told", {}).items()})


PART_TYPES: tuple[type[Part], ...] = (PlanState, PlaceKnowledge, AttentionState, MemoryQueue,
                                      SummaryState, ReflectionState, ReactionState,
                                      ConversationState)


@dataclass
class MindState:
    """A mind's parts. `take_changes` gives the stored form of each part marked since the last
    commit and clears the marks; `saved` keeps what was last written of each part, so a part
    marked but unchanged is not written again."""

    planning: PlanState = field(default_factory=PlanState)
    places: PlaceKnowledge = field(default_factory=PlaceKnowledge)
    attention: AttentionState = field(default_factory=AttentionState)
    queue: MemoryQueue = field(default_factory=MemoryQueue)
    summary: SummaryState = field(default_factory=SummaryState)
    reflection: ReflectionState = field(default_factory=ReflectionState)
    reacting: ReactionState = field(default_factory=ReactionState)
    dialogue: ConversationState = field(default_factory=ConversationState)
    saved: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def parts(self) -> list[Part]:
        return [self.planning, self.places, self.attention, self.queue, self.summary,
                self.reflection, self.reacting, self.dialogue]

    def to_dict(self) -> dict[str, Any]:
        """All parts merged into one flat dict (the format of a whole mind)."""
        merged: dict[str, Any] = {}
        for part in self.parts():
            merged.update(part.to_dict())
        return merged

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MindState:
        """From a flat dict of any version: each part takes its keys, unknown keys are left.
        The parts are clean: they are what the store holds."""
        state = cls(*(kind.from_dict(data) for kind in PART_TYPES))  # type: ignore[arg-type]
        for part in state.parts():
            part.dirty = False
        if CHECK_UNMARKED:
            state.saved = {part.name: part.encode() for part in state.parts()}
        return state

    def take_changes(self) -> dict[str, str]:
        """The stored form (JSON) of each part marked since the last call and not already
        stored as it is; the marks are cleared. A commit that then fails must reload the mind
        from the store (the engine does), since the marks are gone."""
        for part in self.parts():
            if CHECK_UNMARKED and not part.dirty and part.name in self.saved \
                    and part.encode() != self.saved[part.name]:
                raise AssertionError(f"the {part.name} part changed without being marked")
        changed: dict[str, str] = {}
        for part in self.parts():
            if not part.dirty:
                continue
            part.dirty = False
            text = part.encode()
            if self.saved.get(part.name) != text:
                changed[part.name] = self.saved[part.name] = text
        return changed
