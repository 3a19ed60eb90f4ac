"""A whole offline game day of all 25 residents: the believable-day checks of issue 2."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict

import pytest
from conftest import open_engine

from townbot.cli import main
from townbot.world.clock import minute_of_day

CHECK_TIMES = {"10:00", "14:00", "02:00"}


@pytest.fixture(scope="module")
def day(world, tmp_path_factory):
    """Run one game day once; keep snapshots of where everyone was at a few times."""
    db = tmp_path_factory.mktemp("day") / "day.db"

    async def run() -> dict:
        engine = await open_engine(world, db)
        snapshots: dict[str, dict] = {}
        events = []
        for _ in range(engine.clock.ticks_for(days=1)):
            events += await engine.tick()
            label = engine.clock.now.strftime("%H:%M")
            if label in CHECK_TIMES:
                snapshots[label] = {n: (b.sector, b.arena, b.action, b.walking)
                                    for n, b in engine.bodies.items()}
        await engine.store.close()
        return {"snapshots": snapshots, "events": events, "db": db}

    return asyncio.run(run())


def test_workers_are_at_work_mid_morning(day):
    at_ten = day["snapshots"]["10:00"]
    assert at_ten["Isabella Rodriguez"][0] == "Hobbs Cafe"
    assert at_ten["John Lin"][:2] == ("The Willows Market and Pharmacy", "pharmacy")
    assert at_ten["Tom Moreno"][:2] == ("The Willows Market and Pharmacy", "grocery store")
    assert at_ten["Carmen Ortiz"][0] == "Harvey Oak Supply Store"


def test_students_study_at_the_college_in_the_afternoon(day):
    at_two = day["snapshots"]["14:00"]
    students = ["Klaus Mueller", "Maria Lopez", "Ayesha Khan", "Eddy Lin"]
    at_college = [s for s in students if at_two[s][0] == "Oak Hill College"]
    assert len(at_college) >= 3, {s: at_two[s] for s in students}


def test_everyone_sleeps_at_home_at_night(day, world):
    night = day["snapshots"]["02:00"]
    for name, persona in world.personas.items():
        sector, arena, action, _ = night[name]
        assert (sector, arena, action) == (persona.home_sector, persona.home_arena, "sleeping"), name


def test_each_resident_wakes_at_their_own_time(day, world):
    first_act: dict[str, str] = {}
    for event in day["events"]:
        if event.kind in ("action", "move") and event.text != "is sleeping":
            first_act.setdefault(event.actor, event.game_time)
    for name, persona in world.personas.items():
        hour, minute = map(int, first_act[name][-5:].split(":"))
        woke = hour * 60 + minute
        expected = max(persona.wakes, 7 * 60)  # the town starts at 07:00
        assert expected <= woke < expected + 20, (name, first_act[name])


def test_they_eat_during_the_day(day, world):
    eaters = {e.actor for e in day["events"] if "eating" in e.text}
    assert len(eaters) >= 20


def test_events_appear_in_at_least_ten_channels(day):
    assert len({e.channel for e in day["events"]}) >= 10


def test_export_shows_every_resident_with_observations_and_plans(day, capsys, world):
    assert main(["export", "--db", str(day["db"])]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {a["name"] for a in data["agents"]} == set(world.personas)
    for agent in data["agents"]:
        assert agent["memory_counts"]["observation"] > 20, agent["name"]
        assert agent["memory_counts"]["plan"] >= 3, agent["name"]
        assert 3 <= len(agent["today"]["day_plan"]) <= 8
    kinds = defaultdict(int)
    for event in data["events"]:
        kinds[event["kind"]] += 1
    assert kinds["action"] > 500 and kinds["move"] > 50


def test_a_plan_memory_holds_all_three_levels(day, capsys):
    main(["export", "--db", str(day["db"])])
    data = json.loads(capsys.readouterr().out)
    john = next(a for a in data["agents"] if a["name"] == "John Lin")
    plans = [m["text"] for m in john["memories"]["plan"]]
    assert any("plan for" in p for p in plans)
    assert any("schedule for" in p for p in plans)
    assert any("steps for" in p for p in plans)
    blocks = john["today"]["schedule"]
    assert all(minute_of_day_from(b["start"]) < minute_of_day_from(b["end"]) or
               b["end"][:10] > b["start"][:10] for b in blocks)


def minute_of_day_from(stamp: str) -> int:
    from townbot.world.clock import parse_game_time
    return minute_of_day(parse_game_time(stamp))
