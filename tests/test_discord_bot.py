"""The client: which servers get a town and commands, and what happens to deleted channels."""

from __future__ import annotations

from unittest.mock import AsyncMock

import discord
import pytest
from test_discord_fakes import GUILD, FakeGuild, interaction, invoke, member

from townbot.llm.settings import load_settings
from townbot.platforms.discord.bot import TownBot
from townbot.platforms.discord.config import DiscordConfig
from townbot.platforms.discord.hub import Hub
from townbot.platforms.discord.scheduler import TownScheduler
from townbot.platforms.discord.town import MEMORY_ACCESS
from townbot.town.service import LIMITS, SPEED_RANGE


@pytest.fixture
async def bot(tmp_path):
    config = DiscordConfig(data_dir=tmp_path, tick_seconds=3600.0,
                           allowed_guilds=frozenset({GUILD}))
    client = TownBot(Hub(config, TownScheduler(), settings=load_settings({})))
    client.tree.sync = AsyncMock(return_value=[])  # the one call that would reach Discord
    await client.setup_hook()
    yield client
    await client.close()


def test_the_bot_asks_for_message_content_and_never_mentions(bot):
    assert bot.intents.message_content and bot.intents.guilds
    assert bot.allowed_mentions.everyone is False and bot.allowed_mentions.users is False
    assert {c.name for c in bot.tree.get_commands()} == {"town", "object", "event", "say",
                                                         "whisper", "interview", "memories"}


async def test_an_allowed_server_gets_its_town_and_the_commands(bot, tmp_path):
    guild = FakeGuild(GUILD)
    await bot.host(guild)
    assert GUILD in bot.hub.towns and (tmp_path / f"{GUILD}.db").exists()
    bot.tree.sync.assert_awaited_once_with(guild=guild)
    assert {c.name for c in bot.tree.get_commands(guild=guild)} >= {"town", "interview"}
    await bot.host(guild)  # on_ready again after a reconnect
    assert bot.tree.sync.await_count == 1


async def test_another_server_gets_nothing(bot, tmp_path):
    await bot.host(FakeGuild(99))
    assert bot.hub.towns == {} and not (tmp_path / "99.db").exists()
    fake = interaction(bot.hub, member(), guild_id=99)
    await invoke("town status", fake)
    assert "TOWNBOT_ALLOWED_GUILDS" in fake.followup.send.call_args.args[0]


async def test_missing_permissions_are_explained_to_whoever_tries_a_command(bot):
    await bot.host(FakeGuild(GUILD, permissions=discord.Permissions(send_messages=True)))
    assert bot.hub.towns == {}
    fake = interaction(bot.hub, member())
    await invoke("town status", fake)
    said = fake.followup.send.call_args.args[0]
    assert said.startswith("the town could not open here: the bot lacks view channels, manage "
                           "channels, manage webhooks")


async def test_a_deleted_town_channel_is_made_again_at_once(bot):
    guild = FakeGuild(GUILD)
    await bot.host(guild)
    town = bot.hub.towns[GUILD]
    park = town.outlet.layout.channels["johnson-park"]
    guild.delete_channel(park)
    await bot.on_guild_channel_delete(park)
    assert [c.name for c in guild.channels.values()].count("johnson-park") == 1
    assert town.outlet.layout.channels["johnson-park"] is not park
    await bot.on_guild_channel_delete(guild.general)  # the server's own: not ours to remake
    assert guild.named("general") == [guild.general]


async def test_a_failing_command_is_logged_and_the_person_is_told(bot, caplog):
    fake = interaction(bot.hub, member())
    fake.command.qualified_name = "town status"
    fake.response.is_done.return_value = True
    error = discord.app_commands.CommandInvokeError(fake.command, RuntimeError("boom"))
    await bot.tree.on_error(fake, error)
    assert "/town status failed" in caplog.text
    fake.followup.send.assert_awaited_once_with(
        "/town status failed on the bot's side (it is logged); please try again later",
        ephemeral=True)


def test_the_commands_serialise_as_discord_expects_with_the_services_limits(bot):
    payload = {c["name"]: c for c in (c.to_dict(bot.tree) for c in bot.tree.get_commands())}
    assert all(c["dm_permission"] is False for c in payload.values()), "server commands only"
    join = next(o for o in payload["town"]["options"] if o["name"] == "join")
    limits = {o["name"]: o.get("max_length") for o in join["options"]}
    assert limits == {"name": LIMITS["name"], "description": LIMITS["description"], "area": None}
    speed = next(o for o in payload["town"]["options"] if o["name"] == "speed")["options"][0]
    assert (speed["min_value"], speed["max_value"]) == SPEED_RANGE
    memory = next(o for o in payload["interview"]["options"] if o["name"] == "memory")
    assert [c["value"] for c in memory["choices"]] == list(MEMORY_ACCESS)
