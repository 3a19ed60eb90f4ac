"""Visitors speak by writing in a channel; residents answer there; words written on the way are
said on arrival, also after a restart."""

from __future__ import annotations

from discord_harness import connect, fake_fixture, server_fixture  # noqa: F401  (fixtures)

from townbot.platforms.discord.hosting import tick_town
from townbot.town.service import Person


async def joined(server) -> None:
    """Ada joins at Johnson Park, where Klaus is reading on a bench."""
    await server.slash("town join", name="Ada", description="a curious visitor")
    klaus = server.town.engine.bodies["Klaus Mueller"]
    klaus.sector, klaus.arena, klaus.action = "Johnson Park", "park", "reading on a bench"


async def spoken(server, actor: str) -> list[tuple[str, str]]:
    town = server.town
    events = await town.engine.store.events(town.engine.town.id)
    return [(e.channel, e.text) for e in events if e.kind == "speech" and e.actor == actor]


def reactions(message: dict) -> list[str]:
    return [r["emoji"]["name"] for r in message["reactions"]]


async def test_a_message_is_the_visitors_speech_and_the_resident_answers_by_webhook(server):
    await joined(server)
    message = await server.write("johnson-park", "Good morning, Klaus! Busy day?")
    await server.town.publisher.drain()

    park = server.fake.said(server.channel("johnson-park"))
    answers = [text for name, text in park if name == "Klaus Mueller"]
    assert len(answers) == 1 and answers[0]
    assert [name for name, _ in park].count("Ada") == 1, "her own message already shows her words"
    assert await spoken(server, "Ada") == [("johnson-park", "Good morning, Klaus! Busy day?")]
    assert reactions(message) == []


async def test_writing_in_another_areas_channel_walks_there_and_speaks_on_arrival(server):
    await joined(server)
    fake = server.fake
    closed = await server.write("hobbs-cafe", "A coffee please")
    [refusal] = [m for m in fake.messages(server.channel("hobbs-cafe"))
                 if str(m.get("message_reference", {}).get("message_id")) == closed["id"]]
    assert refusal["content"] == ("you cannot go there now: Hobbs Cafe is closed now (open 8:00 "
                                  "am to 8:00 pm)")

    message = await server.write("oak-hill-college", "Hello, is the library open?")
    assert reactions(message) == ["🚶"]
    assert server.town.engine.bodies["Ada"].travel_sector == "Oak Hill College"
    assert await spoken(server, "Ada") == [], "not said on the way"
    for _ in range(4):
        await tick_town(server.town)
        if await spoken(server, "Ada"):
            break
    assert server.town.engine.bodies["Ada"].sector == "Oak Hill College"
    assert await spoken(server, "Ada") == [("oak-hill-college", "Hello, is the library open?")]


async def test_words_written_on_the_way_are_said_after_a_restart(fake, tmp_path):
    first = await connect(fake, tmp_path)
    await joined(first)
    message = await first.write("oak-hill-college", "Hello, is the library open?")
    assert reactions(message) == ["🚶"]
    await first.bot.close()  # restarted while Ada walks

    again = await connect(fake, tmp_path, guild=first.guild)
    again.ada = first.ada
    assert await spoken(again, "Ada") == []
    for _ in range(4):
        await tick_town(again.town)
        if await spoken(again, "Ada"):
            break
    assert await spoken(again, "Ada") == [("oak-hill-college", "Hello, is the library open?")]
    assert await again.town.store.waiting_words() == []
    await again.bot.close()


async def test_someone_not_in_the_town_is_told_once_how_to_join(server):
    fake = server.fake
    park = server.channel("johnson-park")
    await server.write(park, "hello?")
    await server.write(park, "anyone?")
    hints = [m["content"] for m in fake.messages(park) if m.get("message_reference")]
    assert hints == ["Ada, to speak in Smallville join first with `/town join`; until then your "
                     "messages here are just yours."]
    assert await spoken(server, "Ada") == []


async def test_other_channels_and_the_town_hall_are_not_speech(server):
    await joined(server)
    await server.write("general", "Klaus, hi")
    await server.write("town-hall", "Klaus, hi")
    assert await spoken(server, "Ada") == []


async def test_a_refused_line_is_answered_and_leaves_nothing_behind(server):
    await joined(server)
    park = server.channel("johnson-park")
    await server.write(park, "x" * 501)
    replies = [m["content"] for m in server.fake.messages(park) if m.get("message_reference")]
    assert replies == ["the say is 501 characters long; the limit is 500"]
    async with server.town.store.db.execute("SELECT COUNT(*) FROM discord_echoes") as cursor:
        assert (await cursor.fetchone())[0] == 0


async def test_a_person_who_leaves_on_the_way_says_nothing_on_arrival(server):
    await joined(server)
    await server.write("oak-hill-college", "Hello, library!")
    await server.slash("town leave")
    assert await server.town.store.waiting_words() == []
    person = Person(f"discord:{server.ada}", "Ada")
    assert server.town.service.speaker_of(person) is None
