"""Every slash command driven through its callback with a spec'd Interaction, on a real town."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from test_discord_fakes import (
    GUILD,
    FakeGuild,
    answer,
    answers,
    commands,
    interaction,
    invoke,
    member,
    open_hub,
)

from townbot.platforms.discord.commands import (
    MODERATOR_COMMANDS,
    Areas,
    Objects,
    Residents,
    Scenarios,
    all_commands,
)
from townbot.platforms.discord.store import InterviewThread

STOVE = "Hobbs Cafe: kitchen: stove"


@pytest.fixture
async def hub(tmp_path):
    hub = await open_hub(tmp_path, FakeGuild(), moderator_role="Mayor")
    yield hub
    await hub.close()


def samples() -> dict[str, dict[str, Any]]:
    """Arguments a person could give each command."""
    return {
        "town join": {"name": "Ada", "description": "a curious visitor"},
        "town go": {"area": "oak-hill-college"}, "town leave": {}, "town where": {},
        "town status": {}, "town profile": {"resident": "Isabella"},
        "town takeover": {"member": member(8, "Bob"), "resident": "Isabella"},
        "town pause": {}, "town resume": {}, "town speed": {"seconds": 30.0},
        "object set": {"path": STOVE, "state": "burning"}, "object look": {"path": STOVE},
        "event seed": {"resident": "Klaus", "intent": "wants to visit the park"},
        "event announce": {"text": "The library opens at noon"},
        "event scenario": {"name": "valentines-party"},
        "say": {"text": "Hello!"}, "whisper": {"resident": "Klaus", "text": "You feel hungry"},
        "interview": {"resident": "Klaus", "question": "What are you working on?"},
        "memories": {"resident": "Klaus", "query": "research"},
    }


def test_every_command_has_a_sample_and_the_tree_is_grouped():
    assert set(samples()) == set(commands())
    assert [c.name for c in all_commands()] == ["town", "object", "event", "say", "whisper",
                                                "interview", "memories"]


async def test_every_command_answers_and_only_moderator_commands_refuse_a_visitor(hub):
    refused = set()
    for name, arguments in samples().items():
        fake = interaction(hub, member())
        await invoke(name, fake, **arguments)
        said = answers(fake)
        assert said, f"/{name} answered nothing"
        if "only moderators" in said[0][0]:
            refused.add(name)
            assert said[0][1] is True, "a refusal is shown only to the person"
            fake.response.defer.assert_not_awaited()
    assert refused == MODERATOR_COMMANDS


async def test_moderator_refusals_change_nothing(hub):
    town = hub.towns[GUILD]
    for name in ("town pause", "town speed", "event announce"):
        await invoke(name, interaction(hub, member()), **samples()[name])
    assert not town.service.paused and not hub.scheduler.is_paused(town.key)
    assert hub.scheduler.interval(town.key) == 3600.0
    events = await town.engine.store.events(town.engine.town.id)
    assert not any("library" in event.text for event in events)


async def test_a_visitor_joins_walks_looks_around_and_leaves(hub):
    ada = member()
    fake = interaction(hub, ada)
    await invoke("town join", fake, name="Ada", description="a curious visitor")
    fake.response.defer.assert_awaited_once_with(ephemeral=True, thinking=True)
    assert answers(fake) == [("You are Ada, a curious visitor, at Johnson Park: park.", True)]

    fake = interaction(hub, ada)
    await invoke("town go", fake, area="oak-hill-college")
    assert "Oak Hill College" in answer(fake) and "game minutes" in answer(fake)

    fake = interaction(hub, ada)
    await invoke("town where", fake)
    assert "Ada: walking to Oak Hill College" in answer(fake)
    assert "Isabella Rodriguez" in answer(fake)

    fake = interaction(hub, ada)
    await invoke("town leave", fake)
    assert answer(fake) == "Ada has left the town."


async def test_a_refusal_tells_the_person_what_would_be_right_and_no_one_else(hub):
    fake = interaction(hub, member())
    await invoke("town go", fake, area="oak-hill-college")
    assert answers(fake) == [("you are not in the town; join first (a name and a one-line "
                              "description)", True)]

    fake = interaction(hub, member())
    await invoke("town profile", fake, resident="Isabela")
    assert "did you mean 'Isabella Rodriguez'" in answer(fake)


async def test_a_command_defers_at_once_even_while_a_tick_holds_the_town(hub):
    town = hub.towns[GUILD]
    fake = interaction(hub, member())
    async with town.service.lock:  # a tick in progress
        pending = asyncio.create_task(invoke("town status", fake))
        for _ in range(300):  # waits on the loop, not on a lucky timing
            if fake.response.defer.await_count:
                break
            await asyncio.sleep(0.01)
        fake.response.defer.assert_awaited_once()
        fake.followup.send.assert_not_awaited()
    await pending
    assert "Smallville is running" in answer(fake)
    assert "events waiting to be posted" in answer(fake)


async def test_manage_server_or_the_moderator_role_may_pause_speed_and_resume_the_job(hub):
    town = hub.towns[GUILD]
    mayor = member(9, "Mayor Sam", roles=("Mayor",))
    await invoke("town pause", interaction(hub, mayor))
    assert town.service.paused and hub.scheduler.is_paused(town.key)

    admin = member(10, "Admin", manage_guild=True)
    fake = interaction(hub, admin)
    await invoke("town speed", fake, seconds=30.0)
    assert "every 30 real seconds" in answer(fake)
    assert hub.scheduler.interval(town.key) == 30.0
    assert hub.scheduler.is_paused(town.key), "a new speed does not resume a paused town"

    await invoke("town resume", interaction(hub, mayor))
    assert not town.service.paused and not hub.scheduler.is_paused(town.key)
    fake = interaction(hub, mayor)
    await invoke("town resume", fake)
    assert answers(fake) == [("the town is already running", True)]


async def test_whisper_defers_and_the_resident_hears_it(hub):
    fake = interaction(hub, member())
    await invoke("whisper", fake, resident="Klaus", text="You should visit Hobbs Cafe today")
    fake.response.defer.assert_awaited_once_with(ephemeral=True, thinking=True)
    assert answer(fake).startswith("Klaus Mueller hears the thought")


async def test_an_interview_answers_in_public_and_opens_a_thread_for_more(hub):
    town = hub.towns[GUILD]
    fake = interaction(hub, member())
    await invoke("interview", fake, resident="Klaus", question="What are you working on?")
    fake.response.defer.assert_awaited_once_with(thinking=True)
    text, ephemeral = answers(fake)[0]
    assert not ephemeral
    assert text.startswith("**Ada** asks **Klaus Mueller**: What are you working on?\n"
                           "**Klaus Mueller:** ")
    sent = fake.followup.send.return_value
    sent.create_thread.assert_awaited_once_with(name="Interview with Klaus Mueller",
                                                auto_archive_duration=60)
    thread_id = sent.create_thread.return_value.id
    assert await town.store.thread(thread_id) == InterviewThread("Klaus Mueller", "full", False,
                                                                 "discord:7")


async def test_a_refused_interview_removes_the_public_thinking_message(hub):
    fake = interaction(hub, member())
    await invoke("interview", fake, resident="Nobody", question="Hello?")
    fake.delete_original_response.assert_awaited_once()
    assert answers(fake) == [(answers(fake)[0][0], True)]
    assert "there is no resident called 'Nobody'" in answer(fake)


async def test_objects_can_be_set_and_looked_at(hub):
    fake = interaction(hub, member())
    await invoke("object set", fake, path=STOVE, state="burning")
    assert answer(fake) == f"<{STOVE}> is burning; anyone there notices at the next tick."
    fake = interaction(hub, member())
    await invoke("object look", fake, path="hobbs cafe: kitchen: stove")
    assert answer(fake) == f"<{STOVE}> is burning."
    fake = interaction(hub, member())
    await invoke("object look", fake, path="Hobbs Cafe: kitchen: toaster")
    assert "has no 'toaster'" in answer(fake)


async def test_an_announcement_is_posted_in_the_town_hall(hub):
    town = hub.towns[GUILD]
    fake = interaction(hub, member(10, "Admin", manage_guild=True))
    await invoke("event announce", fake, text="The library opens at noon")
    assert answer(fake).startswith("Announced to")
    hall = town.outlet.layout.channels["town-hall"]
    for _ in range(1000):  # up to 10 s on a busy machine
        if hall.messages:
            break
        await asyncio.sleep(0.01)
    assert hall.said() == [("Smallville", "`07:00` 📣 **Town hall** The library opens at noon")]


async def test_moderators_seed_load_scenarios_read_memories_and_take_over(hub):
    admin = member(10, "Admin", manage_guild=True)
    fake = interaction(hub, admin)
    await invoke("event scenario", fake, name="valentines-party")
    assert answer(fake).startswith("Loaded scenario 'Valentine's Day party'")
    fake = interaction(hub, admin)
    await invoke("memories", fake, resident="Isabella", query="party", count=3)
    assert "Valentine" in answer(fake) and len(answer(fake).splitlines()) == 3
    fake = interaction(hub, admin)
    await invoke("town takeover", fake, member=member(8, "Bob"), resident="Klaus")
    assert answer(fake).startswith("Bob now speaks and moves as Klaus Mueller")


async def test_a_server_without_a_town_is_told_so(hub):
    fake = interaction(hub, member(), guild_id=999)
    await invoke("town status", fake)
    assert answers(fake) == [("the town is still opening; try again in a moment", True)]
    hub.config = replace(hub.config, allowed_guilds=frozenset({GUILD}))
    fake = interaction(hub, member(), guild_id=999)
    await invoke("town status", fake)
    assert "TOWNBOT_ALLOWED_GUILDS" in answer(fake)


async def test_autocomplete_suggests_residents_areas_objects_and_scenarios(hub):
    fake = interaction(hub, member())
    residents = [c.value for c in await Residents().autocomplete(fake, "is")]
    assert residents[0] == "Isabella Rodriguez", "names starting with what was typed come first"
    areas = [c.value for c in await Areas().autocomplete(fake, "hobbs")]
    assert areas[:3] == ["Hobbs Cafe", "Hobbs Cafe: cafe", "Hobbs Cafe: kitchen"]
    objects = await Objects().autocomplete(fake, "stove")
    assert 1 < len(objects) <= 25 and all("stove" in c.value for c in objects)
    assert all(len(c.value) <= 100 for c in await Objects().autocomplete(fake, ""))
    assert [c.value for c in await Scenarios().autocomplete(fake, "val")] == ["valentines-party"]
    assert await Residents().autocomplete(interaction(hub, member(), guild_id=999), "is") == []


def test_every_name_parameter_is_autocompleted():
    wanted = {"resident", "area", "path", "name"}
    for name, command in commands().items():
        for parameter in command.parameters:
            if parameter.name in wanted and name != "town join":
                assert parameter.autocomplete, f"/{name} {parameter.name}"
