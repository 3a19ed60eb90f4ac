"""Setup per server against a fake guild: made once, remade when deleted, nothing else touched."""

from __future__ import annotations

import discord
import pytest
from test_discord_fakes import FakeGuild, FakeTime

from townbot.platforms.discord.outlet import WebhookOutlet
from townbot.platforms.discord.publisher import Publisher
from townbot.platforms.discord.setup import channel_plan, ensure_layout, missing_permissions
from townbot.platforms.discord.store import DiscordStore, LayoutError
from townbot.store.database import Store, TickChanges
from townbot.world.events import TownEvent


@pytest.fixture
async def stores(tmp_path):
    store = await Store.open(tmp_path / "t.db")
    town = await store.create_town("Smallville", "2023-02-13 07:00", 10, 0, "offline", "hash", 8,
                                   {}, {})
    discord_store = await DiscordStore.open(tmp_path / "t.db", town.id)
    yield store, discord_store
    await discord_store.close()
    await store.close()


async def test_setup_makes_the_category_channels_and_webhooks_once(world, stores, tmp_path):
    _, discord_store = stores
    guild, plan = FakeGuild(), channel_plan(world)
    layout = await ensure_layout(guild, plan, discord_store)

    assert guild.calls[0] == ("create_category", "Smallville")
    assert [name for call, name in guild.calls if call == "create_text_channel"] == [
        *(s.channel for s in world.sectors.values()), "town-hall"]
    assert len([c for c in guild.calls if c[0] == "create_webhook"]) == 20
    cafe = layout.channels["hobbs-cafe"]
    assert cafe.category.name == "Smallville" and "Hobbs Cafe" in cafe.topic
    assert all(layout.webhooks[slug].channel_id == layout.channels[slug].id for slug in plan.slugs)

    before = list(guild.calls)
    again = await ensure_layout(guild, plan, discord_store)
    restarted = await DiscordStore.open(tmp_path / "t.db", discord_store.town_id)
    after_restart = await ensure_layout(guild, plan, restarted)
    await restarted.close()
    assert guild.calls == before, "a rerun changes nothing that exists"
    assert {s: c.id for s, c in again.channels.items()} == \
        {s: c.id for s, c in layout.channels.items()} == \
        {s: c.id for s, c in after_restart.channels.items()}


async def test_deleted_channels_and_webhooks_are_made_again_and_the_servers_own_untouched(
        world, stores):
    _, discord_store = stores
    guild, plan = FakeGuild(), channel_plan(world)
    layout = await ensure_layout(guild, plan, discord_store)
    guild.delete_channel(layout.channels["hobbs-cafe"])
    layout.webhooks["lin-house"].deleted = True
    guild.calls.clear()

    repaired = await ensure_layout(guild, plan, discord_store)
    assert guild.calls == [("create_text_channel", "hobbs-cafe"),
                           ("create_webhook", "hobbs-cafe"), ("create_webhook", "lin-house")]
    assert repaired.channels["hobbs-cafe"].id != layout.channels["hobbs-cafe"].id
    assert repaired.channels["lin-house"].id == layout.channels["lin-house"].id
    assert guild.named("general") == [guild.general] and guild.general.messages == []
    assert len(guild.named("hobbs-cafe")) == 1


async def test_a_deleted_category_is_made_again_without_moving_the_channels(world, stores):
    _, discord_store = stores
    guild, plan = FakeGuild(), channel_plan(world)
    layout = await ensure_layout(guild, plan, discord_store)
    guild.delete_channel(guild.get_channel(layout.category_id))
    guild.calls.clear()
    again = await ensure_layout(guild, plan, discord_store)
    assert guild.calls == [("create_category", "Smallville")]
    assert again.channels["hobbs-cafe"] is layout.channels["hobbs-cafe"]


async def test_a_database_set_up_for_another_server_is_refused(world, stores):
    _, discord_store = stores
    await ensure_layout(FakeGuild(1), channel_plan(world), discord_store)
    with pytest.raises(LayoutError, match="set up for server 1"):
        await ensure_layout(FakeGuild(2), channel_plan(world), discord_store)


def test_missing_permissions_are_named_in_words():
    assert missing_permissions(discord.Permissions(send_messages=True, view_channel=True)) == [
        "manage channels", "manage webhooks", "create public threads",
        "send messages in threads", "read message history", "add reactions"]


async def test_posts_use_the_channels_webhook_never_mention_and_survive_a_deleted_channel(
        world, stores):
    store, discord_store = stores
    guild, plan = FakeGuild(), channel_plan(world)
    outlet = WebhookOutlet(guild, plan, discord_store,
                           avatar_url="https://example.org/a/{name}.png")
    await outlet.ensure()
    clock = FakeTime()
    posting = Publisher(discord_store, outlet, "Smallville", clock=clock, sleep=clock.sleep)

    async def say(tick: int, text: str, channel: str = "hobbs-cafe") -> None:
        event = TownEvent("2023-02-13 07:00", channel, "speech", "Isabella Rodriguez", text)
        await store.save_tick(TickChanges(town_id=discord_store.town_id, next_tick=tick + 1,
                                          tick=tick, events=[event]))

    await say(0, "@everyone the cafe is open, <@123>!")
    await say(0, "A channel the world lost goes to the town hall", channel="old-bakery")
    await posting.drain()
    first = outlet.layout.channels["hobbs-cafe"]
    message = first.messages[0]
    assert (message.author.name, message.content) == (
        "Isabella Rodriguez", "@everyone the cafe is open, <@123>!")
    assert message.avatar_url == "https://example.org/a/Isabella%20Rodriguez.png"
    assert outlet.layout.channels["town-hall"].said()[0][1].startswith("A channel the world lost")

    guild.delete_channel(first)
    await say(1, "Is anyone here?")
    await posting.drain()
    remade = outlet.layout.channels["hobbs-cafe"]
    assert remade is not first and remade.said() == [("Isabella Rodriguez", "Is anyone here?")]
    assert guild.general.messages == []
