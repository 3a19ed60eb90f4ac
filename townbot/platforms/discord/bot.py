"""The Discord client: opens a town in each allowed server, routes commands and messages."""

from __future__ import annotations

import contextlib
import logging

import discord
from discord import app_commands

from townbot.platforms.discord.commands import all_commands
from townbot.platforms.discord.hub import Hub
from townbot.platforms.discord.setup import SetupError, missing_permissions
from townbot.platforms.discord.speech import handle_message
from townbot.town.service import TownError

log = logging.getLogger(__name__)


def intents() -> discord.Intents:
    chosen = discord.Intents.default()
    chosen.message_content = True  # privileged: visitors speak by writing
    return chosen


def command_tree(client: discord.Client) -> app_commands.CommandTree:
    tree = app_commands.CommandTree(client)
    for command in all_commands():
        tree.add_command(command)
    return tree


class TownBot(discord.Client):
    def __init__(self, hub: Hub) -> None:
        super().__init__(intents=intents(), allowed_mentions=discord.AllowedMentions.none())
        self.hub = hub
        self.tree = command_tree(self)
        self.tree.error(self.command_failed)

    async def setup_hook(self) -> None:
        self.hub.scheduler.start()  # inside the running loop, before the gateway connects

    async def on_ready(self) -> None:
        log.info("connected as %s to %d servers", self.user, len(self.guilds))
        for guild in self.guilds:
            await self.host(guild)

    async def on_guild_join(self, guild: discord.Guild) -> None:
        await self.host(guild)

    async def host(self, guild: discord.Guild) -> None:
        """Open the server's town and give it the commands (on_ready repeats on reconnects)."""
        if not self.hub.config.allows(guild.id):
            log.info("server %s (%s) is not in TOWNBOT_ALLOWED_GUILDS; no town there", guild.id,
                     guild.name)
            return
        if guild.id in self.hub.towns:
            return
        try:
            missing = missing_permissions(guild.me.guild_permissions)
            if missing:
                raise SetupError(f"the bot lacks {', '.join(missing)}; invite it again with the "
                                 "link from `townbot run --dry-run`")
            await self.hub.open_town(guild)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)
        except Exception as error:  # one server's trouble must not stop the others' towns
            self.hub.failures[guild.id] = str(error)
            log.error("server %s (%s): the town could not open: %s", guild.id, guild.name, error,
                      exc_info=not isinstance(error, SetupError | discord.HTTPException | TownError))
            return
        log.info("server %s (%s): the town is open", guild.id, guild.name)

    async def command_failed(self, interaction: discord.Interaction,
                             error: app_commands.AppCommandError) -> None:
        """A bug, not a refusal (those are answered by the command): log it, tell the person."""
        name = interaction.command.qualified_name if interaction.command else "a command"
        log.error("/%s failed", name, exc_info=error)
        text = f"/{name} failed on the bot's side (it is logged); please try again later"
        with contextlib.suppress(discord.HTTPException):
            if interaction.response.is_done():
                await interaction.followup.send(text, ephemeral=True)
            else:
                await interaction.response.send_message(text, ephemeral=True)

    async def on_message(self, message: discord.Message) -> None:
        await handle_message(self.hub, message)

    async def on_guild_channel_delete(self, channel: discord.abc.GuildChannel) -> None:
        town = self.hub.towns.get(channel.guild.id)
        if town is not None and town.slug_of(channel.id) is not None:
            log.warning("#%s was deleted; making it again", channel.name)
            await town.outlet.ensure()

    async def close(self) -> None:
        await self.hub.close()
        await super().close()
