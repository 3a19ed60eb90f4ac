"""The welcome: a pinned card in #town-hall with a "Join" button, and a short pinned note with a
"Go here" button in each area's channel. Posted once per channel (again only for a channel made
anew), by the bot itself so the buttons work."""

from __future__ import annotations

import logging

import discord

from townbot.platforms.discord.buttons import go_button, join_button
from townbot.platforms.discord.cards import area_note, welcome_card
from townbot.platforms.discord.outlet import NO_MENTIONS
from townbot.platforms.discord.town import GuildTown

log = logging.getLogger(__name__)


async def post_welcome(town: GuildTown, link: str | None = None) -> None:
    """`link`: the town's members-only web page, when it is served."""
    world = town.engine.world
    done = await town.store.welcome()
    hall = world.town_hall_channel
    if _missing(town, done, hall):
        card = welcome_card(world.town, len(world.personas), hall, town.engine.model.label,
                            link)
        await _pin(town, hall, embed=card, view=join_button())
    for sector in world.sectors.values():
        if _missing(town, done, sector.channel):
            hours = sector.hours.describe() if sector.hours else None
            await _pin(town, sector.channel, content=area_note(sector.name, sector.description,
                                                               hours),
                       view=go_button(sector.channel))


def _missing(town: GuildTown, done: dict[str, tuple[int, int]], slug: str) -> bool:
    return done.get(slug, (None, None))[0] != town.channel(slug).id


async def _pin(town: GuildTown, slug: str, **message: object) -> None:
    channel = town.channel(slug)
    try:
        sent = await channel.send(allowed_mentions=NO_MENTIONS, **message)
    except discord.HTTPException as error:  # the town works without it; tried at next start
        log.warning("server %s: the welcome in #%s could not be posted: %s", town.guild_id, slug,
                    error)
        return
    await town.store.welcomed(slug, channel.id, sent.id)
    try:
        await sent.pin(reason="townbot: how to take part")
    except discord.HTTPException as error:
        log.warning("server %s: the welcome in #%s could not be pinned: %s", town.guild_id, slug,
                    error)


async def show_link(town: GuildTown, link: str | None) -> bool:
    """The pinned welcome card again with the web page's new link (None: the page is closed),
    so that the pin never offers a link that no longer works. False when it could not be
    changed (the reason is logged); the new link is given to the moderator either way."""
    world = town.engine.world
    hall = world.town_hall_channel
    channel_id, message_id = (await town.store.welcome()).get(hall, (None, None))
    if message_id is None or town.channel(hall).id != channel_id:
        return False  # never posted, or its channel was deleted: the next start posts it anew
    card = welcome_card(world.town, len(world.personas), hall, town.engine.model.label, link)
    try:
        await town.channel(hall).get_partial_message(message_id).edit(embed=card)
    except discord.HTTPException as error:
        log.warning("server %s: the welcome's link could not be changed: %s", town.guild_id,
                    error)
        return False
    return True
