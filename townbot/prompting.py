"""Prompt templates: every prompt is a text file in townbot/prompts/, filled with
string.Template. Shared by the mind and the model layer, so it depends on nothing."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

PROMPT_DIR = Path(__file__).parent / "prompts"
QUOTE_LIMIT = 500
NAME_LIMIT = 40  # a name a person chooses (the town service refuses longer ones)


@cache
def template(name: str) -> Template:
    return Template((PROMPT_DIR / f"{name}.txt").read_text(encoding="utf-8"))


def render(template_name: str, /, **values: object) -> str:
    """Fill a template; a missing value is a programming error and raises KeyError."""
    return template(template_name).substitute({k: str(v) for k, v in values.items()}).rstrip("\n")


def quoted(text: str, limit: int = QUOTE_LIMIT) -> str:
    """People's text enters prompts only like this: bounded and inside quotation marks."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return '"' + flat.replace('"', "'") + '"'


def quoted_name(name: str) -> str:
    """A name a person chose (a visitor's, a platform's display name), as prompts show it."""
    return quoted(name, NAME_LIMIT)


def numbered(lines: list[str]) -> str:
    return "\n".join(f"{index}. {line}" for index, line in enumerate(lines, 1))
