"""One rule for the names people choose, on every platform the town posts to.

A visitor's name is shown as typed in a terminal and on the web page, and on Discord as the
username of a webhook post, which Discord cleans: it refuses "discord" and "clyde" anywhere in a
webhook's name, and "everyone" and "here" as a whole name, so the publisher takes them out
(`discord_username`). A name is refused when any of those forms could be taken for a resident,
another visitor present, the town or its narrator, or a mention. Announcements and narration
post under the narrator's names, which are all refused to visitors.

Two names look alike when their folded forms are equal (`folds`): NFKC (full-width and styled
letters to plain ones), accents and invisible characters dropped (zero-width spaces, the BOM,
the letters drawn blank such as the Hangul fillers U+3164, U+FFA0 and U+115F), case folded,
every letter replaced by the representative of its group in Unicode's confusables table
(Cyrillic "е" and Latin "e", "l" and "I" and "1"), and spaces and punctuation dropped.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from townbot.text import without_invisible

DISCORD_NAME_LIMIT = 80  # characters of a webhook username
# Discord refuses a webhook name containing these words; removing one can join the letters
# around it into another ("disdiscordcord"), so they are removed until none is left.
DISCORD_RESERVED = re.compile(r"discord|clyde", re.IGNORECASE)
MENTION_WORDS = ("everyone", "here")
# What Discord draws as a mention or a live element: <@id>, <@!id>, <@&role>, <#channel>,
# </command:id>, <:emoji:id>, <t:time>; and any "@", which starts @everyone and @here.
MENTION_SYNTAX = re.compile(r"@|<\s*[@#/:!&]|<\s*a?:|<\s*t:", re.IGNORECASE)
# The names the town itself posts under, beside its own name: no visitor may take them.
NARRATOR_NAMES = ("Town hall", "Town", "Narrator", "Clyde", "Discord", "System")


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


def folds(name: str) -> frozenset[str]:
    """The forms in which look-alike names are equal: 'Isabеlla Rоdriguez' (Cyrillic е and о),
    'ISABELLA RODRIGUEZ' and 'Isabella\u200bRodríguez' share one. Two orders, because case and
    shape overlap: folding case first makes 'MEI' equal 'Mei', grouping first makes 'MeI' (a
    capital i) equal 'Mel'."""
    letters = _letters(name)
    forms = (_grouped(_grouped(letters.casefold()).casefold()),
             _grouped(_grouped(letters).casefold()))
    return frozenset("".join(char for char in form if char.isalnum()) for form in forms) - {""}


def discord_username(name: str) -> str:
    """`name` as a Discord webhook post shows it: reserved words removed, spaces collapsed, at
    most 80 characters; "" when nothing Discord accepts is left."""
    cleaned, before = name, None
    while cleaned != before:
        before, cleaned = cleaned, DISCORD_RESERVED.sub("", cleaned)
    cleaned = " ".join(cleaned.split())[:DISCORD_NAME_LIMIT].strip()
    if cleaned.casefold() in MENTION_WORDS:
        return ""
    return cleaned


def shown_forms(name: str) -> list[tuple[str, str]]:
    """(where, how the name shows there), one per platform."""
    return [("as typed", name), ("on Discord", discord_username(name))]


@dataclass(frozen=True)
class Taken:
    """A name visitors may not be mistaken for, and what it is ("a resident's name")."""

    name: str
    what: str


def taken_names(residents: Iterable[str], visitors: Iterable[str], town: str) -> list[Taken]:
    """Everything a new visitor's name must not look like, in the order refusals name them."""
    residents = list(residents)
    return [*(Taken(n, "a resident's name") for n in residents),
            *(Taken(n.split()[0], "a resident's name") for n in residents),
            *(Taken(n, "the name of someone in the town") for n in visitors),
            Taken(town, "the town's name"),
            *(Taken(n, "a name the town posts its news under") for n in NARRATOR_NAMES)]


def name_problem(name: str, taken: list[Taken]) -> str | None:
    """Why a visitor may not be called `name` (one sentence that says what the name would look
    like, and why), or None when it may."""
    if MENTION_SYNTAX.search(name):
        return f"'{name}' would show on Discord as a mention; leave out @ and <...>"
    forms = shown_forms(name)
    for where, shown in forms:
        if not shown:
            return (f"'{name}' would show {where} as no name at all (Discord takes 'discord' "
                    "and 'clyde' out of names, and 'everyone' or 'here' alone is a mention)")
        if folds(shown) & {fold for word in MENTION_WORDS for fold in folds(word)}:
            return f"'{name}' would show {where} as '{shown}', which reads as a mention"
    by_name = {other.name: other for other in reversed(taken)}  # the first of each name
    for where, shown in forms:
        like = passes_for(shown, [other.name for other in taken])
        if like is not None:
            return _looks_like(name, where, shown, by_name[like])
    return None


def _looks_like(name: str, where: str, shown: str, other: Taken) -> str:
    if shown != name:
        return f"'{name}' would show {where} as '{shown}', which looks like '{other.name}', " \
               f"{other.what}"
    if name.casefold() == other.name.casefold():
        return f"'{name}' is already {other.what}"
    return f"'{name}' looks like '{other.name}', {other.what}"


def passes_for(shown: str, names: Iterable[str]) -> str | None:
    """The first of `names` that `shown` (a name as a platform shows it) could be taken for,
    by its own form or by its form on every platform."""
    mine = folds(shown)
    for name in names:
        if any(mine & folds(form) for form in (name, *(f for _, f in shown_forms(name) if f))):
            return name
    return None
