"""Outbox rows -> Discord posts: what each message says and under which name.

Speech is one post under the speaker's name. Everything else of one tick in one channel (actions,
moves, notices, objects, announcements) is batched into one narration post under the town's
name. Any text over Discord's 2000 characters is split into parts. Planning is a pure function
of the rows, so a post interrupted by a restart is rebuilt exactly from the same rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from discord.utils import escape_markdown

from townbot.platforms.discord.store import OutboxRow

LIMIT = 2000  # characters per Discord message
NAME_LIMIT = 80  # characters of a webhook username
# Discord refuses webhook names containing these words, and names that are only "everyone"/"here".
FORBIDDEN_NAME = re.compile(r"discord|clyde", re.IGNORECASE)


@dataclass(frozen=True)
class Post:
    rows: tuple[int, ...]  # outbox ids, all marked sent when the last part is accepted
    username: str
    parts: tuple[str, ...]

    @property
    def first(self) -> int:
        return self.rows[0]

    @property
    def last(self) -> int:
        return self.rows[-1]


def webhook_name(name: str, fallback: str) -> str:
    """A name Discord accepts for a webhook post (1-80 characters, none of its reserved words)."""
    cleaned = " ".join(FORBIDDEN_NAME.sub("", name).split())[:NAME_LIMIT].strip()
    if not cleaned or cleaned.lower() in {"everyone", "here"}:
        return fallback[:NAME_LIMIT]
    return cleaned


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


def narration_line(row: OutboxRow) -> str:
    """`07:10` ☕ **John Lin** is making coffee · *kitchen: coffee machine*"""
    emoji = f"{row.emoji} " if row.emoji else ""
    where = f" · *{escape_markdown(row.place)}*" if row.place else ""
    clock = row.game_time[-5:]
    return f"`{clock}` {emoji}**{escape_markdown(row.actor)}** {escape_markdown(row.text)}{where}"


def speech_text(row: OutboxRow) -> str:
    return escape_markdown(row.text)


def next_post(rows: list[OutboxRow], town: str) -> Post | None:
    """The first post to make from a channel's unsent rows (oldest first)."""
    if not rows:
        return None
    head = rows[0]
    if head.kind == "speech":
        parts = split_text(speech_text(head))
        return Post((head.id,), webhook_name(head.actor, town), tuple(parts))
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
