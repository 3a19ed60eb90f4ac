"""Every use case that posts has a rate limit with the same fair rules as the others (per person
and use case, only accepted uses count, a clear wait in the refusal): a join-and-leave loop
through the town service and through the in-memory Discord posts a handful of lines, not
thousands."""

from __future__ import annotations

import pytest
from conftest import open_engine
from discord_harness import connect, fake_fixture, server_fixture  # noqa: F401  (fixtures)

from townbot.town.admission import DEFAULT_RATES
from townbot.town.service import Person, TownError, TownService

ALEX = Person("test:alex", "Alex")
MOD = Person("test:mod", "Mo", moderator=True)


def test_every_use_case_that_posts_has_a_limit():
    assert {"join", "leave", "go", "say", "set", "interview", "announce",
            "scenario"} <= set(DEFAULT_RATES)


@pytest.fixture
async def town(world, tmp_path):
    clock = [0.0]
    engine = await open_engine(world, tmp_path / "town.db")
    service = TownService(engine, now=lambda: clock[0])
    service.clock = clock  # type: ignore[attr-defined]
    yield service
    await engine.store.close()


async def test_a_join_and_leave_flood_is_held_to_the_limit(town):
    before = len(await town.engine.store.events(town.engine.town.id))
    refusals = []
    for _ in range(50):
        for attempt in (town.join(ALEX, "Alex", "a visitor"), town.leave(ALEX)):
            try:
                await attempt
            except TownError as refusal:
                refusals.append(str(refusal))
    posted = len(await town.engine.store.events(town.engine.town.id)) - before
    assert posted == 6, "three arrivals and three departures"
    assert refusals[0] == "you have used join 3 times in the last 60 s; try again in 61 s"
    town.clock[0] = 61.0  # a minute later the person may come back
    await town.join(ALEX, "Alex", "a visitor")


async def test_walking_back_and_forth_is_limited_and_refusals_cost_nothing(town):
    await town.join(ALEX, "Alex", "a visitor")
    for _ in range(5):
        with pytest.raises(TownError, match="no area called"):
            await town.go(ALEX, "Nowhere")
    for place in ["Oak Hill College", "Johnson Park"] * 5:
        await town.go(ALEX, place)
    with pytest.raises(TownError, match="used go 10 times in the last 60 s"):
        await town.go(ALEX, "Hobbs Cafe")
    for _ in range(5):
        await town.announce(MOD, "The library opens at noon")
    with pytest.raises(TownError, match="used announce 5 times"):
        await town.announce(MOD, "The library opens at noon")


async def test_a_join_and_leave_flood_on_discord_posts_six_lines(server):
    for _ in range(5):
        await server.slash("town join", name="Ada", description="a curious visitor")
        await server.slash("town leave")
    refused = await server.slash("town join", name="Ada", description="a curious visitor")
    assert refused.text.startswith("you have used join 3 times in the last 60 s; try again in")
    assert refused.ephemeral
    town = server.town
    await town.publisher.drain()
    park = server.fake.said(server.channel("johnson-park"))
    lines = [line for _, text in park for line in text.splitlines() if "Ada" in line]
    assert len(lines) == 6, lines
