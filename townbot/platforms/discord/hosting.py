"""A server's town from opening to every tick: founded or resumed with its channels, webhooks
and pinned welcome, then ticked by the scheduler, its posts sent and the words of visitors who
have arrived said."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from townbot.llm.port import ServerUnavailable
from townbot.llm.watching import AnswersUnusable
from townbot.platforms.discord.hub import Hub
from townbot.platforms.discord.outlet import WebhookOutlet
from townbot.platforms.discord.publisher import Publisher
from townbot.platforms.discord.setup import GuildLike, channel_plan
from townbot.platforms.discord.speech import deliver_arrivals
from townbot.platforms.discord.store import DiscordStore
from townbot.platforms.discord.town import GuildTown
from townbot.platforms.discord.welcome import post_welcome
from townbot.platforms.metrics import TownMetrics
from townbot.town.engine import Engine
from townbot.town.launch import open_engine
from townbot.town.requests import Person, TownError
from townbot.town.rest import Rest
from townbot.town.service import TownService

log = logging.getLogger(__name__)

FOUNDER = Person("discord:townbot", "townbot", moderator=True)  # settings made at founding
# Who pauses a town whose model gives too many unusable answers, in the audit log.
MODEL_WATCH = Person("townbot:model-watch", "townbot's model watch", moderator=True)


async def open_town(hub: Hub, guild: GuildLike) -> GuildTown:
    """The server's town: founded on first use, resumed after, channels checked each time."""
    lock = hub.opening.setdefault(guild.id, asyncio.Lock())
    async with lock:
        if guild.id not in hub.towns:
            hub.towns[guild.id] = await _open(hub, guild)
            hub.failures.pop(guild.id, None)
        return hub.towns[guild.id]


async def _open(hub: Hub, guild: GuildLike) -> GuildTown:
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
        await _close_quietly(engine, store)
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


async def _close_quietly(engine: Engine, store: DiscordStore | None) -> None:
    if store is not None:
        await store.close()
    await engine.model.close()
    await engine.store.close()
