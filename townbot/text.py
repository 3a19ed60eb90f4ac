"""People's text, cleaned once at the door of the town service.

Whatever a person types (a say, a whisper, an interview question, a name, a description, an
object's state, a scenario file, a line of standard input) goes through `clean_text` before
anything else sees it, so no later step (a prompt, SQLite, a Discord post) meets a string it
cannot encode or that hides what it shows.
"""

from __future__ import annotations

import unicodedata

REPLACEMENT = "\ufffd"
WHITESPACE_CONTROLS = frozenset("\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85")
# Marks that reorder or hide text on screen (bidirectional overrides and isolates): a name or a
# line could read differently from what it is.
DIRECTION_MARKS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                            "\u2066\u2067\u2068\u2069")


# Characters that show as nothing or as blank space although they are not spaces: Unicode's
# default-ignorable code points (zero-width spaces and joiners, word joiners, the BOM, variation
# selectors, tags) and the letters drawn blank (the Hangul fillers, the Braille blank). A name
# folded for comparison drops them; a text made only of them and of spaces is empty.
INVISIBLE_RANGES = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
                    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
                    (0x2060, 0x206F), (0x2800, 0x2800), (0x3164, 0x3164), (0xFE00, 0xFE0F),
                    (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
                    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))


def is_invisible(char: str) -> bool:
    point = ord(char)
    return any(low <= point <= high for low, high in INVISIBLE_RANGES)


def without_invisible(text: str) -> str:
    return "".join(char for char in text if not is_invisible(char))


def shows_nothing(text: str) -> bool:
    """True when `text` would show as blank: only spaces, invisible characters, formatting
    characters and marks with nothing to sit on."""
    return not any(not is_invisible(char) and not char.isspace()
                   and unicodedata.category(char) not in {"Cf", "Cc", "Mn", "Me", "Zs"}
                   for char in text)


def is_invalid(char: str) -> bool:
    """A code point no text should carry: a lone surrogate half (SQLite and UTF-8 cannot store
    it) or one of Unicode's noncharacters."""
    point = ord(char)
    return (0xD800 <= point <= 0xDFFF or 0xFDD0 <= point <= 0xFDEF
            or point & 0xFFFE == 0xFFFE)


def clean_char(char: str) -> str:
    if is_invalid(char):
        return REPLACEMENT
    if char in WHITESPACE_CONTROLS:
        return " "
    if char in DIRECTION_MARKS or unicodedata.category(char) == "Cc":
        return ""
    return char


def clean_text(text: str) -> str:
    """Invalid code points replaced by U+FFFD, control characters and direction overrides
    removed (line breaks and tabs become spaces), then NFC, so one spelling has one form."""
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to do
    return unicodedata.normalize("NFC", "".join(map(clean_char, text)))


def clean_tree(value: object) -> object:
    """`clean_text` over every string in loaded data (mappings, lists), keys included."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_tree(key): clean_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clean_tree(item) for item in value]
    return value
