"""Visitors speak by writing in a channel; residents answer there; interview threads go on."""

from __future__ import annotations

import pytest
from test_discord_fakes import (
    GUILD,
    SNOWFLAKES,
    FakeChannel,
    FakeGuild,
    FakeMessage,
    interaction,
    invoke,
    member,
    open_hub,
)

from townbot.platforms.discord.hub import tick_town
from townbot.platforms.discord.speech import handle_message
from townbot.town.service import Person

ADA = Person("discord:7", "Ada")


@pytest.fixture
async def hub(tmp_path):
    hub = await open_hub(tmp_path, FakeGuild())
    town = hub.towns[GUILD]
    await town.service.join(ADA, "Ada", "a curious visitor")  # at Johnson Park
    klaus = town.engine.bodies["Klaus Mueller"]
    klaus.sector, klaus.arena, klaus.action = "Johnson Park", "park", "reading on a bench"
    yield hub
    await hub.close()


def written(hub, slug: str, text: str, author=None) -> FakeMessage:
    channel = hub.towns[GUILD].outlet.layout.channels[slug]
    author = author or member()
    return FakeMessage(next(SNOWFLAKES), text, author, channel, guild=channel.guild)


async def spoken(hub, actor: str) -> list[tuple[str, str]]:
    town = hub.towns[GUILD]
    events = await town.engine.store.events(town.engine.town.id)
    return [(e.channel, e.text) for e in events if e.kind == "speech" and e.actor == actor]


async def test_a_message_is_the_visitors_speech_and_the_resident_answers_by_webhook(hub):
    town = hub.towns[GUILD]
    message = written(hub, "johnson-park", "Good morning, Klaus! Busy day?")
    await handle_message(hub, message)
    await town.publisher.drain()

    park = town.outlet.layout.channels["johnson-park"].said()
    answers = [text for name, text in park if name == "Klaus Mueller"]
    assert len(answers) == 1 and answers[0]
    assert not any(name == "Ada" for name, _ in park), "her own message already shows her words"
    assert await spoken(hub, "Ada") == [("johnson-park", "Good morning, Klaus! Busy day?")]
    assert message.replies == [] and message.reactions == []


async def test_writing_in_another_areas_channel_walks_there_and_speaks_on_arrival(hub):
    town = hub.towns[GUILD]
    closed = written(hub, "hobbs-cafe", "A coffee please")
    await handle_message(hub, closed)
    assert closed.replies == ["you cannot go there now: Hobbs Cafe is closed now (open 8:00 am "
                              "to 8:00 pm)"]

    message = written(hub, "oak-hill-college", "Hello, is the library open?")
    await handle_message(hub, message)
    assert message.reactions == ["🚶"]
    assert town.engine.bodies["Ada"].travel_sector == "Oak Hill College"
    assert await spoken(hub, "Ada") == [], "not said on the way"

    for _ in range(4):
        await tick_town(town)
        if await spoken(hub, "Ada"):
            break
    assert town.engine.bodies["Ada"].sector == "Oak Hill College"
    assert await spoken(hub, "Ada") == [("oak-hill-college", "Hello, is the library open?")]


async def test_someone_not_in_the_town_is_told_once_how_to_join(hub):
    stranger = member(8, "Bob")
    first = written(hub, "johnson-park", "hello?", stranger)
    second = written(hub, "johnson-park", "anyone?", stranger)
    await handle_message(hub, first)
    await handle_message(hub, second)
    assert len(first.replies) == 1 and "/town join" in first.replies[0]
    assert second.replies == []
    assert await spoken(hub, "Bob") == []


async def test_other_channels_bots_and_webhooks_are_not_speech(hub):
    town = hub.towns[GUILD]
    general = FakeMessage(next(SNOWFLAKES), "Klaus, hi", member(), town.outlet.guild.general,
                          guild=town.outlet.guild)
    hall = written(hub, "town-hall", "Klaus, hi")
    bot = written(hub, "johnson-park", "Klaus, hi", member(9, "Some bot"))
    bot.author.bot = True
    hook = written(hub, "johnson-park", "Klaus, hi")
    hook.webhook_id = 1
    for message in (general, hall, bot, hook):
        await handle_message(hub, message)
    assert await spoken(hub, "Ada") == []


async def test_a_refused_line_is_answered_and_leaves_nothing_behind(hub):
    town = hub.towns[GUILD]
    message = written(hub, "johnson-park", "x" * 501)
    await handle_message(hub, message)
    assert message.replies == ["the say is 501 characters long; the limit is 500"]
    async with town.store.db.execute("SELECT COUNT(*) FROM discord_echoes") as cursor:
        assert (await cursor.fetchone())[0] == 0


@pytest.mark.parametrize("in_town_channel", [True, False])
async def test_questions_in_an_interview_thread_are_answered_by_the_resident(hub, in_town_channel):
    town = hub.towns[GUILD]
    parent = town.outlet.layout.channels["johnson-park"] if in_town_channel \
        else town.outlet.guild.general
    thread = FakeChannel(town.outlet.guild, "Interview with Klaus Mueller", parent_id=parent.id)
    fake = interaction(hub, member())
    fake.followup.send.return_value.create_thread.return_value = thread
    await invoke("interview", fake, resident="Klaus", question="What are you working on?")

    question = FakeMessage(next(SNOWFLAKES), "And what do you do for fun?", member(), thread,
                           guild=town.outlet.guild)
    await handle_message(hub, question)
    assert len(thread.messages) == 1
    reply = thread.messages[0]
    if in_town_channel:
        assert reply.author.name == "Klaus Mueller" and reply.webhook_id is not None
    else:
        assert reply.content.startswith("**Klaus Mueller:** ")
