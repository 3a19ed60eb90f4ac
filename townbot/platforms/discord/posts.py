"""Outbox rows -> Discord posts: a speech is one post under the speaker's name; the rest of one
tick in one channel is one narration post under the town's name; text over 2000 characters is
split. Pure, so a post cut short by a restart is rebuilt exactly from the same rows."""

from __future__ import annotations

import re
from dataclasses import dataclass

import discord
from discord.utils import escape_markdown

from townbot.platforms.discord.store import OutboxRow
from townbot.town.names import NARRATOR_NAMES, discord_username, passes_for

LIMIT = 2000  # characters per Discord message
NO_MENTIONS = discord.AllowedMentions.none()


@dataclass(frozen=True)
class Post:
    rows: tuple[int, ...]  # outbox ids, all marked sent when the last part is accepted
    username: str
    parts: tuple[str, ...]


def webhook_name(name: str, fallback: str) -> str:
    """A name Discord accepts for a webhook post (1-80 characters, none of its reserved words),
    as townbot.town.names shows it on Discord."""
    return discord_username(name) or discord_username(fallback) or "Town"


def speaker_name(actor: str, residents: frozenset[str], town: str) -> str:
    """The username a speech row is posted under. A resident's words go under the resident's
    name; anyone else's never under a name that passes for a resident's or the narrator's (the
    town service refuses such names at the door: this holds even for one that got past it)."""
    shown = discord_username(actor)
    if actor in residents:
        return shown or webhook_name(actor, town)
    narrators = (town, webhook_name(town, "Town"), *NARRATOR_NAMES)
    firsts = (name.split()[0] for name in residents)
    if not shown or passes_for(shown, (*residents, *firsts, *narrators)):
        return f"{shown} (visitor)" if shown else "Visitor"
    return shown


def split_text(text: str, limit: int = LIMIT) -> list[str]:
    """Parts of at most `limit` characters, cut at a line break or a space where there is one."""
    parts = []
    rest = text.strip()
    while len(rest) > limit:
        cut = rest.rfind("\n", 0, limit + 1)
        if cut < limit // 2:
            cut = rest.rfind(" ", 0, limit + 1)
        if cut < limit // 2:
            cut = limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return [*parts, rest] if rest else parts or [""]


# "@" before everyone or here, and "<" before "@" or "#": what Discord draws as a mention pill.
MENTION_START = re.compile(r"(@)(?=everyone|here)|(<)(?=[@#])", re.IGNORECASE)


def without_mentions(text: str) -> str:
    """People's text with a zero-width space after each mention's start, so Discord draws no
    mention pill (allowed_mentions already keeps it from notifying anyone)."""
    return MENTION_START.sub(lambda match: (match.group(1) or match.group(2)) + "\u200b", text)


def narration_line(row: OutboxRow) -> str:
    """`07:10` ☕ **John Lin** is making coffee · *kitchen: coffee machine*"""
    emoji = f"{row.emoji} " if row.emoji else ""
    where = f" · *{escape_markdown(row.place)}*" if row.place else ""
    clock = row.game_time[-5:]
    line = f"**{escape_markdown(row.actor)}** {escape_markdown(row.text)}"
    return f"`{clock}` {emoji}{without_mentions(line)}{where}"


def speech_text(row: OutboxRow) -> str:
    return without_mentions(escape_markdown(row.text))


def next_post(rows: list[OutboxRow], town: str,
              residents: frozenset[str] = frozenset()) -> Post | None:
    """The first post to make from a channel's unsent rows (oldest first); `residents`: the
    names whose speech goes out under their own name."""
    if not rows:
        return None
    head = rows[0]
    if head.kind == "speech":
        parts = split_text(speech_text(head))
        return Post((head.id,), speaker_name(head.actor, residents, town), tuple(parts))
    batch, lines, size = [], [], 0
    for row in rows:
        if row.kind == "speech" or row.tick != head.tick:
            break
        line = narration_line(row)
        if batch and size + 1 + len(line) > LIMIT:
            break
        batch.append(row.id)
        lines.append(line)
        size += len(line) + (1 if size else 0)
    return Post(tuple(batch), webhook_name(town, "Town"), tuple(split_text("\n".join(lines))))
