"""Buttons where they save typing: "Join" on the welcome, "Go here" on each area's note, "Ask
another question" on an interview answer.

A button's custom id says what it is for, so buttons on messages posted before a restart keep
working: the client hands every pressed button to `press` with its hub.
"""

from __future__ import annotations

import re
from typing import Any

import discord

from townbot.platforms.discord.hub import Hub
from townbot.platforms.discord.respond import Reply, refuse, run, send
from townbot.platforms.discord.town import MEMORY_ACCESS, GuildTown
from townbot.town.requests import LIMITS, Person, TownError, bounded

JOIN, ASK = "townbot:join", "townbot:ask"
GO = re.compile(r"townbot:go:(?P<slug>[a-z0-9-]{1,80})")


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
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            town = self.hub.town(interaction.guild_id)
            text = await ask_in_thread(town, self.hub.person(interaction.user), interaction.guild,
                                       self.thread_id, self.question.value)
        except TownError as refusal:
            await refuse(interaction, refusal, public=False)
            return
        await send(interaction, Reply(text), ephemeral=True)


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
    await town.answer_in_thread(thread, outcome.data["resident"],
                                bounded(question, "interview"), outcome.data["answer"])
    return f"{outcome.data['resident']} answered in {thread.mention}."


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
