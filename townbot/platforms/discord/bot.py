"""The Discord client: opens a town in each allowed server, routes commands and messages. It runs
as a plain `discord.Client` or as an `AutoShardedClient` owning some of the bot's shards
(`--shards N --shard-ids`): Discord sends a process only its shards' servers, so a server's town
lives in exactly one process."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import discord
from discord import app_commands

from townbot.platforms.discord.commands import all_commands
from townbot.platforms.discord.hosting import open_town
from townbot.platforms.discord.hub import Hub
from townbot.platforms.discord.respond import press
from townbot.platforms.discord.setup import SetupError, missing_permissions
from townbot.platforms.discord.speech import handle_message
from townbot.town.requests import TownError

log = logging.getLogger(__name__)

GATEWAY_GRACE = 1.0  # seconds to close the gateway politely on shutdown
CLOSING = "the bot is shutting down; try again in a minute"


class TownTree(app_commands.CommandTree):
    """Every command of the town; refuses new interactions once shutdown has begun."""

    def __init__(self, client: discord.Client, hub: Hub) -> None:
        super().__init__(client)
        self.hub = hub
        for command in all_commands(hub):
            self.add_command(command)

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        if getattr(self.client, "closing", False):
            with contextlib.suppress(discord.HTTPException):
                await interaction.response.send_message(CLOSING, ephemeral=True)
            return False
        await self.hub.seen(interaction.guild_id, wait=False)
        return True


def explain_sync_failure(error: BaseException) -> str:
    if isinstance(error, discord.Forbidden):
        return ("Discord refused the commands (403 Missing Access): the bot was invited without "
                "the applications.commands scope; invite it again with the link from `townbot "
                "run --dry-run`, then run `townbot sync`")
    if isinstance(error, discord.HTTPException):
        return f"Discord answered {error.status} ({error.text or 'no reason given'})"
    return f"Discord could not be reached ({error.__class__.__name__}: {error})"


class TownBotBehaviour:
    """The town's side of the client; mixed into discord.Client or AutoShardedClient."""

    def __init__(self, hub: Hub, *, sync: bool = True, **sharding: int | list[int]) -> None:
        # The defaults and message content (privileged): visitors speak by writing.
        intents = discord.Intents(discord.Intents.default().value, message_content=True)
        super().__init__(  # type: ignore[call-arg]
            intents=intents, allowed_mentions=discord.AllowedMentions.none(), **sharding)
        self.hub = hub
        self.tree = TownTree(self, hub)  # type: ignore[arg-type]
        self.tree.error(self.command_failed)
        self.closing = False
        self.gateway_closed = False
        self._town_closing: asyncio.Future[None] | None = None
        self.commands_synced = not sync  # False: sync on (re)connect until it works
        self.sync_problem: str | None = None

    async def setup_hook(self) -> None:
        self.hub.scheduler.start()  # inside the running loop, before the gateway connects

    async def on_ready(self) -> None:
        guilds = self.guilds  # type: ignore[attr-defined]
        log.info("connected as %s to %d servers", self.user, len(guilds))  # type: ignore
        for guild in guilds:
            await self.host(guild)
        if not await self.sync_commands():
            log.error("the slash commands could not be synced: %s; trying again at the next "
                      "reconnect", self.sync_problem)

    async def on_guild_join(self, guild: discord.Guild) -> None:
        await self.host(guild)

    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """Kicked or the server deleted: its town stops ticking and posting, and is closed."""
        if await self.hub.close_town(guild.id):
            log.info("server %s (%s): the bot left; the town is closed (its database stays)",
                     guild.id, guild.name)

    async def sync_commands(self, guild: discord.abc.Snowflake | None = None) -> bool:
        """Give Discord the command tree (globally, or to one server while developing); a
        failure is kept in `sync_problem` and tried again at the next (re)connect."""
        if self.commands_synced and guild is None:
            return True
        try:
            await self.tree.sync(guild=guild)
        except (discord.HTTPException, OSError) as error:
            self.sync_problem = explain_sync_failure(error)
            return False
        self.commands_synced, self.sync_problem = True, None
        log.info("slash commands synced %s", f"to server {guild.id}" if guild else "globally")
        return True

    async def host(self, guild: discord.Guild) -> None:
        """Open the server's town (on_ready repeats on reconnects: an open town stays as is)."""
        if not self.hub.config.allows(guild.id):
            log.info("server %s (%s) is not in TOWNBOT_ALLOWED_GUILDS; no town there", guild.id,
                     guild.name)
            return
        if guild.id in self.hub.towns or self.closing:
            return
        try:
            missing = missing_permissions(guild.me.guild_permissions)
            if missing:
                raise SetupError(f"the bot lacks {', '.join(missing)}; invite it again with the "
                                 "link from `townbot run --dry-run`")
            await open_town(self.hub, guild)
        except Exception as error:  # one server's trouble must not stop the others' towns
            self.hub.failures[guild.id] = str(error)
            log.error("server %s (%s): the town could not open: %s", guild.id, guild.name, error,
                      exc_info=not isinstance(error, SetupError | discord.HTTPException | TownError))
            return
        log.info("server %s (%s): the town is open", guild.id, guild.name)

    async def command_failed(self, interaction: discord.Interaction,
                             error: app_commands.AppCommandError) -> None:
        """A bug, not a refusal (those are answered by the command): log it, tell the person."""
        if isinstance(error, app_commands.CheckFailure):
            return  # refused by interaction_check, already answered
        name = interaction.command.qualified_name if interaction.command else "a command"
        if isinstance(error, app_commands.TransformerError):  # bad input, not a bug
            shown = getattr(error.value, "display_name", None) or repr(error.value)
            text = (f"/{name}: {shown} is not a usable {error.type.name.lower()} here; pick one "
                    "from the list Discord offers")
        else:
            log.error("/%s failed", name, exc_info=error)
            text = f"/{name} failed on the bot's side (it is logged); please try again later"
        with contextlib.suppress(discord.HTTPException):
            if interaction.response.is_done():
                await interaction.followup.send(text, ephemeral=True)
            else:
                await interaction.response.send_message(text, ephemeral=True)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """A button pressed or a form sent is someone being there too (commands count in
        TownTree.interaction_check, before they run); a button of ours is answered here."""
        if interaction.type in (discord.InteractionType.component,
                                discord.InteractionType.modal_submit):
            await self.hub.seen(interaction.guild_id, wait=False)
        if interaction.type == discord.InteractionType.component:
            await press(self.hub, interaction)

    async def on_message(self, message: discord.Message) -> None:
        if not self.closing:
            await handle_message(self.hub, message)

    async def on_guild_channel_delete(self, channel: discord.abc.GuildChannel) -> None:
        town = self.hub.towns.get(channel.guild.id)
        if town is not None and town.slug_of(channel.id) is not None and not self.closing:
            log.warning("#%s was deleted; making it again", channel.name)
            await town.outlet.ensure()

    async def close(self) -> None:
        """Stop taking interactions, close the gateway, then the towns (Hub.close); a second
        call (a second signal) waits for the first instead of closing twice."""
        if self._town_closing is None:
            self._town_closing = asyncio.ensure_future(self._close_town_bot())
        await asyncio.shield(self._town_closing)

    async def _close_town_bot(self) -> None:
        self.closing = True
        self.gateway_closed = True  # before the socket closes: see is_closed
        await self._close_gateway()
        await self.hub.close()
        await super().close()  # type: ignore[misc]

    def is_closed(self) -> bool:
        """Closed, for discord.py's connection loop, from the moment our shutdown closes the
        gateway: that loop takes a gateway closed with code 1000 by a client that is not
        closed yet for a dropped connection, logs an ERROR and connects again 1.5 s later."""
        return getattr(self, "gateway_closed", False) or super().is_closed()  # type: ignore[misc]

    async def _close_gateway(self) -> None:
        shards = getattr(self, "_AutoShardedClient__shards", {})
        sockets = [getattr(self, "ws", None), *(shard.ws for shard in shards.values())]
        for socket in filter(None, sockets):
            with contextlib.suppress(Exception):  # a socket already gone is closed enough
                await asyncio.wait_for(socket.close(code=1000), GATEWAY_GRACE)


class TownBot(TownBotBehaviour, discord.Client):
    """Every shard of the bot in one process."""


class ShardedTownBot(TownBotBehaviour, discord.AutoShardedClient):
    """Some of the bot's shards: `shard_ids` of `shard_count`."""

    def __init__(self, hub: Hub, *, shard_count: int, shard_ids: list[int],
                 sync: bool = True) -> None:
        super().__init__(hub, sync=sync, shard_count=shard_count, shard_ids=shard_ids)
