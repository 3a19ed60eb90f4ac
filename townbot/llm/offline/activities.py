"""The offline model's words for activities (activities.yaml), and matching an activity's words
by their beginnings ("cook" in "cooking", "cooked") without the words that only start like a
keyword ("shower" is not a "show")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

ACTIVITIES_FILE = Path(__file__).with_name("activities.yaml")
WORD = re.compile(r"[a-z]+")
Starts = tuple[str, ...]  # beginnings of words


@dataclass(frozen=True)
class Vocabulary:
    importance: tuple[tuple[int, Starts], ...]  # most poignant first
    false_friends: dict[str, frozenset[str]]
    object_hints: dict[str, Starts]
    odd_defaults: Starts
    object_states: dict[str, str]
    emoji: tuple[tuple[Starts, str], ...]
    active: Starts
    meal_words: Starts
    meal_verbs: Starts
    morning_starts: Starts
    bedtime_starts: Starts


@cache
def vocabulary() -> Vocabulary:
    raw = yaml.safe_load(ACTIVITIES_FILE.read_text(encoding="utf-8"))
    return Vocabulary(
        importance=tuple((score, tuple(words.split())) for score, words in raw["importance"]),
        false_friends={k: frozenset(v) for k, v in raw["false_friends"].items()},
        object_hints={k: tuple(v) for k, v in raw["object_hints"].items()},
        object_states=dict(raw["object_states"]),
        emoji=tuple((tuple(words.split()), emoji) for emoji, words in raw["emoji"]),
        **{name: tuple(raw[name]) for name in ("odd_defaults", "active", "meal_words",
                                               "meal_verbs", "morning_starts", "bedtime_starts")})


def words_of(text: str) -> list[str]:
    return WORD.findall(text.lower())


def any_starts(words: list[str], prefixes: Starts) -> bool:
    """Whether a word starts with one of `prefixes` without being that prefix's false friend."""
    false_friends = vocabulary().false_friends
    return any(word.startswith(prefix) and word not in false_friends.get(prefix, ())
               for word in words for prefix in prefixes)
