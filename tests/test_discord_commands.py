"""Every slash command through discord.py's own CommandTree and Interaction, on the in-memory
Discord: answers, refusals, bad input, autocomplete, and /interview's thread."""

from __future__ import annotations

import asyncio
from typing import Any

import discord
from discord_harness import connect, fake_fixture, server_fixture, until  # noqa: F401  (fixtures)

from townbot.platforms.discord.commands import all_commands
from townbot.platforms.discord.config import DiscordConfig
from townbot.platforms.discord.hub import Hub
from townbot.platforms.discord.scheduler import TownScheduler
from townbot.platforms.discord.store import InterviewThread

STOVE = "Hobbs Cafe: kitchen: stove"


def samples(server) -> dict[str, dict[str, Any]]:
    """Option values a person could give each command."""
    return {
        "town join": {"name": "Ada", "description": "a curious visitor"},
        "town go": {"area": "oak-hill-college"}, "town leave": {}, "town where": {},
        "town status": {}, "town profile": {"resident": "Isabella"}, "town map": {},
        "mod takeover": {"member": server.admin, "resident": "Isabella"},
        "mod pause": {}, "mod resume": {}, "mod speed": {"seconds": 30.0},
        "object set": {"path": STOVE, "state": "burning"}, "object look": {"path": STOVE},
        "mod seed": {"resident": "Klaus", "intent": "wants to visit the park"},
        "mod announce": {"text": "The library opens at noon"},
        "mod scenario": {"name": "valentines-party"},
        "say": {"text": "Hello!"}, "whisper": {"resident": "Klaus", "text": "You feel hungry"},
        "interview": {"resident": "Klaus", "question": "What are you working on?"},
        "mod memories": {"resident": "Klaus", "query": "research"}, "help": {},
        "mod events": {}, "town web": {}, "mod web": {"action": "rotate"},
    }


def names() -> set[str]:
    found = set()
    for command in all_commands(Hub(DiscordConfig(), TownScheduler())):
        for sub in getattr(command, "commands", [command]):
            found.add(sub.qualified_name)
    return found


async def test_every_command_answers_and_only_moderator_commands_refuse_a_member(server):
    assert set(samples(server)) == names()
    refused = set()
    for name, values in samples(server).items():
        exchange = await server.slash(name, **values)
        assert exchange.visible, f"/{name} answered nothing"
        if "only moderators" in exchange.text:
            refused.add(name)
            assert exchange.ephemeral, "a refusal is shown only to the person"
            assert exchange.deferred is None, "refused before anything is deferred"
    assert refused == {name for name in names() if name.startswith("mod ")}


async def test_moderator_commands_are_hidden_from_members_by_discord(server):
    fake = server.fake
    assert "mod" not in fake.visible_commands(server.guild, server.ada)
    assert "mod" in fake.visible_commands(server.guild, server.admin)
    assert {"town", "object", "say", "whisper", "interview", "help"} <= \
        fake.visible_commands(server.guild, server.ada)


async def test_moderator_refusals_change_nothing(server):
    town = server.town
    for name in ("mod pause", "mod speed", "mod announce"):
        await server.slash(name, **samples(server)[name])
    assert not town.service.paused and not server.bot.hub.scheduler.is_paused(town.key)
    assert server.bot.hub.scheduler.interval(town.key) == 3600.0
    events = await town.engine.store.events(town.engine.town.id)
    assert not any("library" in event.text for event in events)


async def test_a_visitor_joins_walks_looks_around_and_leaves(server):
    exchange = await server.slash("town join", name="Ada", description="a curious visitor")
    assert exchange.deferred == {"type": 5, "data": {"flags": 64}}, "deferred, privately"
    assert exchange.text == "You are Ada, a curious visitor, at Johnson Park: park."
    assert exchange.ephemeral

    exchange = await server.slash("town go", area="oak-hill-college")
    assert "Oak Hill College" in exchange.text and "game minutes" in exchange.text
    exchange = await server.slash("town where")
    assert "Ada: walking to Oak Hill College" in exchange.text
    assert "Isabella Rodriguez" in exchange.text
    exchange = await server.slash("town leave")
    assert exchange.text == "Ada has left the town."


async def test_bad_input_is_refused_saying_what_would_be_right(server):
    exchange = await server.slash("town go", area="oak-hill-college")
    assert exchange.text == ("you are not in the town; join first (a name and a one-line "
                             "description)")
    assert exchange.ephemeral
    exchange = await server.slash("town profile", resident="Isabela")
    assert "did you mean 'Isabella Rodriguez'" in exchange.text
    exchange = await server.slash("object look", path="Hobbs Cafe: kitchen: toaster")
    assert "has no 'toaster'" in exchange.text
    exchange = await server.slash("mod speed", server.admin, seconds=-5.0)
    assert exchange.ephemeral and "-5" in exchange.text and "3600" in exchange.text
    assert server.bot.hub.scheduler.interval(server.town.key) == 3600.0


async def test_a_member_who_left_is_bad_input_not_a_failure(server):
    gone = server.fake.add_member(server.guild, "Bea")
    server.fake.remove_member(server.guild, gone)
    exchange = await server.slash("mod takeover", server.admin, member=gone, resident="Klaus")
    assert exchange.text == ("/mod takeover: Bea is not a usable user here; pick one from the "
                             "list Discord offers")
    assert exchange.ephemeral


async def test_a_command_defers_at_once_even_while_a_tick_holds_the_town(server):
    town = server.town
    async with town.service.lock:  # a tick in progress
        pending = asyncio.create_task(server.slash("town status"))
        await until(lambda: any(e.deferred for e in server.fake.exchanges.values()))
        exchange = next(iter(server.fake.exchanges.values()))
        assert exchange.text == "", "deferred, and nothing answered while the tick runs"
    await pending
    assert exchange.embeds[0]["title"] == "Smallville is running"


async def test_manage_server_or_the_moderator_role_may_pause_speed_and_resume(server):
    town, scheduler = server.town, server.bot.hub.scheduler
    mayor_role = server.fake.add_role(server.guild, "Mayor", discord.Permissions())
    mayor = server.fake.add_member(server.guild, "Mayor Sam", roles=(mayor_role,))
    await server.slash("mod pause", mayor)
    assert town.service.paused and scheduler.is_paused(town.key)

    exchange = await server.slash("mod speed", server.admin, seconds=30.0)
    assert "every 30 real seconds" in exchange.text
    assert scheduler.interval(town.key) == 30.0
    assert scheduler.is_paused(town.key), "a new speed does not resume a paused town"

    await server.slash("mod resume", mayor)
    assert not town.service.paused and not scheduler.is_paused(town.key)
    exchange = await server.slash("mod resume", mayor)
    assert exchange.text == "the town is already running" and exchange.ephemeral


async def test_whisper_is_private_and_the_resident_hears_it(server):
    exchange = await server.slash("whisper", resident="Klaus",
                                  text="You should visit Hobbs Cafe today")
    assert exchange.ephemeral
    assert exchange.text.startswith("Klaus Mueller hears the thought")


async def test_an_interview_answers_in_public_and_opens_a_thread_for_more(server):
    fake, town = server.fake, server.town
    exchange = await server.slash("interview", resident="Klaus",
                                  question="What are you working on?")
    assert exchange.deferred == {"type": 5}, "public thinking"
    assert not exchange.ephemeral
    card = exchange.embeds[0]
    assert card["author"]["name"] == "Klaus Mueller"
    assert card["title"] == "What are you working on?" and card["description"]
    assert card["footer"]["text"] == "asked by Ada; more questions in the thread"
    assert [b["label"] for b in exchange.buttons] == ["Ask another question"]

    general = server.channel("general")
    [thread] = fake.threads_of(general)
    answer = exchange.visible[0]
    assert thread["id"] == answer["id"], "the thread starts from the answer itself"
    assert thread["name"] == "Interview with Klaus Mueller"
    assert await town.store.thread(int(thread["id"])) == InterviewThread(
        "Klaus Mueller", "full", False, f"discord:{server.ada}")

    await server.write(int(thread["id"]), "And what do you do for fun?")
    reply = fake.messages(int(thread["id"]))[-1]
    assert reply["embeds"][0]["title"] == "And what do you do for fun?"
    assert reply["embeds"][0]["author"]["name"] == "Klaus Mueller"
    assert reply["embeds"][0]["description"]


async def test_an_interview_in_an_area_channel_is_answered_in_the_thread_by_the_resident(server):
    fake = server.fake
    park = server.channel("johnson-park")
    await fake.slash(server.bot, server.guild, server.ada, "interview", channel_id=park,
                     resident="Klaus", question="Do you like the park?")
    [thread] = fake.threads_of(park)
    await server.write(int(thread["id"]), "Who do you meet here?")
    reply = fake.messages(int(thread["id"]))[-1]
    assert reply["webhook_id"] is not None, "posted through the channel's webhook"
    assert reply["author"]["username"] == "Klaus Mueller"
    assert reply["x_avatar_url"] == ("https://api.dicebear.com/9.x/personas/png?seed="
                                     "Klaus%20Mueller")
    assert reply["embeds"][0]["title"] == "Who do you meet here?"


async def test_a_refused_interview_removes_the_public_thinking_message(server):
    exchange = await server.slash("interview", resident="Nobody", question="Hello?")
    assert exchange.messages[0].get("x_deleted"), "the public 'thinking...' is gone"
    assert exchange.ephemeral and "there is no resident called 'Nobody'" in exchange.text
    assert server.fake.threads_of(server.channel("general")) == []


async def test_objects_can_be_set_and_looked_at(server):
    exchange = await server.slash("object set", path=STOVE, state="burning")
    assert exchange.text == f"<{STOVE}> is burning; anyone there notices at the next tick."
    exchange = await server.slash("object look", path="hobbs cafe: kitchen: stove")
    assert exchange.text == f"<{STOVE}> is burning."


async def test_an_announcement_is_posted_in_the_town_hall(server):
    exchange = await server.slash("mod announce", server.admin, text="The library opens at noon")
    assert exchange.text.startswith("Announced to")
    hall = server.channel("town-hall")
    await until(lambda: len(server.fake.said(hall)) > 1)
    assert server.fake.said(hall)[-1] == ("Smallville",
                                          "`07:00` 📣 **Town hall** The library opens at noon")


async def test_moderators_seed_load_scenarios_read_memories_and_take_over(server):
    exchange = await server.slash("mod scenario", server.admin, name="valentines-party")
    assert exchange.text.startswith("Loaded scenario 'Valentine's Day party'")
    exchange = await server.slash("mod memories", server.admin, resident="Isabella",
                                  query="party", count=3)
    assert "Valentine" in exchange.text and len(exchange.text.splitlines()) == 3
    exchange = await server.slash("mod events", server.admin)
    assert "Isabella's Valentine's Day party: 1 know of it" in exchange.text
    assert "Isabella Rodriguez (started it" in exchange.text
    exchange = await server.slash("mod takeover", server.admin, member=server.ada,
                                  resident="Klaus")
    assert exchange.text.startswith("Ada now speaks and moves as Klaus Mueller")


async def test_a_long_answer_says_where_it_was_cut_and_how_to_see_the_rest(server):
    exchange = await server.slash("mod memories", server.admin, resident="Isabella",
                                  query="the day", count=50)
    parts = [m["content"] for m in exchange.visible]
    assert len(parts) <= 3 and all(len(p) <= 2000 for p in parts)
    if len("".join(parts)) > 5000:  # the offline town's memories fill more than 3 messages
        assert parts[-1].endswith("did not fit in 3 messages; ask for a smaller count.")


async def test_a_server_without_a_town_is_told_so(fake, tmp_path):
    other = fake.add_guild("Other server")
    connected = await connect(fake, tmp_path, allowed_guilds=frozenset({other}))
    exchange = await connected.slash("town status")
    assert exchange.text == ("this server has no town: the bot's owner can add its id to "
                             "TOWNBOT_ALLOWED_GUILDS")
    await connected.bot.close()


async def test_autocomplete_suggests_residents_areas_objects_and_scenarios(server):
    fake, bot, guild, ada = server.fake, server.bot, server.guild, server.ada
    residents = await fake.autocomplete(bot, guild, ada, "town profile", "resident", "is")
    assert residents[0] == "Isabella Rodriguez", "names starting with what was typed come first"
    areas = await fake.autocomplete(bot, guild, ada, "town go", "area", "hobbs")
    assert areas[:3] == ["Hobbs Cafe", "Hobbs Cafe: cafe", "Hobbs Cafe: kitchen"]
    objects = await fake.autocomplete(bot, guild, ada, "object look", "path", "stove")
    assert 1 < len(objects) <= 25 and all("stove" in value for value in objects)
    everything = await fake.autocomplete(bot, guild, ada, "object look", "path", "")
    assert len(everything) == 25 and all(len(value) <= 100 for value in everything)
    scenarios = await fake.autocomplete(bot, guild, server.admin, "mod scenario", "name", "val")
    assert scenarios == ["valentines-party"]


def test_every_name_parameter_is_autocompleted():
    wanted = {"resident", "area", "path", "name"}
    for command in all_commands(Hub(DiscordConfig(), TownScheduler())):
        for sub in getattr(command, "commands", [command]):
            for parameter in sub.parameters:
                if parameter.name in wanted and sub.qualified_name != "town join":
                    assert parameter.autocomplete, f"/{sub.qualified_name} {parameter.name}"
