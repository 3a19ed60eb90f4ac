"""The plan data an agent carries through the day: blocks of the hourly schedule and their steps."""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from townbot.json_parts import json_text
from townbot.world.clock import format_game_time, parse_game_time

# A plan is stored whenever any of it changes, but most of its blocks and steps are as they
# were: their JSON is kept, keyed by their values (so a changed step simply misses), rather
# than encoded again. Enough entries for every step of a hundred residents' days.
JSON_CACHE = 1 << 15
# A clock time a model wrote into an activity ("at 7:20 am", "from 9:00 to 10:30", "(8 pm)"),
# with the word that leads into it: the plan holds the times, the activity says what is done.
CLOCK_TIME = r"\d{1,2}(?::\d{2})?\s*(?:[ap]\.?\s?m\b\.?)|\d{1,2}:\d{2}\b"
CLOCK_PHRASE = re.compile(
    rf"\s*(?:\b(?:at|by|from|until|till|to|around|about|before|after|between|and|starting)\s+"
    rf"|[-–]\s*)?(?:{CLOCK_TIME})", re.IGNORECASE)


def without_clock_times(text: str) -> str:
    """The activity without the clock times in it ("checking the news at 7:20 am" ->
    "checking the news"); the text as it was if nothing else would be left."""
    if not any(ch.isdigit() for ch in text):
        return text
    cleaned = re.sub(r"\(\s*\)", "", CLOCK_PHRASE.sub("", text))
    cleaned = re.sub(r"\s+([,.;:!?])", r"\1", cleaned)
    cleaned = " ".join(cleaned.split()).strip(" ,;:-–")
    return cleaned if re.search(r"[A-Za-z]", cleaned) else text


@dataclass
class PlanStep:
    start: datetime
    end: datetime
    action: str
    object: str
    object_state: str
    emoji: str

    def __init__(self, start: datetime, end: datetime, action: str, object: str,
                 object_state: str, emoji: str) -> None:
        # The fields are set past __setattr__ (a new step has no JSON to clear): going through
        # it was most of the CPU of making a step, at loading and at each decomposition.
        self.__dict__.update(start=start, end=end, action=action, object=object,
                             object_state=object_state, emoji=emoji)

    def to_dict(self) -> dict:
        # Written out by hand: dataclasses.asdict deep-copies and dominated the tick's time.
        return {"start": format_game_time(self.start), "end": format_game_time(self.end),
                "action": self.action, "object": self.object, "object_state": self.object_state,
                "emoji": self.emoji}

    def __setattr__(self, name: str, value: object) -> None:
        kept = self.__dict__
        if kept.pop("_json", None) is not None:  # a changed step is encoded again, and so is
            for block in kept.pop("_in", ()):  # each block that kept JSON with it in
                if (owner := block()) is not None:
                    owner.__dict__.pop("_json", None)
        object.__setattr__(self, name, value)

    def json(self) -> str:
        """`json.dumps(self.to_dict())`, kept on the step until one of its fields is set."""
        text = self.__dict__.get("_json")
        if text is None:
            text = self.__dict__["_json"] = _step_json(
                self.start, self.end, self.action, self.object, self.object_state, self.emoji)
        return text

    @classmethod
    def from_dict(cls, data: dict) -> PlanStep:
        return cls(**{**data, "start": _time_of(data["start"]), "end": _time_of(data["end"])})


@dataclass
class PlanBlock:
    start: datetime
    end: datetime
    activity: str
    sector: str | None = None
    arena: str | None = None
    steps: list[PlanStep] = field(default_factory=list)
    resumed: bool = False  # what is left of a block after a reaction cut into it

    def __init__(self, start: datetime, end: datetime, activity: str, sector: str | None = None,
                 arena: str | None = None, steps: list[PlanStep] | None = None,
                 resumed: bool = False) -> None:
        # Set past __setattr__, as a step's are (a new block has no JSON to clear).
        self.__dict__.update(start=start, end=end, activity=activity, sector=sector, arena=arena,
                             steps=[] if steps is None else steps, resumed=resumed)

    def covers(self, moment: datetime) -> bool:
        return self.start <= moment < self.end

    def step_at(self, moment: datetime) -> PlanStep | None:
        for step in self.steps:  # a loop, not next() over a generator: asked at every step
            if step.start <= moment < step.end:
                return step
        return None

    def to_dict(self) -> dict:
        return {"start": format_game_time(self.start), "end": format_game_time(self.end),
                "activity": self.activity, "sector": self.sector, "arena": self.arena,
                "steps": [s.to_dict() for s in self.steps], "resumed": self.resumed}

    def __setattr__(self, name: str, value: object) -> None:
        self.__dict__.pop("_head", None)  # a changed block is encoded again
        self.__dict__.pop("_json", None)
        object.__setattr__(self, name, value)

    def json(self) -> str:
        """`json.dumps(self.to_dict())`, kept on the block until one of its fields or steps is
        set or its list of steps grows or shrinks (a changed plan is compared block by block:
        most blocks are as they were). A step told which blocks kept it, by weak reference,
        clears their JSON when it changes."""
        steps, kept = self.steps, self.__dict__.get("_json")
        if kept is not None and kept[0] is steps and kept[1] == len(steps):
            return kept[2]
        head = self.__dict__.get("_head")
        if head is None:
            head = self.__dict__["_head"] = _block_head(self.start, self.end, self.activity,
                                                        self.sector, self.arena)
        text = (f"{head}{', '.join([step.json() for step in steps])}], "
                f"\"resumed\": {'true' if self.resumed else 'false'}}}")
        me = weakref.ref(self)  # the same object each time while the block lives
        for step in steps:
            blocks = step.__dict__.setdefault("_in", [])
            if not blocks or blocks[-1] is not me:
                blocks.append(me)
        self.__dict__["_json"] = (steps, len(steps), text)
        return text

    @classmethod
    def from_dict(cls, data: dict) -> PlanBlock:
        return cls(start=_time_of(data["start"]), end=_time_of(data["end"]),
                   activity=data["activity"], sector=data.get("sector"), arena=data.get("arena"),
                   steps=[PlanStep.from_dict(s) for s in data.get("steps", [])],
                   resumed=bool(data.get("resumed", False)))


# The keys of a block's and a step's dict (to_dict), in order.
BLOCK_KEYS = ("start", "end", "activity", "sector", "arena", "steps", "resumed")
STEP_KEYS = ("start", "end", "action", "object", "object_state", "emoji")


def loaded_json(block: PlanBlock, data: Mapping[str, Any]) -> str:
    """`json.dumps(data)` of the dict `block` was made from (PlanBlock.from_dict). A dict with
    the keys of to_dict in their order was read from what `json` wrote (every block stored
    since blocks could resume, 2026-11-22), so its text is the block's own JSON, which is then
    kept on the block for the commits to come: the first commit after a resume would
    otherwise encode every block of a changed plan again. An older dict is dumped."""
    if tuple(data) == BLOCK_KEYS and all([tuple(step) == STEP_KEYS for step in data["steps"]]):
        return block.json()
    return json.dumps(data)


# The same few tick times recur in every plan: their text is kept rather than formatted again,
# and the time of a text rather than parsed again (a datetime is immutable, so shared).
_time_text = lru_cache(maxsize=4096)(format_game_time)
_time_of = lru_cache(maxsize=4096)(parse_game_time)


@lru_cache(maxsize=JSON_CACHE)
def _step_json(start: datetime, end: datetime, action: str, object: str, object_state: str,
               emoji: str) -> str:
    """`json.dumps(PlanStep(...).to_dict())`, written out: a tick's decompositions make a few
    hundred new steps at 100 residents, and json.dumps of each dict cost most of the plan's
    encoding (a game time's text holds nothing JSON escapes)."""
    return (f'{{"start": "{_time_text(start)}", "end": "{_time_text(end)}", '
            f'"action": {json_text(action)}, "object": {json_text(object)}, '
            f'"object_state": {json_text(object_state)}, "emoji": {json_text(emoji)}}}')


@lru_cache(maxsize=JSON_CACHE)
def _block_head(start: datetime, end: datetime, activity: str, sector: str | None,
                arena: str | None) -> str:
    """A block's JSON up to the opening bracket of its steps (the fields before them), as
    json.dumps writes it."""
    return (f'{{"start": "{_time_text(start)}", "end": "{_time_text(end)}", '
            f'"activity": {json_text(activity)}, "sector": {json_text(sector)}, '
            f'"arena": {json_text(arena)}, "steps": [')
