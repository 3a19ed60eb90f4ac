"""Buttons where they save typing: "Join" on the welcome, "Go here" on each area's note, "Ask
another question" on an interview answer.

They are dynamic items: the custom id carries what the button is for, so buttons on messages
posted before a restart keep working (registered in `TownBot.setup_hook`).
"""

from __future__ import annotations

import re
from typing import Any

import discord

from townbot.platforms.discord.respond import Reply, hub_of, refuse, run, send
from townbot.platforms.discord.town import MEMORY_ACCESS, GuildTown
from townbot.town.service import LIMITS, Person, TownError, bounded


class JoinForm(discord.ui.Modal):
    name: discord.ui.TextInput[JoinForm] = discord.ui.TextInput(
        label="Your name in the town", max_length=LIMITS["name"])
    about: discord.ui.TextInput[JoinForm] = discord.ui.TextInput(
        label="Who you are, in one line", max_length=LIMITS["description"],
        placeholder="a baker from the next town, visiting for the week")

    def __init__(self, town: str) -> None:
        super().__init__(title=f"Join {town}"[:45], custom_id="townbot:join-form")

    async def on_submit(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.join(person, self.name.value, self.about.value)
            town.publisher.wake()
            return outcome.text
        await run(interaction, work)


async def town_or_refuse(interaction: discord.Interaction) -> GuildTown | None:
    """The server's town for a button, or None after telling the person why there is none."""
    try:
        return hub_of(interaction).town(interaction.guild_id)
    except TownError as refusal:
        await interaction.response.send_message(str(refusal), ephemeral=True)
        return None


class JoinButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"townbot:join"):
    def __init__(self) -> None:
        super().__init__(discord.ui.Button(label="Join", style=discord.ButtonStyle.success,
                                           emoji="👋", custom_id="townbot:join"))

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> JoinButton:
        return cls()

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        town = await town_or_refuse(interaction)
        if town is None:
            return
        await interaction.response.send_modal(JoinForm(town.engine.world.town))


class GoButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
               template=r"townbot:go:(?P<slug>[a-z0-9-]{1,80})"):
    def __init__(self, slug: str) -> None:
        super().__init__(discord.ui.Button(label="Go here", style=discord.ButtonStyle.primary,
                                           emoji="🚶", custom_id=f"townbot:go:{slug}"))
        self.slug = slug

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> GoButton:
        return cls(match["slug"])

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.go(person, self.slug)
            town.publisher.wake()
            return outcome.text
        await run(interaction, work)


class AskForm(discord.ui.Modal):
    question: discord.ui.TextInput[AskForm] = discord.ui.TextInput(
        label="Your question", style=discord.TextStyle.paragraph, max_length=LIMITS["interview"])

    def __init__(self, resident: str, thread_id: int) -> None:
        super().__init__(title=f"Ask {resident}"[:45], custom_id=f"townbot:ask-form:{thread_id}")
        self.resident = resident
        self.thread_id = thread_id

    async def on_submit(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        await interaction.response.defer(ephemeral=True, thinking=True)
        hub = hub_of(interaction)
        try:
            town = hub.town(interaction.guild_id)
            text = await ask_in_thread(town, hub.person(interaction.user), interaction.guild,
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


class AskButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"townbot:ask"):
    """On an interview's answer, whose thread has the answer's message id."""

    def __init__(self) -> None:
        super().__init__(discord.ui.Button(label="Ask another question", emoji="❓",
                                           style=discord.ButtonStyle.secondary,
                                           custom_id="townbot:ask"))

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> AskButton:
        return cls()

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        town = await town_or_refuse(interaction)
        if town is None:
            return
        message_id = interaction.message.id if interaction.message else 0
        interview = await town.store.thread(message_id)
        if interview is None:
            await interaction.response.send_message(
                "this interview has no thread; start a new one with /interview", ephemeral=True)
            return
        await interaction.response.send_modal(AskForm(interview.resident, message_id))


BUTTONS = (JoinButton, GoButton, AskButton)


def view_of(*items: discord.ui.Item[Any]) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for item in items:
        view.add_item(item)
    return view
