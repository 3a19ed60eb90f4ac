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
        """Say that this part changed and must be written at the next commit."""
        self.dirty = True

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def encode(self) -> str:
        """The stored form."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Part:
        raise NotImplementedError


# A part whose changes are logged (AttentionState, PlanState) is stored whole again after
# this many logged commits: its log then starts afresh from the part as stored.
LOG_LIMIT = 24


@dataclass(frozen=True)
class LogRow:
    """One commit's change of a logged part, stored in the part_log table (migration 7): its
    position `n` in the resident's log of that part, and the change as JSON."""

    n: int
    change: str


def apply_logs(mind: dict[str, Any]) -> dict[str, Any]:
    """A flat mind dict as stored (the parts' keys merged) made whole: the rows logged of the
    attention and planning parts since they were stored ("sight_log", "plan_log": (n, change)
    in order of n, as the store reads them) are applied to the parts' keys and taken out, and
    the number of each log's next row is left beside its start ("..._log_next"). Rows before
    a log's start are left over from an earlier base and skipped (the store drops them once a
    game day)."""
    for log, apply in (("sight_log", _apply_sights), ("plan_log", _apply_plan)):
        start = int(mind.get(f"{log}_from", 0))
        following = start
        for n, change in mind.pop(log, None) or []:
            following = max(following, n + 1)
            if n >= start:
                apply(mind, json.loads(change))
        mind[f"{log}_next"] = following
    return mind


def _apply_sights(mind: dict[str, Any], change: list[Any]) -> None:
    """One logged change of the attention part, as its commit found the sight table."""
    seen, texts, gone, step = change
    sights = mind.setdefault("sights", {})
    for text in gone:
        sights.pop(text, None)
    for text in texts:
        sights[text] = seen
    if step is not None:
        mind["last_step"] = step


def _apply_plan(mind: dict[str, Any], change: list[Any]) -> None:
    """One logged change of the planning part: blocks [start, stop) of the plan as it was
    become the logged blocks; the other fields are given when they changed."""
    head, start, stop, blocks = change
    if head is not None:
        mind["day"], mind["day_plan"], mind["notable"], mind["last_revision"] = head
    mind.setdefault("blocks", [])[start:stop] = blocks


@dataclass
class PlanState(Part):
    """Planning (mind/planning.py): today's plan and its revision after news.

    A plan changes a block at a time (a block decomposed into steps, a reaction cut in), but
    stored whole it is encoded and compressed whole each time. So the part as stored is a
    base, and each commit logs the blocks it replaced (and the other fields, when they
    changed), which loading applies in order; after LOG_LIMIT logged commits the part is
    stored whole again (`log_from`: where its log starts; `next_n`: the next row's number;
    `based`: whether the part was ever stored whole)."""

    name: ClassVar[str] = "planning"
    day: date | None = None
    day_plan: list[str] = field(default_factory=list)
    blocks: list[PlanBlock] = field(default_factory=list)
    notable: list[str] = field(default_factory=list)  # important news since the last revision
    last_revision: datetime | None = None
    log_from: int = field(default=0, compare=False, repr=False)
    next_n: int = field(default=0, compare=False, repr=False)
    based: bool = field(default=False, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"day": self.day.isoformat() if self.day else None, "day_plan": self.day_plan,
                "blocks": [b.to_dict() for b in self.blocks], "notable": self.notable,
                "last_revision": _text(self.last_revision), "plan_log_from": self.log_from}

    def _head(self) -> list[Any]:
        """The fields beside the blocks, as a log row carries them (copies of the lists)."""
        return [self.day.isoformat() if self.day else None, list(self.day_plan),
                list(self.notable), _text(self.last_revision)]

    def take_log(self) -> list[LogRow] | None:
        """The log row of what changed since the last call (none if nothing did), or None when
        the whole part is to be stored instead (never stored whole, or a full log)."""
        head, blocks = self._head(), [block.to_dict() for block in self.blocks]
        before = self.__dict__.get("_stored")
        self._stored = head, blocks
        if before == (head, blocks) and self.based:
            return []
        if before is None or not self.based or self.next_n - self.log_from >= LOG_LIMIT:
            self.log_from, self.based = self.next_n, True
            return None
        old_head, old = before
        # The blocks that changed: those between the first and the last that differ.
        shorter = min(len(old), len(blocks))
        start = 0
        while start < shorter and old[start] == blocks[start]:
            start += 1
        end = 0  # blocks kept at the end
        while end < shorter - start and old[-1 - end] == blocks[-1 - end]:
            end += 1
        change = [None if head == old_head else head, start, len(old) - end,
                  blocks[start:len(blocks) - end]]
        self.next_n += 1
        return [LogRow(self.next_n - 1, json.dumps(change))]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanState:
        """From a flat mind dict with its logs applied (see apply_logs)."""
        day, stored = data.get("day"), data.get("blocks", [])
        plan = cls(date.fromisoformat(day) if day else None, list(data.get("day_plan", [])),
                   [PlanBlock.from_dict(b) for b in stored], list(data.get("notable", [])),
                   _time(data.get("last_revision")))
        plan.log_from = int(data.get("plan_log_from", 0))
        plan.next_n, plan.based = int(data.get("plan_log_next", plan.log_from)), True
        plan._stored = plan._head(), list(stored)  # as take_log compares it
        return plan


@dataclass
class Refusal:
    until: datetime
    reason: str


@dataclass
class PlaceKnowledge(Part):
    """Acting (mind/acting.py): the places known, and those the world just refused."""

    name: ClassVar[str] = "places"
    known: dict[str, list[str]] = field(default_factory=dict)
    refused: dict[str, Refusal] = field(default_factory=dict)  # "Sector: arena" -> why, until

    def to_dict(self) -> dict[str, Any]:
        return {"known": self.known, "refused": {
            key: f"{format_game_time(r.until)}|{r.reason}" for key, r in self.refused.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlaceKnowledge:
        refused = {}
        for key, text in data.get("refused", {}).items():
            until, _, reason = text.partition("|")
            refused[key] = Refusal(parse_game_time(until), reason)
        return cls({k: list(v) for k, v in data.get("known", {}).items()}, refused)


class SightTable(dict[str, datetime]):
    """What was seen -> when, noting what changed since the changes were last taken: the texts
    set (in the order first set, each with its time, so that taking them needs no lookup a
    text) and the texts deleted."""

    def __init__(self, entries: Mapping[str, datetime] | None = None) -> None:
        super().__init__()
        self.stamped: dict[str, datetime] = {}
        self.gone: dict[str, None] = {}
        for text, seen in (entries or {}).items():
            super().__setitem__(text, seen)

    # dict's own methods named, not super()'s: a resident sets and deletes several entries a
    # tick, and super() makes an object at each call.
    def __setitem__(self, text: str, seen: datetime) -> None:
        dict.__setitem__(self, text, seen)
        self.stamped[text] = seen

    def __delitem__(self, text: str) -> None:
        dict.__delitem__(self, text)
        self.stamped.pop(text, None)
        self.gone[text] = None

    def pop(self, text: str, *default: Any) -> Any:
        if text in self:
            self.stamped.pop(text, None)
            self.gone[text] = None
        return super().pop(text, *default)

    def clear(self) -> None:
        self.gone.update(dict.fromkeys(self))
        self.stamped.clear()
        super().clear()

    def _unsupported(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a sight table changes one entry at a time (set, del, pop, clear)")

    update = setdefault = popitem = __ior__ = _unsupported  # type: ignore[assignment]

    def take_changes(self) -> tuple[list[tuple[datetime, list[str]]], list[str]]:
        """(when, texts set to it) in the order set, and the texts deleted, since the last call
        (a deleted text set again is in both: deletions come first)."""
        stamped, gone = self.stamped, list(self.gone)
        self.stamped, self.gone = {}, {}
        if not stamped:
            return [], gone
        times = set(stamped.values())
        if len(times) == 1:  # a tick stamps what it sees with one time (nearly always)
            return [(times.pop(), list(stamped))], gone
        by_time: dict[datetime, list[str]] = {}
        for text, seen in stamped.items():
            by_time.setdefault(seen, []).append(text)
        return list(by_time.items()), gone


@dataclass
class AttentionState(Part):
    """Attention (mind/attention.py): when each sight was last seen; the last own action noted.

    Every awake resident restamps what it sees at every tick, so stored whole the table would
    be encoded, compressed and written each time. Instead the part as stored is a base, and
    each commit logs what changed since (texts seen, texts forgotten, the new last step), which
    loading applies in order; after LOG_LIMIT logged commits the part is stored whole again
    (`log_from`, `next_n`, `based`: as in PlanState)."""

    name: ClassVar[str] = "attention"
    sights: dict[str, datetime] = field(default_factory=dict)
    last_step: str | None = None
    log_from: int = field(default=0, compare=False, repr=False)
    next_n: int = field(default=0, compare=False, repr=False)
    based: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.sights, SightTable):
            self.sights = SightTable(self.sights)
        self._stored_step = self.last_step

    def to_dict(self) -> dict[str, Any]:
        return {"sights": _texts(self.sights), "last_step": self.last_step,
                "sight_log_from": self.log_from}

    def take_log(self) -> list[LogRow] | None:
        """The log rows of what changed since the last call, or None when the whole part is to
        be stored instead (never stored whole, a full log, or a step changed to None); either
        way the changes are taken."""
        sights, step = self.sights, self.last_step
        step_changed = step != self._stored_step
        self._stored_step = step
        if not isinstance(sights, SightTable):  # a plain dict put in its place
            self.sights = SightTable(sights)
            self.log_from, self.based = self.next_n, True
            return None
        seen, gone = sights.take_changes()
        if self.based and not (seen or gone or step_changed):
            return []
        if not self.based or self.next_n - self.log_from >= LOG_LIMIT or (
                step_changed and step is None):
            self.log_from, self.based = self.next_n, True
            return None
        # A change is [seen, texts, gone, step]; what was forgotten and the new step go with
        # the first.
        first_step = step if step_changed else None
        n = self.next_n
        if not seen:  # forgotten, or a new step, nothing seen
            changes = [["", [], gone, first_step]]
        else:
            changes = [[format_game_time(seen[0][0]), seen[0][1], gone, first_step]]
            changes += [[format_game_time(when), texts, [], None] for when, texts in seen[1:]]
        rows = [LogRow(n + index, json.dumps(change)) for index, change in enumerate(changes)]
        self.next_n = n + len(rows)
        return rows

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AttentionState:
        """From a flat mind dict with its logs applied (see apply_logs)."""
        part = cls(_times(data.get("sights", {})), data.get("last_step"))
        part.log_from = int(data.get("sight_log_from", 0))
        part.next_n, part.based = int(data.get("sight_log_next", part.log_from)), True
        return part


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


LOGGED_PARTS = (AttentionState, PlanState)


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
    # The rows to append to each logged part's log (attention, planning), taken by the store.
    logs: dict[str, list[LogRow]] = field(default_factory=dict, compare=False, repr=False)

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
        stored as it is; the marks are cleared. The attention and planning parts are mostly
        logged instead (see their classes and `take_logs`). A commit that then fails must
        reload the mind from the store (the engine does), since the marks are gone."""
        if CHECK_UNMARKED:
            self._check_unmarked()
        changed: dict[str, str] = {}
        saved = self.saved
        for part in self.parts():
            if not part.dirty:
                continue
            part.dirty = False
            if isinstance(part, LOGGED_PARTS):
                if self._logged(part):
                    continue
                changed[part.name] = saved[part.name] = part.encode()  # a new base is stored
                continue
            text = part.encode()
            if saved.get(part.name) != text:
                changed[part.name] = saved[part.name] = text
        return changed

    def _logged(self, part: AttentionState | PlanState) -> bool:
        """Take a logged part's changes as log rows; False when the whole part is to be stored
        instead (its log then starts afresh)."""
        rows = part.take_log()
        if rows is None:
            return False
        if rows:
            self.logs.setdefault(part.name, []).extend(rows)
        if CHECK_UNMARKED:  # what a reload gives, for the check of unmarked changes
            self.saved[part.name] = part.encode()
        return True

    def take_logs(self) -> dict[str, list[LogRow]]:
        """The rows to append to each logged part's log since the last call."""
        taken, self.logs = self.logs, {}
        return taken

    def log_starts(self) -> dict[str, int]:
        """Where each logged part's log starts: earlier rows are left over from older bases."""
        return {part.name: part.log_from for part in (self.attention, self.planning)}

    def _check_unmarked(self) -> None:
        for part in self.parts():
            if not part.dirty and part.name in self.saved and \
                    part.encode() != self.saved[part.name]:
                raise AssertionError(f"the {part.name} part changed without being marked")

