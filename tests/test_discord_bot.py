"""The client on the in-memory Discord: which servers get a town, the command sync kept apart
from opening towns, a server removed, deleted channels, failures of commands, shutdown."""

from __future__ import annotations

import asyncio
import logging

import discord
from discord_harness import connect, fake_fixture, make_bot, server_fixture, until  # noqa: F401  (fixtures)

from townbot.platforms.discord.bot import GATEWAY_GRACE, ShardedTownBot
from townbot.platforms.discord.hosting import tick_town
from townbot.platforms.discord.hub import MEMORY_ACCESS, POST_GRACE, TICK_GRACE, USE_CASE_GRACE
from townbot.platforms.discord.setup import NEEDED
from townbot.town.requests import LIMITS, SPEED_RANGE


def test_the_bot_asks_for_message_content_and_never_mentions(tmp_path):
    bot = make_bot(tmp_path)
    assert bot.intents.message_content and bot.intents.guilds
    assert bot.allowed_mentions.everyone is False and bot.allowed_mentions.users is False
    assert {c.name for c in bot.tree.get_commands()} == {"town", "object", "mod", "say",
                                                         "whisper", "interview", "help"}


async def test_an_allowed_server_gets_its_town_and_the_commands_are_synced_once(server, tmp_path):
    assert server.guild in server.bot.hub.towns and (tmp_path / f"{server.guild}.db").exists()
    syncs = [r for r in server.fake.requests if r[0] == "PUT" and r[1].endswith("/commands")]
    assert syncs == [("PUT", f"/applications/{server.bot.application_id}/commands")], \
        "globally, apart from any server"
    server.bot.dispatch("ready")  # a reconnect
    await server.fake.settle()
    assert len([r for r in server.fake.requests if r[1].endswith("/commands")]) == 1
    assert len(server.bot.hub.towns) == 1


async def test_a_failed_sync_is_reported_as_such_the_town_runs_and_a_reconnect_retries(
        fake, tmp_path, caplog):
    fake.fail("PUT", r"/commands$", 403, code=50001, message="Missing Access")
    with caplog.at_level(logging.ERROR):
        connected = await connect(fake, tmp_path)
    bot = connected.bot
    assert "the slash commands could not be synced: Discord refused the commands (403 Missing " \
           "Access): the bot was invited without the applications.commands scope" in caplog.text
    assert "could not open" not in caplog.text
    assert bot.sync_problem is not None and connected.guild in bot.hub.towns
    assert connected.guild not in bot.hub.failures

    town = connected.town
    await tick_town(town)
    assert town.engine.clock.tick == 1, "the town runs without its commands"

    bot.dispatch("ready")  # the gateway reconnects: the sync is tried again
    await fake.settle()
    assert bot.commands_synced and bot.sync_problem is None
    exchange = await connected.slash("town status")
    assert exchange.embeds[0]["title"] == "Smallville is running"
    await bot.close()


async def test_a_failed_sync_is_shown_to_moderators_in_status(fake, tmp_path):
    fake.fail("PUT", r"/commands$", 403, code=50001, message="Missing Access")
    connected = await connect(fake, tmp_path)
    fake.commands[None] = [{"id": "1", "name": "town", "type": 1, "options": [
        {"type": 1, "name": "status", "options": []}]}]  # synced by an earlier version
    exchange = await connected.slash("town status", connected.admin)
    assert exchange.text.startswith("Commands: not synced: Discord refused the commands (403")
    exchange = await connected.slash("town status")
    assert exchange.text == "", "members are not bothered with it"
    await connected.bot.close()


async def test_another_server_gets_nothing(fake, tmp_path):
    other = fake.add_guild("Someone else's")
    connected = await connect(fake, tmp_path, allowed_guilds=frozenset({12345}))
    assert connected.bot.hub.towns == {} and not (tmp_path / f"{other}.db").exists()
    exchange = await fake.slash(connected.bot, other, fake.add_member(other, "Bea"),
                                "town status")
    assert "TOWNBOT_ALLOWED_GUILDS" in exchange.text
    await connected.bot.close()


async def test_missing_permissions_are_explained_to_whoever_tries_a_command(fake, tmp_path):
    guild = fake.add_guild("Strict server", bot_permissions=discord.Permissions(
        send_messages=True))
    connected = await connect(fake, tmp_path, guild=guild)
    assert connected.bot.hub.towns == {}
    exchange = await connected.slash("town status")
    assert exchange.text.startswith("the town could not open here: the bot lacks manage channels, "
                                    "manage webhooks, create public threads")
    assert fake.named(guild, "town-hall") == [], "nothing was made"
    await connected.bot.close()


async def test_a_server_joined_later_gets_its_town(server):
    later = server.fake.add_guild("New friends")
    await server.fake.join(later)
    assert later in server.bot.hub.towns
    assert len(server.fake.named(later, "town-hall")) == 1


async def test_a_removed_server_is_ticked_and_posted_no_more(server):
    fake, hub, town = server.fake, server.bot.hub, server.town
    await tick_town(town)
    await town.publisher.drain()
    posted = len(fake.requests)
    assert hub.scheduler.scheduler.get_job(town.key) is not None

    await fake.remove(server.guild)
    assert server.guild not in hub.towns
    assert hub.scheduler.scheduler.get_job(town.key) is None, "no more ticks"
    assert town.publisher._task is None or town.publisher._task.done(), "no more posts"
    await asyncio.sleep(0.2)
    assert len(fake.requests) == posted, "nothing more reached Discord"


async def test_a_deleted_town_channel_is_made_again_at_once(server):
    fake = server.fake
    park = server.channel("johnson-park")
    fake.delete_channel(park)
    await fake.settle()
    [remade] = fake.named(server.guild, "johnson-park")
    assert int(remade["id"]) != park
    assert server.town.outlet.layout.channels["johnson-park"].id == int(remade["id"])
    general = server.channel("general")
    fake.delete_channel(general)  # the server's own: not ours to make again
    await fake.settle()
    assert fake.named(server.guild, "general") == []


async def test_a_failing_command_is_logged_and_the_person_is_told(server, caplog, monkeypatch):
    async def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(server.town.service, "status", broken)
    with caplog.at_level(logging.ERROR):
        exchange = await server.slash("town status")
    assert "/town status failed" in caplog.text and "boom" in caplog.text
    assert exchange.text == ("/town status failed on the bot's side (it is logged); please try "
                             "again later")
    assert exchange.ephemeral


async def test_shutdown_refuses_new_commands_and_finishes_within_ten_seconds(server, monkeypatch):
    town = server.town
    engine_tick = town.engine.tick

    async def endless_tick(**pacing):  # a tick on a model that stopped answering
        await asyncio.sleep(3600)
        return await engine_tick(**pacing)
    monkeypatch.setattr(town.engine, "tick", endless_tick)
    server.bot.hub.scheduler.scheduler.modify_job(town.key, next_run_time=discord.utils.utcnow())
    await until(lambda: town.key in server.bot.hub.scheduler._running)

    closing = asyncio.create_task(server.bot.close())
    await until(lambda: server.bot.closing)
    exchange = await server.slash("town status")
    assert exchange.text == "the bot is shutting down; try again in a minute"
    await asyncio.wait_for(closing, 60)  # the stuck tick was cancelled, not waited for
    assert town.engine.clock.tick == 0, "the cancelled tick committed nothing"
    # Each step waits at most its grace, and together they fit a container's 10 s stop.
    assert GATEWAY_GRACE + TICK_GRACE + POST_GRACE + USE_CASE_GRACE < 10.0


def test_the_commands_serialise_as_discord_expects_with_the_services_limits(tmp_path):
    bot = make_bot(tmp_path)
    payload = {c["name"]: c for c in (c.to_dict(bot.tree) for c in bot.tree.get_commands())}
    assert all(c["dm_permission"] is False for c in payload.values()), "server commands only"
    assert int(payload["mod"]["default_member_permissions"]) == discord.Permissions(
        manage_guild=True).value
    assert all(payload[name]["default_member_permissions"] is None
               for name in payload if name != "mod")
    join = next(o for o in payload["town"]["options"] if o["name"] == "join")
    limits = {o["name"]: o.get("max_length") for o in join["options"]}
    assert limits == {"name": LIMITS["name"], "description": LIMITS["description"], "area": None}
    speed = next(o for o in payload["mod"]["options"] if o["name"] == "speed")["options"][0]
    assert (speed["min_value"], speed["max_value"]) == SPEED_RANGE
    memory = next(o for o in payload["interview"]["options"] if o["name"] == "memory")
    assert [c["value"] for c in memory["choices"]] == list(MEMORY_ACCESS)


def test_the_invite_asks_for_what_the_bot_does():
    assert NEEDED.pin_messages and NEEDED.embed_links and NEEDED.manage_webhooks
    assert not NEEDED.administrator and not NEEDED.manage_messages


async def test_each_process_hosts_only_the_towns_of_its_own_shards(fake, tmp_path):
    guilds = [fake.add_guild(f"Server {n}", guild_id=(1_000_000 + n) << 22) for n in range(4)]
    processes = []
    for shard in (0, 1):
        hub = make_bot(tmp_path).hub
        bot = ShardedTownBot(hub, shard_count=2, shard_ids=[shard], sync=shard == 0)
        await fake.connect(bot)
        processes.append(bot)
    first, second = (set(bot.hub.towns) for bot in processes)
    assert first == {g for g in guilds if (g >> 22) % 2 == 0}
    assert second == {g for g in guilds if (g >> 22) % 2 == 1}
    assert len(list(tmp_path.glob("*.db"))) == 4, "one database per server, in one data folder"
    assert processes[0].commands_synced and len(fake.commands[None]) == 7
    for bot in processes:
        await bot.close()


async def test_a_scheduled_tick_waits_a_quarter_of_its_interval_for_talks(server, monkeypatch):
    town = server.town
    engine_tick, asked = town.engine.tick, []

    async def recorded_tick(**pacing):
        asked.append(pacing)
        return await engine_tick(**pacing)
    monkeypatch.setattr(town.engine, "tick", recorded_tick)
    await tick_town(town)
    assert asked == [{"carry_after": town.engine.town.tick_seconds / 4}]
