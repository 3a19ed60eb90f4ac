"""Names that look alike: a visitor may not take a name that reads like a resident's, another
visitor's or the town's own.

Two names look alike when their folded forms are equal. Folding: NFKC (full-width and styled
letters to plain ones), accents dropped, invisible characters dropped (zero-width spaces, the
BOM and the letters drawn blank such as the Hangul fillers U+3164, U+FFA0 and U+115F), case
folded, every letter replaced by the representative of its group in Unicode's confusables
table (Cyrillic "е" and Latin "e", "l" and "I" and "1"), and spaces and punctuation dropped.
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from importlib import resources

from townbot.text import without_invisible


@lru_cache(maxsize=1)
def confusable_groups() -> dict[str, str]:
    """Each character of Unicode's confusables table to one representative of its group (an
    ASCII letter or digit where the group has one), by joining every pair the table lists."""
    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json")
                      .read_text(encoding="utf-8"))
    parent: dict[str, str] = {}

    def root(char: str) -> str:
        while parent.get(char, char) != char:
            parent[char] = parent.get(parent[char], parent[char])
            char = parent[char]
        return char

    def rank(char: str) -> tuple[bool, int]:
        return (not (char.isascii() and char.isalnum()), ord(char))

    for char, entries in data.items():
        if len(char) != 1:
            continue
        for entry in entries:
            other = entry["c"]
            if len(other) != 1:
                continue
            first, second = root(char), root(other)
            if first != second:
                low, high = sorted((first, second), key=rank)
                parent[high] = low
    return {char: root(char) for char in parent}


def _letters(text: str) -> str:
    decomposed = without_invisible(unicodedata.normalize("NFKD", without_invisible(text)))
    return "".join(char for char in decomposed
                   if unicodedata.category(char) not in {"Mn", "Me", "Cf", "Cc", "Zs", "Zl", "Zp"})


def _grouped(text: str) -> str:
    groups = confusable_groups()
    return "".join(groups.get(char, char) for char in text)


@lru_cache(maxsize=4096)
def folds(name: str) -> frozenset[str]:
    """The forms in which look-alike names are equal: 'Isabеlla Rоdriguez' (Cyrillic е and о),
    'ISABELLA RODRIGUEZ' and 'Isabella\u200bRodríguez' share one. Two orders, because case and
    shape overlap: folding case first makes 'MEI' equal 'Mei', grouping first makes 'MeI' (a
    capital i) equal 'Mel'."""
    letters = _letters(name)
    forms = (_grouped(_grouped(letters.casefold()).casefold()),
             _grouped(_grouped(letters).casefold()))
    return frozenset("".join(char for char in form if char.isalnum()) for form in forms) - {""}


def resembled(name: str, taken: list[str]) -> str | None:
    """The first of `taken` that `name` looks like, if any."""
    mine = folds(name)
    return next((other for other in taken if mine & folds(other)), None)
