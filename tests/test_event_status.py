"""`/event` for moderators: who knows of each seeded event, by which memory, from whom, and who
has it in today's plan, drawn from memories and plans without model calls; through TownService
and the terminal's Console."""

from __future__ import annotations

import io

import pytest
from conftest import open_engine

from townbot.platforms.console import Console
from townbot.town.service import Person, TownError, TownService

MOD = Person("test:mod", "Mo", moderator=True)
ALEX = Person("test:alex", "Alex")


@pytest.fixture
async def service(world, tmp_path):
    engine = await open_engine(world, tmp_path / "town.db")
    yield TownService(engine)
    await engine.store.close()


async def test_a_seeded_party_is_traced_to_its_memory_without_model_calls(service):
    await service.load_scenario(MOD, "valentines-party")
    sent = []
    service.engine.model.ask = lambda request: sent.append(request)  # any call would show
    outcome = await service.event_status(MOD)
    party = outcome.data["events"]["party"]
    assert [h["resident"] for h in party["heard"]] == ["Isabella Rodriguez"]
    isabella = service.engine.minds["Isabella Rodriguez"].stream.memories
    assert "Valentine" in isabella[party["heard"][0]["memory_id"]].text
    assert "Isabella's Valentine's Day party: 1 know of it" in outcome.text
    assert not sent


async def test_event_status_is_for_moderators(service):
    with pytest.raises(TownError, match="moderator"):
        await service.event_status(ALEX)


async def test_the_terminal_shows_it_with_slash_event(service):
    out = io.StringIO()
    console = Console(service, MOD, out=out, seconds_per_tick=0)
    await console.handle("/scenario mayoral-election")
    await console.handle("/event")
    text = out.getvalue()
    assert "Sam Moore's candidacy for mayor: 1 know of it" in text
    assert "Sam Moore (started it; memory #" in text
