"""Answering an interaction: defer at once (a use case waits for a tick under way, which can
outlast Discord's 3 seconds), run it in the server's town, answer in follow-ups, or refuse
(`TownError`) to the asker alone. Buttons ("Join", "Go here", "Ask another question") say in
their custom ids what they are for, so those posted before a restart keep working (`press`)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import discord
from discord.utils import MISSING

from townbot.platforms.discord.cards import interview_card
from townbot.platforms.discord.hub import MEMORY_ACCESS, GuildTown, Hub
from townbot.platforms.discord.posts import LIMIT, NO_MENTIONS, split_text
from townbot.town.requests import LIMITS, Outcome, Person, TownError, bounded

MAX_PARTS = 3  # follow-ups per answer (a long `where` or `memories` list)
MORE = "ask for less to see the rest"
JOIN, ASK = "townbot:join", "townbot:ask"
GO = re.compile(r"townbot:go:(?P<slug>[a-z0-9-]{1,80})")
CUT = "\n✂️ Cut here: {rest} more characters did not fit in {parts} messages; {more}."


@dataclass(frozen=True)
class Reply:
    """What a use case answers: text, and perhaps a card, buttons and a picture (the map); what
    is not given is discord.py's MISSING, as `followup.send` takes it."""

    text: str = ""
    embed: discord.Embed = MISSING
    view: discord.ui.View = MISSING
    file: discord.File = MISSING


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
               more: str = MORE) -> None:
    """The answer as follow-ups: text in parts, the card and picture with the first, the
    buttons with the last."""
    if isinstance(reply, str):
        reply = Reply(reply)
    parts = fit(reply.text, more)
    if not reply.text and reply.embed is MISSING and reply.file is MISSING:
        parts = ["(nothing)"]
    for index, part in enumerate(parts):
        first, last = index == 0, index == len(parts) - 1
        await interaction.followup.send(part or MISSING, ephemeral=ephemeral, wait=True,
                                        allowed_mentions=NO_MENTIONS,
                                        embed=reply.embed if first else MISSING,
                                        file=reply.file if first else MISSING,
                                        view=reply.view if last else MISSING)


async def refuse(interaction: discord.Interaction, refusal: TownError, *, public: bool) -> None:
    if public:  # the public "thinking..." message would otherwise carry the refusal
        with contextlib.suppress(discord.HTTPException):
            await interaction.delete_original_response()
    await send(interaction, str(refusal), ephemeral=True)


async def not_a_moderator(hub: Hub, interaction: discord.Interaction, case: str) -> bool:
    """Refuse a moderator command to anyone else, before anything is deferred or done (a
    server may show /mod to more people than Discord's default, and the role counts too)."""
    person = hub.person(interaction.user)
    if person.moderator:
        return False
    role = hub.config.moderator_role
    rule = f"Manage Server or the {role} role" if role else "Manage Server"
    reason = f"only moderators may use {case} ({rule}); ask a moderator"
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


# --- buttons and their forms ------------------------------------------------------------------

class JoinForm(discord.ui.Modal):
    name: discord.ui.TextInput[JoinForm] = discord.ui.TextInput(
        label="Your name in the town", max_length=LIMITS["name"])
    about: discord.ui.TextInput[JoinForm] = discord.ui.TextInput(
        label="Who you are, in one line", max_length=LIMITS["description"],
        placeholder="a baker from the next town, visiting for the week")

    def __init__(self, hub: Hub, town: str) -> None:
        super().__init__(title=f"Join {town}"[:45], custom_id="townbot:join-form")
        self.hub = hub

    async def on_submit(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        await run(self.hub, interaction, lambda town, person: town.service.join(
            person, self.name.value, self.about.value))


class AskForm(discord.ui.Modal):
    question: discord.ui.TextInput[AskForm] = discord.ui.TextInput(
        label="Your question", style=discord.TextStyle.paragraph, max_length=LIMITS["interview"])

    def __init__(self, hub: Hub, resident: str, thread_id: int) -> None:
        super().__init__(title=f"Ask {resident}"[:45], custom_id=f"townbot:ask-form:{thread_id}")
        self.hub = hub
        self.resident = resident
        self.thread_id = thread_id

    async def on_submit(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        await run(self.hub, interaction, lambda town, person: ask_in_thread(
            town, person, interaction.guild, self.thread_id, self.question.value))


async def ask_in_thread(town: GuildTown, person: Person, guild: Any, thread_id: int,
                        question: str) -> str:
    """A further question to the interviewed resident, answered in the interview's thread."""
    interview = await town.store.thread(thread_id)
    thread = guild.get_thread(thread_id) if guild is not None else None
    if interview is None or thread is None:
        raise TownError("this interview's thread is gone; start a new one with /interview")
    outcome = await town.service.interview(
        person, interview.resident, question, remember=interview.remember,
        access=MEMORY_ACCESS.get(interview.memory, MEMORY_ACCESS["full"]))
    resident = outcome.data["resident"]
    card = interview_card(resident, bounded(question, "interview"), outcome.data["answer"],
                          town.outlet.avatar(resident))
    slug = town.slug_of(thread.parent_id)  # the resident posts through the channel's webhook;
    if slug is None:  # in a thread of someone else's channel, the bot does
        await thread.send(embed=card, allowed_mentions=NO_MENTIONS)
    else:
        await town.outlet.post(slug, "", resident, thread=thread, embed=card)
    return f"{resident} answered in {thread.mention}."


async def press(hub: Hub, interaction: discord.Interaction) -> None:
    """What a pressed button of ours does (anything else pressed is left alone)."""
    custom_id = (interaction.data or {}).get("custom_id", "")
    go = GO.fullmatch(custom_id)
    if go is not None:
        await run(hub, interaction, lambda town, person: town.service.go(person, go["slug"]))
        return
    if custom_id not in (JOIN, ASK):
        return
    try:
        town = hub.town(interaction.guild_id)
    except TownError as refusal:
        await interaction.response.send_message(str(refusal), ephemeral=True)
        return
    if custom_id == JOIN:
        await interaction.response.send_modal(JoinForm(hub, town.engine.world.town))
        return
    message_id = interaction.message.id if interaction.message else 0  # the answer's thread
    interview = await town.store.thread(message_id)
    if interview is None:
        await interaction.response.send_message(
            "this interview has no thread; start a new one with /interview", ephemeral=True)
        return
    await interaction.response.send_modal(AskForm(hub, interview.resident, message_id))


def join_button() -> discord.ui.View:
    return _view(discord.ui.Button(label="Join", style=discord.ButtonStyle.success, emoji="👋",
                                   custom_id=JOIN))


def go_button(slug: str) -> discord.ui.View:
    return _view(discord.ui.Button(label="Go here", style=discord.ButtonStyle.primary,
                                   emoji="🚶", custom_id=f"townbot:go:{slug}"))


def ask_button() -> discord.ui.View:
    return _view(discord.ui.Button(label="Ask another question", emoji="❓",
                                   style=discord.ButtonStyle.secondary, custom_id=ASK))


def _view(button: discord.ui.Button[Any]) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(button)
    return view
