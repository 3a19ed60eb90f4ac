"""Matching an activity's words by their beginnings ("cook" in "cooking", "cooked"), without the
words that only start like a keyword ("shower" is not a "show")."""

from __future__ import annotations

import re

FALSE_FRIENDS: dict[str, frozenset[str]] = {
    "show": frozenset({"shower", "showers", "showering"}),
    "plan": frozenset({"plant", "plants", "planted", "planting", "planet"}),
    "off": frozenset({"office", "offices", "offer", "offers", "offered", "offering"}),
    "read": frozenset({"ready", "readying", "already"}),
    "tea": frozenset({"teach", "teaching", "teacher", "team", "tear", "tears"}),
    "act": frozenset({"actual", "actually"}),
    "bar": frozenset({"barely"}),
    "eat": frozenset(),
}
WORD = re.compile(r"[a-z]+")


def words_of(text: str) -> list[str]:
    return WORD.findall(text.lower())


def any_starts(words: list[str], prefixes: tuple[str, ...]) -> bool:
    """Whether a word starts with one of `prefixes` without being that prefix's false friend."""
    for word in words:
        # str.startswith tries every prefix at C speed: most words start with none of them.
        if word.startswith(prefixes) and any(
                word.startswith(prefix) and word not in FALSE_FRIENDS.get(prefix, ())
                for prefix in prefixes):
            return True
    return False
