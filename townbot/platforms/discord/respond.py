"""Answering an interaction: defer, run a use case in the server's town, answer or refuse.

Every command defers at once: a use case waits for a tick in progress (the service's lock), and
a tick with a real model can outlast Discord's 3 seconds. Answers come as follow-ups; refusals
(`TownError`) always come back only to the person who asked.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import discord

from townbot.platforms.discord.hub import Hub
from townbot.platforms.discord.outlet import NO_MENTIONS
from townbot.platforms.discord.posts import LIMIT, split_text
from townbot.platforms.discord.town import GuildTown
from townbot.town.requests import Outcome, Person, TownError

MAX_PARTS = 3  # follow-ups per answer (a long `where` or `memories` list)
MORE = "ask for less to see the rest"
CUT = "\n✂️ Cut here: {rest} more characters did not fit in {parts} messages; {more}."


@dataclass(frozen=True)
class Reply:
    """What a use case answers: text, and perhaps a card and buttons."""

    text: str = ""
    embed: discord.Embed | None = None
    view: discord.ui.View | None = None
    file: discord.File | None = None  # a picture (the map), sent with the first part


Work = Callable[[GuildTown, Person], Awaitable["str | Reply | Outcome"]]


def fit(text: str, more: str = MORE) -> list[str]:
    """At most MAX_PARTS messages; a longer text ends saying it was cut and how to see more."""
    parts = split_text(text)
    if len(parts) <= MAX_PARTS:
        return parts
    kept = parts[:MAX_PARTS]
    rest = sum(len(p) for p in parts[MAX_PARTS:])
    note = CUT.format(rest=rest, parts=MAX_PARTS, more=more)
    kept[-1] = split_text(kept[-1], LIMIT - len(note))[0] + note
    return kept


async def send(interaction: discord.Interaction, reply: str | Reply, *, ephemeral: bool,
               more: str = MORE) -> Any:
    """The answer as follow-ups (text in parts, the card with the first, the buttons with the
    last); returns the first message."""
    if isinstance(reply, str):
        reply = Reply(reply)
    parts = fit(reply.text, more) if reply.text else [""]
    if not reply.text and reply.embed is None and reply.file is None:
        parts = ["(nothing)"]
    first = None
    for index, part in enumerate(parts):
        extra: dict[str, Any] = {}
        if index == 0 and reply.embed is not None:
            extra["embed"] = reply.embed
        if index == 0 and reply.file is not None:
            extra["file"] = reply.file
        if index == len(parts) - 1 and reply.view is not None:
            extra["view"] = reply.view
        message = await interaction.followup.send(part or discord.utils.MISSING,
                                                  ephemeral=ephemeral, wait=True,
                                                  allowed_mentions=NO_MENTIONS, **extra)
        first = first or message
    return first


async def refuse(interaction: discord.Interaction, refusal: TownError, *, public: bool) -> None:
    if public:  # the public "thinking..." message would otherwise carry the refusal
        with contextlib.suppress(discord.HTTPException):
            await interaction.delete_original_response()
    await send(interaction, str(refusal), ephemeral=True)


async def not_a_moderator(hub: Hub, interaction: discord.Interaction, case: str) -> bool:
    """Refuse a moderator command to anyone else, before anything is deferred or done.

    Discord already hides /mod from members without Manage Server; this check also covers a
    server that shows it to more people, and the configured moderator role."""
    person = hub.person(interaction.user)
    if person.moderator:
        return False
    reason = f"only moderators may use {case} ({hub.moderator_rule()}); ask a moderator"
    await interaction.response.send_message(reason, ephemeral=True)
    with contextlib.suppress(TownError):  # a server without a town has no audit log to keep
        await hub.town(interaction.guild_id).service.refused(case.lstrip("/"), person, reason)
    return True


async def run(hub: Hub, interaction: discord.Interaction, work: Work, *, public: bool = False,
              moderators: str | None = None, more: str = MORE) -> None:
    """Defer, do the work in this server's town, answer (an Outcome by its text) or refuse."""
    if moderators is not None and await not_a_moderator(hub, interaction, moderators):
        return
    await interaction.response.defer(ephemeral=not public, thinking=True)
    try:
        town = hub.town(interaction.guild_id)
        reply = await work(town, hub.person(interaction.user))
    except TownError as refusal:
        await refuse(interaction, refusal, public=public)
        return
    town.publisher.wake()  # what the use case posted goes out now
    await send(interaction, reply.text if isinstance(reply, Outcome) else reply,
               ephemeral=not public, more=more)
