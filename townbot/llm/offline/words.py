"""The offline model's words: phrase banks read from phrases.yaml, one alternative picked per
use with a seeded hash, and verb forms from the lemminflect inflection table.

A phrase is a template with `{slots}` filled from keyword arguments. The same seed and the same
choosing key always pick the same alternative, so a fixed seed still gives the same town.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from functools import cache
from pathlib import Path
from string import Formatter
from typing import Any

import yaml

from townbot.wording import inflected as _inflect

PHRASES_FILE = Path(__file__).with_name("phrases.yaml")


def seeded_index(seed: int, *parts: object, modulo: int) -> int:
    text = "|".join(str(p) for p in (seed, *parts))
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % max(1, modulo)


@cache
def banks() -> dict[str, list[str]]:
    """Every phrase bank by name (each a list of alternatives)."""
    raw: dict[str, Any] = yaml.safe_load(PHRASES_FILE.read_text(encoding="utf-8"))
    return {name: [str(item) for item in items] for name, items in raw.items()}


@cache
def _slots(template: str) -> frozenset[str]:
    return frozenset(name for _, name, _, _ in Formatter().parse(template) if name)


def say(bank: str, seed: int, *key: object, **slots: str) -> str:
    """One alternative of `bank` for this key, its slots filled; alternatives that need a slot
    left empty (no other guest to name, say) are passed over, and a slot nothing fills (in a
    bank with no alternative without it) reads as empty."""
    given = {name for name, value in slots.items() if value}
    options = [o for o in banks()[bank] if _slots(o) <= given] or banks()[bank][:1]
    chosen = options[seeded_index(seed, bank, *key, modulo=len(options))]
    return " ".join(chosen.format_map(defaultdict(str, slots)).split())


def alternatives(bank: str) -> list[str]:
    return list(banks()[bank])


@cache
def base_form(verb: str) -> str:
    """'intends' -> 'intend', 'watches' -> 'watch', 'is' -> 'be': the plain form whose third
    person the table gives as `verb` (found from the table's forms, not by cutting letters)."""
    lowered = verb.lower()
    if lowered in ("is", "'s"):
        return "be"
    if lowered == "has":
        return "have"
    candidates = [lowered[:-1], lowered[:-2], lowered[:-3] + "y"] if lowered.endswith("s") else []
    for candidate in candidates:
        if candidate and _inflect(candidate, "VBZ") == lowered:
            return candidate
    return lowered


def third_singular(verb: str) -> str:
    """'wonder' -> 'wonders', 'watch' -> 'watches', 'be' -> 'is'."""
    lowered = verb.lower()
    return _inflect(lowered, "VBZ") or lowered + "s"


def first_singular(verb: str) -> str:
    """'intends' -> 'intend', 'is' -> 'am', 'has' -> 'have'."""
    plain = base_form(verb)
    return "am" if plain == "be" else plain
