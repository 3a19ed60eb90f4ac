"""Visitors speak by writing: a joined person's message in an area's channel is their speech
there. Writing in another area's channel walks them there first; their words, kept in the
database meanwhile, are said on arrival. In an interview thread every message is a further
question to the resident."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import discord

from townbot.platforms.discord.hub import GuildTown, Hub
from townbot.platforms.discord.posts import NO_MENTIONS, without_mentions
from townbot.platforms.discord.respond import ask_in_thread
from townbot.platforms.discord.store import WaitingWords
from townbot.text import shows_nothing
from townbot.town.requests import Person, TownError

log = logging.getLogger(__name__)

WALKING, UNHEARD, ASLEEP = "🚶", "👂", "💤"
REFUSAL_SECONDS = 30  # a refusal in a public channel removes itself after this long
HINT = ("{name}, to speak in {town} join first with `/town join`; until then your messages "
        "here are just yours.")


async def handle_message(hub: Hub, message: Any) -> None:
    """A person's message; in one of the town's channels (or their threads) it is also activity
    that wakes a resting town."""
    if message.author.bot or message.webhook_id is not None or message.guild is None:
        return
    town = hub.towns.get(message.guild.id)
    if town is None:
        return
    parent = getattr(message.channel, "parent_id", None)
    if town.slug_of(parent or message.channel.id) is not None:
        await hub.seen(message.guild.id)
    interview = await town.store.thread(message.channel.id) if parent is not None else None
    if interview is not None:
        await _ask_in_thread(town, hub.person(message.author), message)
        return
    sector = town.sector_of(town.slug_of(message.channel.id))
    text = message.clean_content.strip()
    if sector is None or shows_nothing(text):  # a picture alone, or only invisible characters
        return
    person = hub.person(message.author)
    if town.service.speaker_of(person) is None:
        if person.id not in town.hinted:  # once per run
            town.hinted.add(person.id)
            await refuse(message, TownError(HINT.format(name=person.name,
                                                        town=town.engine.world.town)))
        return
    await speak(town, person, sector, text, message)


async def speak(town: GuildTown, person: Person, sector: str, text: str, message: Any) -> None:
    """Say `text` in `sector`, walking there first if the person is elsewhere."""
    found = town.service.speaker_of(person)
    assert found is not None
    _, body = found
    if body.sector != sector and not (body.walking and body.travel_sector == sector):
        try:
            await town.service.go(person, town.engine.world.sectors[sector].channel)
        except TownError as refusal:
            await refuse(message, refusal)
            return
        town.publisher.wake()
    if body.walking:  # a new place replaces words meant for another (changed their mind)
        await town.store.wait_words(WaitingWords(person.id, person.name, person.moderator, sector,
                                                 text, message.channel.id, message.id))
        await _react(message, WALKING)
        return
    await say_now(town, person, text, message)


async def say_now(town: GuildTown, person: Person, text: str, message: Any) -> None:
    found = town.service.speaker_of(person)
    assert found is not None
    name, body = found
    channel = town.engine.world.sectors[body.sector].channel if body.sector else ""
    echo = await town.store.expect_echo(channel, name, text)  # their message already shows it
    try:
        async with message.channel.typing():
            outcome = await town.service.say(person, text)
    except TownError as refusal:
        await town.store.forget_echo(echo)
        await refuse(message, refusal)
        return
    town.publisher.wake()
    if outcome.data.get("reply") is None:
        await _react(message, UNHEARD if "Heard by" in outcome.text else ASLEEP)


async def deliver_arrivals(town: GuildTown) -> None:
    """After a tick: words of people who have now arrived where they wrote them are said."""
    gone: set[str] = set()
    for words in await town.store.waiting_words():
        person = Person(words.person_id, words.person_name, words.moderator)
        found = town.service.speaker_of(person)
        if found is not None and found[1].walking:
            continue
        if words.person_id not in gone:
            gone.add(words.person_id)
            await town.store.forget_words(words.person_id)
        if found is None or found[1].sector != words.sector:
            continue  # left the town, or went somewhere else meanwhile
        channel = town.outlet.guild.get_channel(words.channel_id)  # the message by its ids
        if channel is not None and hasattr(channel, "get_partial_message"):
            await say_now(town, person, words.text, channel.get_partial_message(words.message_id))


async def _ask_in_thread(town: GuildTown, person: Person, message: Any) -> None:
    question = message.clean_content.strip()
    if shows_nothing(question):
        return
    try:
        async with message.channel.typing():
            await ask_in_thread(town, person, message.guild, message.channel.id, question)
    except TownError as refusal:
        await refuse(message, refusal)


async def refuse(message: Any, refusal: TownError) -> None:
    """A refusal as a public reply; it may quote what the person wrote or their display name,
    so mentions in it draw no pill either."""
    with contextlib.suppress(discord.HTTPException):
        await message.reply(without_mentions(str(refusal)), mention_author=False,
                            allowed_mentions=NO_MENTIONS, delete_after=REFUSAL_SECONDS)


async def _react(message: Any, emoji: str) -> None:
    with contextlib.suppress(discord.HTTPException):
        await message.add_reaction(emoji)
