"""A server's town from opening to every tick: founded or resumed with its channels, webhooks and
pinned welcome, ticked by the scheduler, its posts sent and arrived visitors' words said. The
welcome (a card with "Join" in #town-hall, a note with "Go here" in each area) is posted once per
channel, again only in a channel made anew, by the bot itself so that the buttons work."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import discord

from townbot.llm.port import ServerUnavailable
from townbot.llm.watching import AnswersUnusable
from townbot.platforms.discord.cards import area_note, welcome_card
from townbot.platforms.discord.hub import GuildTown, Hub
from townbot.platforms.discord.posts import NO_MENTIONS
from townbot.platforms.discord.publisher import Publisher
from townbot.platforms.discord.respond import go_button, join_button
from townbot.platforms.discord.setup import WebhookOutlet, channel_plan
from townbot.platforms.discord.speech import deliver_arrivals
from townbot.platforms.discord.store import DiscordStore
from townbot.platforms.metrics import TownMetrics
from townbot.town.launch import open_engine
from townbot.town.requests import Person, TownError
from townbot.town.rest import Rest
from townbot.town.service import TownService

log = logging.getLogger(__name__)

FOUNDER = Person("discord:townbot", "townbot", moderator=True)  # settings made at founding
# Who pauses a town whose model gives too many unusable answers, in the audit log.
MODEL_WATCH = Person("townbot:model-watch", "townbot's model watch", moderator=True)


async def open_town(hub: Hub, guild: discord.Guild) -> GuildTown:
    """The server's town: founded on first use, resumed after, channels checked each time."""
    async with hub.opening.setdefault(guild.id, asyncio.Lock()):  # one opening at a time
        if guild.id not in hub.towns:
            hub.towns[guild.id] = await _open(hub, guild)
            hub.failures.pop(guild.id, None)
        return hub.towns[guild.id]


async def _open(hub: Hub, guild: discord.Guild) -> GuildTown:
    path = hub.config.database(guild.id)
    founding = not path.exists()
    engine = await open_engine(hub.files, str(path), settings=hub.settings)
    store = None
    try:
        service = TownService(engine, model_settings=hub.settings)
        if founding and hub.config.tick_seconds is not None:
            await service.speed(FOUNDER, hub.config.tick_seconds)
        store = await DiscordStore.open(path, engine.town.id)
        outlet = WebhookOutlet(guild, channel_plan(engine.world), store, hub.config.avatar_url,
                               avatars=engine.world.personas)
        layout = await outlet.ensure()
        if layout.made:
            log.info("server %s: made %s", guild.id, ", ".join(layout.made))
        publisher = Publisher(store, outlet, engine.world.town, global_pacer=hub.pacer,
                              residents=frozenset(engine.minds))
        town = GuildTown(guild.id, service, store, publisher, outlet)
        try:
            link = await hub.page_link(town, FOUNDER)
        except TownError:
            link = None  # a moderator closed the page
        await post_welcome(town, link)
    except BaseException:
        if store is not None:
            await store.close()
        await engine.model.close()
        await engine.store.close()
        raise
    town.publisher.start()
    town.rest = Rest(hub.upkeep.rest, hub.clock)
    hub.scheduler.add(town.key, lambda: tick_town(town, hub.metrics), engine.town.tick_seconds,
                      paused=service.paused)
    hub.start_upkeep()
    return town


async def tick_town(town: GuildTown, metrics: TownMetrics | None = None) -> None:
    """The scheduled job: one tick, then post what happened and speak words that arrived.
    While the model server is down the town waits (each due tick first checks whether the
    server answers again), and #town-hall is told when it stops and when it goes on."""
    if town.server_down:
        from townbot.llm.probe import answering_again  # only a server stops: openai is loaded

        if not await answering_again(town.engine.model):
            return
        town.server_down = False
        await town.notify("The language-model server answers again; the town goes on.")
    began = time.monotonic()
    try:
        await town.service.tick(interval=town.engine.town.tick_seconds)
    except ServerUnavailable as error:
        town.server_down = True
        await town.notify(f"The town is waiting for its language-model server: {error}. It goes "
                          "on by itself once the server answers again.")
        return
    except AnswersUnusable as error:  # the server answers, but not usably: a person decides
        with contextlib.suppress(TownError):  # already paused by a moderator meanwhile
            await town.service.pause(MODEL_WATCH)
        await town.notify(f"The town is paused: {error}. A moderator resumes it with /mod resume "
                          "once the model is changed.")
        return
    if metrics is not None:
        metrics.tick_done(town.guild_id, time.monotonic() - began, await town.store.backlog())
    town.publisher.wake()
    await deliver_arrivals(town)


async def post_welcome(town: GuildTown, link: str | None = None) -> None:
    """`link`: the town's members-only web page, when it is served."""
    world = town.engine.world
    done = await town.store.welcome()
    hall = world.town_hall_channel
    if _missing(town, done, hall):
        card = welcome_card(world.town, len(world.personas), hall, town.engine.model.label, link)
        await _pin(town, hall, embed=card, view=join_button())
    for sector in world.sectors.values():
        if _missing(town, done, sector.channel):
            hours = sector.hours.describe() if sector.hours else None
            note = area_note(sector.name, sector.description, hours)
            await _pin(town, sector.channel, content=note, view=go_button(sector.channel))


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
    so that the pin never offers a dead link; False (logged) when it could not be changed."""
    world = town.engine.world
    hall = world.town_hall_channel
    done = await town.store.welcome()
    if _missing(town, done, hall):
        return False  # never posted, or its channel was deleted: the next start posts it anew
    card = welcome_card(world.town, len(world.personas), hall, town.engine.model.label, link)
    try:
        await town.channel(hall).get_partial_message(done[hall][1]).edit(embed=card)
    except discord.HTTPException as error:
        log.warning("server %s: the welcome's link could not be changed: %s", town.guild_id,
                    error)
        return False
    return True
