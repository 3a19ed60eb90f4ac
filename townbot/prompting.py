"""Prompt templates: every prompt is a text file in townbot/prompts/, filled with
string.Template. Shared by the mind and the model layer, so it depends on nothing."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

PROMPT_DIR = Path(__file__).parent / "prompts"
QUOTE_LIMIT = 500
NAME_LIMIT = 40  # a name a person chooses (the town service refuses longer ones)


@cache
def template(name: str) -> Template:
    return Template((PROMPT_DIR / f"{name}.txt").read_text(encoding="utf-8"))


# A template split at its placeholders: the text before the first one, then each placeholder's
# name with the text that follows it.
Pieces = tuple[str, tuple[tuple[str, str], ...]]


@cache
def pieces(name: str) -> Pieces:
    """The template `name` as `Pieces` ("$$" already read as "$"), found with the template's
    own pattern (so they join to what `substitute` gives)."""
    source = template(name)
    text = source.template
    texts: list[str] = []
    names: list[str] = []
    start, since = 0, ""  # `since`: the text since the last placeholder, "$$" read as "$"
    for match in source.pattern.finditer(text):
        since += text[start:match.start()]
        start = match.end()
        if match.group("escaped") is not None:
            since += "$"
            continue
        placeholder = match.group("named") or match.group("braced")
        if placeholder is None:
            raise ValueError(f"prompt template {name!r}: the '$' at character {match.start()} "
                             "starts no placeholder (write $$ for a dollar sign)")
        texts.append(since)
        names.append(placeholder)
        since = ""
    texts.append(since + text[start:])
    return texts[0], tuple(zip(names, texts[1:], strict=True))


def render(template_name: str, /, **values: object) -> str:
    """Fill a template; a missing value is a programming error and raises KeyError.

    The same text as `template(name).substitute(...)`, joined from the template's pieces: the
    mind renders a prompt for every call, and substitute searches the template each time."""
    head, rest = pieces(template_name)
    parts = [head]
    for name, text in rest:
        parts.append(str(values[name]))
        parts.append(text)
    return "".join(parts).rstrip("\n")


# Marks a model could read as the end of our quotation: typographic, full-width, low and
# reversed double quotes, double primes and guillemets. Inside people's text each becomes "'".
DOUBLE_QUOTES = str.maketrans(dict.fromkeys(
    '"\u00ab\u00bb\u02ba\u02dd\u201c\u201d\u201e\u201f\u2033\u2036\u275d\u275e'
    '\u2e42\u301d\u301e\u301f\uff02', "'"))


@dataclass(frozen=True)
class PeopleText:
    """Text a person wrote (a say, a whisper, a seed, an announcement, a name, a description,
    a question, an object's state). It has no way to become prompt text but quoted: str() and
    f-strings give it bounded, on one line, inside quotation marks, with every double quote of
    its own (typographic and full-width too) made a single one, so it cannot close ours.
    `text` is what platforms show people."""

    text: str
    limit: int = QUOTE_LIMIT

    def __str__(self) -> str:
        flat = " ".join(self.text.split())
        if len(flat) > self.limit:
            flat = flat[: self.limit - 1] + "…"
        return '"' + flat.translate(DOUBLE_QUOTES) + '"'

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def quoted(text: str, limit: int = QUOTE_LIMIT) -> str:
    """People's text enters prompts only like this: bounded and inside quotation marks."""
    return str(PeopleText(text, limit))


def quoted_name(name: str) -> str:
    """A name a person chose (a visitor's, a platform's display name), as prompts show it."""
    return quoted(name, NAME_LIMIT)


def numbered(lines: list[str]) -> str:
    return "\n".join(f"{index}. {line}" for index, line in enumerate(lines, 1))
