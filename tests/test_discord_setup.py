"""Setup per server on the in-memory Discord: made once, remade when deleted, nothing of the
server's own touched, posts through the webhooks, and one database per server."""

from __future__ import annotations

import asyncio

import discord
from discord_harness import connect, fake_fixture, server_fixture  # noqa: F401  (fixtures)

from townbot.platforms.discord.hosting import tick_town
from townbot.platforms.discord.setup import missing_permissions
from townbot.store.database import TickChanges
from townbot.world.events import TownEvent


def made(fake) -> list[tuple[str, str]]:
    return [r for r in fake.requests if r[0] == "POST" and r[1].endswith(("/channels",
                                                                         "/webhooks"))]


async def test_setup_makes_the_category_channels_and_webhooks_once(fake, tmp_path, world):
    first = await connect(fake, tmp_path)
    guild = first.guild
    [category] = fake.named(guild, "Smallville")
    assert category["type"] == 4
    slugs = [*(s.channel for s in world.sectors.values()), "town-hall"]
    ours = [c for c in fake.guild_channels(guild) if c["parent_id"] == category["id"]]
    assert [c["name"] for c in ours] == slugs
    cafe = fake.named(guild, "hobbs-cafe")[0]
    assert "Hobbs Cafe" in cafe["topic"]
    hooks = {h["channel_id"]: h["name"] for h in fake.webhooks.values()}
    assert len(hooks) == 20 and hooks[cafe["id"]] == "Smallville #hobbs-cafe"
    await first.bot.close()

    before = len(made(fake))
    again = await connect(fake, tmp_path, guild=guild)
    assert len(made(fake)) == before, "a restart makes nothing that exists"
    assert len(fake.named(guild, "hobbs-cafe")) == 1
    await again.bot.close()


async def test_deleted_channels_and_webhooks_are_made_again_and_the_servers_own_untouched(
        fake, tmp_path):
    first = await connect(fake, tmp_path)
    guild, general = first.guild, first.channel("general")
    await first.bot.close()
    cafe = fake.channel_id(guild, "hobbs-cafe")
    fake.delete_channel(cafe)
    lin = fake.channel_id(guild, "lin-house")
    [lin_hook] = [h for h in fake.webhooks.values() if h["channel_id"] == str(lin)]
    fake.delete_webhook(int(lin_hook["id"]))
    fake.requests.clear()

    again = await connect(fake, tmp_path, guild=guild)
    remade = fake.channel_id(guild, "hobbs-cafe")
    assert remade != cafe and fake.channel_id(guild, "lin-house") == lin
    assert made(fake) == [("POST", f"/guilds/{guild}/channels"),
                          ("POST", f"/channels/{remade}/webhooks"),
                          ("POST", f"/channels/{lin}/webhooks")]
    assert fake.messages(general) == [] and fake.named(guild, "general")
    await again.bot.close()


async def test_a_deleted_category_is_made_again_without_moving_the_channels(fake, tmp_path):
    first = await connect(fake, tmp_path)
    guild = first.guild
    [category] = fake.named(guild, "Smallville")
    fake.delete_channel(int(category["id"]))
    await first.bot.close()
    again = await connect(fake, tmp_path, guild=guild)
    [new] = fake.named(guild, "Smallville")
    assert new["id"] != category["id"]
    assert fake.named(guild, "hobbs-cafe")[0]["parent_id"] == category["id"]
    await again.bot.close()


async def test_a_database_set_up_for_another_server_is_refused(fake, tmp_path):
    first = await connect(fake, tmp_path)
    await first.bot.close()
    other = fake.add_guild("Other")
    (tmp_path / f"{first.guild}.db").rename(tmp_path / f"{other}.db")
    second = await connect(fake, tmp_path, guild=other)
    assert f"this database was set up for server {first.guild}" in \
        second.bot.hub.failures[other]
    await second.bot.close()


def test_missing_permissions_are_named_in_words():
    assert missing_permissions(discord.Permissions(send_messages=True, view_channel=True)) == [
        "manage channels", "manage webhooks", "create public threads",
        "send messages in threads", "read message history", "add reactions", "embed links",
        "pin messages"]


async def test_posts_go_through_the_channels_webhook_never_mention_and_survive_a_deleted_channel(
        server):
    fake, town = server.fake, server.town

    async def say(tick: int, text: str, channel: str = "hobbs-cafe") -> None:
        event = TownEvent("2023-02-13 07:00", channel, "speech", "Isabella Rodriguez", text)
        await town.engine.store.save_tick(TickChanges(town_id=town.engine.town.id,
                                                      next_tick=tick + 1, tick=tick,
                                                      events=[event]))

    await say(0, "@everyone the cafe is open, <@123>!")
    await say(0, "A channel the world lost goes to the town hall", channel="old-bakery")
    await town.publisher.drain()
    cafe = server.channel("hobbs-cafe")
    [message] = [m for m in fake.messages(cafe) if m.get("webhook_id")]
    assert (message["author"]["username"], message["content"]) == (
        "Isabella Rodriguez", "@\u200beveryone the cafe is open, <\u200b@123>!"), \
        "no mention pill either"
    assert message["mention_everyone"] is False
    assert message["x_allowed_mentions"] == {"parse": []}
    assert message["x_avatar_url"].endswith("seed=Isabella%20Rodriguez")
    assert fake.said(server.channel("town-hall"))[-1][1].startswith("A channel the world lost")

    # The bot is told, and makes the channel again while the post meets the deleted webhook
    # (the channel it makes is then not told: its creation event is lost).
    fake.delete_channel(cafe)
    fake.client = None
    await say(1, "Is anyone here?")
    await town.publisher.drain()
    remade = fake.channel_id(server.guild, "hobbs-cafe")
    assert remade != cafe
    assert [t for n, t in fake.said(remade) if n == "Isabella Rodriguez"] == ["Is anyone here?"]
    assert fake.messages(server.channel("general")) == []
    fake.client = server.bot


async def test_a_channel_deleted_while_the_bot_missed_the_event_is_made_again_by_the_publisher(
        server):
    fake, town = server.fake, server.town
    cafe = server.channel("hobbs-cafe")
    fake.client = None  # the gateway is down: the bot still has the channel in its cache
    fake.delete_channel(cafe)
    event = TownEvent("2023-02-13 07:00", "hobbs-cafe", "speech", "Isabella Rodriguez",
                      "Is anyone here?")
    await town.engine.store.save_tick(TickChanges(town_id=town.engine.town.id, next_tick=1,
                                                  tick=0, events=[event]))
    await asyncio.wait_for(town.publisher.drain(), 30)
    remade = fake.channel_id(server.guild, "hobbs-cafe")
    assert remade != cafe
    assert [t for n, t in fake.said(remade) if n == "Isabella Rodriguez"] == ["Is anyone here?"]
    assert town.publisher.counts["gone"] == 1, "one failed post, then the channel made again"
    fake.client = server.bot


async def test_every_post_of_a_day_reaches_discord_once_through_5xx_and_a_restart(fake, tmp_path):
    first = await connect(fake, tmp_path)
    for _ in range(3):
        await tick_town(first.town)
    fake.fail("POST", r"^/webhooks/\d+/webhook-token", 503, after=True)
    fake.fail("POST", r"^/webhooks/\d+/webhook-token", 503)
    fake.fail("POST", r"^/webhooks/\d+/webhook-token", 429, retry_after=0.01)
    fake.fail("POST", r"^/webhooks/\d+/webhook-token", 0, error=OSError("connection reset"),
              after=True)
    await first.town.publisher.drain()
    assert fake.faults == [], "every fault was met"
    events = await first.town.engine.store.events(first.town.engine.town.id)
    await first.bot.close()

    again = await connect(fake, tmp_path, guild=first.guild)
    await again.town.publisher.drain()
    posts = [m for c in fake.channels for m in fake.messages(c) if m.get("webhook_id")
             and m["author"]["username"] != "townbot"]
    speech = [e for e in events if e.kind == "speech"]
    texts = [m["content"] for m in posts]
    for line in speech:
        assert sum(line.text in t for t in texts) == 1, line.text
    assert len(texts) == len(set(texts)), "nothing posted twice"
    assert await again.town.store.backlog() == 0
    await again.bot.close()
