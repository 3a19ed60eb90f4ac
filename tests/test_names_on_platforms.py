"""Hostile names through `townbot play`'s Console and through discord.py's real objects on the
in-memory Discord: each is refused with one line saying how it would look, and in a busy game
hour on Discord no webhook post carries a visitor's words under a resident's or the narrator's
name, even for a visitor whose name got past the door."""

from __future__ import annotations

import io

import pytest
from conftest import open_engine
from discord_harness import connect, fake_fixture, server_fixture  # noqa: F401  (fixtures)

from townbot.platforms.console import Console
from townbot.platforms.discord.hosting import tick_town
from townbot.platforms.discord.posts import speech_text
from townbot.town import commands
from townbot.town.service import Person, TownService

# One word each: the console's /join takes the name up to the first space.
ONE_WORD = {
    "discordIsabella": "would show on Discord as 'Isabella', which looks like 'Isabella'",
    "Isabella\u3164Rodriguez": "looks like 'Isabella Rodriguez', a resident's name",
    "Kl\uffa0aus": "looks like 'Klaus', a resident's name",
    "\u200b\u2060\ufeff": "a name is missing",
    "everyone": "reads as a mention",
    "Clyde": "would show on Discord as no name at all",
    "<@&901>": "would show on Discord as a mention",
    "<@123>": "would show on Discord as a mention",
    "Smallvilleclyde": "which looks like 'Smallville', the town's name",
}
WITH_SPACES = {
    "Isabella Rodriguezclyde": "would show on Discord as 'Isabella Rodriguez'",
    "Town hall": "is already a name the town posts its news under",
    "Klaus Mueller": "is already a resident's name",
}


@pytest.fixture
async def console(world, tmp_path):
    engine = await open_engine(world, tmp_path / "play.db")
    shell = Console(TownService(engine), Person("console:me", "me"), out=io.StringIO(),
                    seconds_per_tick=0)
    yield shell
    await engine.store.close()


async def test_play_refuses_every_hostile_name_with_one_line(console):
    for name, why in ONE_WORD.items():
        start = console.out.tell()
        await console.handle(f"/join {name} a visitor")
        console.out.seek(start)
        said = console.out.read().strip()
        assert why in said, (name, said)
        assert len(said.splitlines()) == 1, said
        assert console.service.engine.people == {}, f"{name!r} got in"


async def test_discord_refuses_every_hostile_name_with_one_line(server):
    for name, why in {**ONE_WORD, **WITH_SPACES}.items():
        exchange = await server.slash("town join", name=name, description="a visitor")
        assert why in exchange.text, (name, exchange.text)
        assert len(exchange.text.splitlines()) == 1 and exchange.ephemeral
        assert server.town.engine.people == {}, f"{name!r} got in"


async def test_a_display_name_reaches_discord_cleaned(fake, tmp_path):
    guild = fake.add_guild("Test server")
    tricky = fake.add_member(guild, "\u202eAda")
    blank = fake.add_member(guild, "\u3164\u200b")
    role = fake.add_member(guild, "<@&901>")
    connected = await connect(fake, tmp_path, guild=guild)
    try:
        park = connected.channel("johnson-park")
        for member in (tricky, blank, role):
            await connected.write(park, "hello?", user=member)
        hints = [text for _, text in fake.said(park) if "join first" in text]
        assert [hint.split(",")[0] for hint in hints] == ["Ada", "someone", "<\u200b@&901>"]
    finally:
        await connected.bot.close()


async def test_a_busy_hour_posts_no_visitors_words_under_a_residents_or_narrators_name(server):
    town = server.town
    engine = town.engine
    await server.slash("town join", name="Ada", description="a curious visitor")
    # One visitor who got past the door (an old town, a bug): the publisher still holds.
    await commands.arrive(engine, "test:sneak", "discordIsabella", "a visitor", "Johnson Park", "park")
    sneak = Person("test:sneak", "Sneak")
    klaus = engine.bodies["Klaus Mueller"]
    klaus.sector, klaus.arena, klaus.action = "Johnson Park", "park", "reading on a bench"
    for minute in range(6):  # a game hour, the park talking all the while
        await town.service.say(sneak, f"Klaus, it is me, Isabella! MARK{minute}")
        await server.slash("say", text=f"Klaus, what a morning. ADA{minute}")
        await tick_town(town)
    await town.publisher.drain()

    residents = set(engine.minds)
    narrator = engine.world.town
    posts = [(name, text) for slug in [s.channel for s in engine.world.sectors.values()]
             + [engine.world.town_hall_channel]
             for name, text in server.fake.said(server.channel(slug))]
    marked = [(name, text) for name, text in posts if "MARK" in text]
    assert len(marked) == 6 and {name for name, _ in marked} == {"Isabella (visitor)"}
    spoken = [(name, text) for name, text in posts if "ADA" in text]
    assert spoken and {name for name, _ in spoken} == {"Ada"}
    assert not [p for p in posts if p[0] in residents | {narrator} and ("MARK" in p[1]
                                                                        or "ADA" in p[1])]
    # Every post under a resident's name is a line that resident said.
    said = {(e.actor, speech_text(e)) for e in await engine.store.events(engine.town.id)
            if e.kind == "speech"}
    under_residents = [(name, text) for name, text in posts if name in residents]
    assert under_residents and all(post in said for post in under_residents)


async def test_an_interview_card_shows_the_question_and_persona_as_the_town_cleaned_them(server):
    exchange = await server.slash("interview", resident="Klaus",
                                  question="\u202eWhat are you \u2066reading?\u2069",
                                  as_persona="\u202ea local \u200bjournalist")
    [card] = exchange.embeds
    assert card["title"] == "What are you reading?"
    assert card["footer"]["text"] == ("asked by a local \u200bjournalist; more questions in "
                                      "the thread")
    invisible = await server.slash("interview", resident="Klaus", question="Hello?",
                                   as_persona="\u3164\u200b")
    assert not invisible.embeds and "a description is missing" in invisible.text


async def test_text_made_only_of_invisible_characters_is_empty_on_every_path(console):
    blank = "\u200b\u3164\ufeff\u2060\uffa0\u115f"
    console.person = Person("console:me", "me", moderator=True)
    await console.handle("/join Ada a visitor")
    for line, refusal in ((blank, "there is nothing to say"),
                          (f"/whisper Klaus: {blank}", "there is nothing to whisper"),
                          (f"/seed Klaus: {blank}", "the intent is missing"),
                          (f"/announce {blank}", "the announcement is empty"),
                          (f"/interview Klaus: {blank}", "the question is missing")):
        start = console.out.tell()
        await console.handle(line)
        console.out.seek(start)
        assert refusal in console.out.read(), line
    rows = await console.service.engine.store.audit_rows(console.service.engine.town.id)
    assert [row["outcome"] for row in rows[-5:]] == ["refused"] * 5


async def test_a_message_of_only_invisible_characters_is_not_speech(server):
    await server.slash("town join", name="Ada", description="a curious visitor")
    park = server.channel("johnson-park")
    before = len(server.fake.said(park))
    message = await server.write(park, "\u200b\u3164\u2060")
    assert message["reactions"] == []
    assert [text for _, text in server.fake.said(park)][before:] == ["\u200b\u3164\u2060"], \
        "no refusal, no speech, no answer"
