"""The engine: perception, waking, walking, the closing-time and one-person-room norms,
object states, determinism and a golden transcript."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from conftest import open_engine

from townbot.mind.agent import Intent
from townbot.town.body import Body
from townbot.town.perception import Scene
from townbot.world.clock import format_game_time
from townbot.world.model import join_path

GOLDEN = Path(__file__).parent / "golden" / "first_hour.txt"


async def run_ticks(engine, count: int) -> list:
    events = []
    for _ in range(count):
        events += await engine.tick()
    return events


def test_perception_sees_people_and_unusual_objects_in_the_same_arena(world):
    bodies = {
        "Isabella Rodriguez": Body("Hobbs Cafe", "cafe", action="brewing coffee"),
        "Klaus Mueller": Body("Hobbs Cafe", "cafe", action="reading a book"),
        "Maria Lopez": Body("Hobbs Cafe", "kitchen", action="washing up"),
    }
    objects = world.default_object_states()
    objects[join_path("Hobbs Cafe", "cafe", "coffee machine")] = "brewing coffee"
    scene = Scene(bodies, objects, world.default_object_states())
    seen = [s.text for s in scene.perceive("Klaus Mueller")]
    assert "Isabella Rodriguez is brewing coffee" in seen
    assert 'The coffee machine in the cafe is "brewing coffee"' in seen, "a state is quoted"
    assert not any("Maria" in line for line in seen), "another arena is out of sight"
    sighting = scene.perceive("Klaus Mueller")[1]
    assert sighting.kind == "object" and not sighting.attended, "nobody there is using it"
    assert not any("Klaus" in line for line in seen), "nobody observes themselves as others"


def test_perception_is_capped_by_attention_bandwidth(world):
    bodies = {name: Body("Johnson Park", "park", action="strolling") for name in world.personas}
    defaults = world.default_object_states()
    seen = Scene(bodies, defaults, defaults).perceive("Sam Moore", bandwidth=5)
    assert len(seen) == 5


def test_walkers_see_nothing(world):
    walker = Body(None, None, action="walking")
    walker.set_travel("Hobbs Cafe", "cafe", world_start(world))
    bodies = {"Klaus Mueller": walker, "Isabella Rodriguez": Body("Hobbs Cafe", "cafe")}
    assert Scene(bodies, {}, {}).perceive("Klaus Mueller") == []


def world_start(world):
    from townbot.world.clock import parse_game_time
    return parse_game_time(world.start)


async def test_residents_wake_at_their_own_times(engine):
    await run_ticks(engine, 7)  # 07:00 .. 08:00
    assert engine.bodies["Klaus Mueller"].action == "sleeping"  # wakes 08:30
    assert engine.bodies["John Lin"].action != "sleeping"  # wakes 07:00
    await run_ticks(engine, 4)  # .. 08:40
    assert engine.bodies["Klaus Mueller"].action != "sleeping"


async def test_walking_takes_the_shortest_path_time(engine, world):
    events = await run_ticks(engine, 12)
    departures = [e for e in events if e.kind == "move" and e.actor == "John Lin"]
    assert departures, "John walks to work in the morning"
    first = departures[0]
    expected = world.walking_minutes("Lin family's house", "The Willows Market and Pharmacy")
    assert f"({expected} min)" in first.text
    assert first.channel == world.sectors["Lin family's house"].channel


async def test_closed_shop_refuses_customers_but_not_staff(engine):
    engine.clock.tick = 6 * 11  # 18:00
    assert "closed" in engine.availability("Isabella Rodriguez", "The Willows Market and Pharmacy",
                                           "grocery store")
    assert engine.availability("Tom Moreno", "The Willows Market and Pharmacy",
                               "grocery store") is None


async def test_second_person_is_refused_an_occupied_one_person_bathroom(engine):
    await run_ticks(engine, 1)
    dorm = "Dorm for Oak Hill College"
    first = Intent("Klaus Mueller", dorm, "bathroom", "taking a shower", "🚿", "shower", "running")
    second = Intent("Maria Lopez", dorm, "bathroom", "taking a shower", "🚿", "shower", "running")
    for name in ("Klaus Mueller", "Maria Lopez"):
        engine.bodies[name].sector, engine.bodies[name].arena = dorm, f"{name}'s room"
    events: list = []
    engine._apply(first, events)
    engine._apply(second, events)
    assert (engine.bodies["Klaus Mueller"].sector, engine.bodies["Klaus Mueller"].arena) == (
        dorm, "bathroom")
    assert engine.bodies["Maria Lopez"].arena == "Maria Lopez's room"
    refusal = [e for e in events if e.actor == "Maria Lopez"]
    assert refusal and "occupied by Klaus Mueller" in refusal[0].text
    assert any(k.endswith("bathroom") for k in engine.minds["Maria Lopez"].state.places.refused)


async def test_object_in_use_shows_its_state_and_returns_to_default(engine):
    await run_ticks(engine, 1)
    apartment = "Isabella Rodriguez's apartment"
    body = engine.bodies["Isabella Rodriguez"]
    body.sector, body.arena = apartment, "kitchen"
    stove = join_path(apartment, "kitchen", "stove")
    engine._apply(Intent("Isabella Rodriguez", apartment, "kitchen", "cooking eggs", "🍳", "stove",
                         "cooking eggs"), [])
    assert engine.objects[stove] == "cooking eggs"
    engine._apply(Intent("Isabella Rodriguez", apartment, "kitchen", "eating", "🍳",
                         "refrigerator", "open"), [])
    assert engine.objects[stove] == "off"


async def test_a_fixed_seed_gives_the_same_transcript(world, tmp_path):
    transcripts = []
    for run in range(2):
        town = await open_engine(world, tmp_path / f"run{run}.db", seed=7)
        transcripts.append([e.line() for e in await run_ticks(town, 9)])
        await town.store.close()
    assert transcripts[0] == transcripts[1]
    assert len(transcripts[0]) > 25


async def test_golden_transcript_of_the_first_hour(engine):
    lines = [f"#{e.channel} {e.line()}" for e in await run_ticks(engine, 6)]
    if os.environ.get("TOWNBOT_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8").splitlines()
    assert lines == expected, "transcript changed; rerun with TOWNBOT_UPDATE_GOLDEN=1 if intended"


async def test_time_advances_one_tick_per_call(engine):
    start = engine.clock.now
    await run_ticks(engine, 3)
    assert engine.clock.now == start + timedelta(minutes=30)
    assert (await engine.store.town()).tick == 3
    assert format_game_time(engine.clock.now) == "2023-02-13 07:30"


async def test_news_passes_from_person_to_person(engine):
    await run_ticks(engine, 1)
    for name in ("Isabella Rodriguez", "Klaus Mueller", "Maria Lopez"):
        body = engine.bodies[name]
        body.sector, body.arena, body.action = "Hobbs Cafe", "cafe", "having coffee"
        body.travel_sector = body.travel_arena = body.arrive_at = None
    chain = [("Isabella Rodriguez", "Klaus Mueller"), ("Klaus Mueller", "Maria Lopez")]
    for first, second in chain:
        events: list = []
        await engine._hold_conversations(
            [Intent(first, "Hobbs Cafe", "cafe", "having coffee", "☕", talk_to=second)], events)
        assert {e.actor for e in events if e.kind == "speech"} == {first, second}
        heard = [m.text for m in engine.minds[second].stream.by_kind("conversation")
                 if "Valentine" in m.text and f"(heard from {first})" in m.text]
        assert heard, f"{second} learned of the party from {first}"
    await engine._commit([])
    talks = await engine.store.db.execute_fetchall("SELECT COUNT(*) FROM conversations")
    assert talks[0][0] == 2


async def test_a_burning_stove_gets_turned_off(engine):
    engine.clock.tick = 3  # 07:30, Isabella (up at 6:00) is awake
    apartment = "Isabella Rodriguez's apartment"
    body = engine.bodies["Isabella Rodriguez"]
    body.sector, body.arena, body.action = apartment, "kitchen", "making breakfast"
    stove = join_path(apartment, "kitchen", "stove")
    engine.objects[stove] = "burning"
    events = await run_ticks(engine, 1)
    assert any(e.actor == "Isabella Rodriguez" and "stove" in e.text for e in events)
    assert engine.objects[stove] != "burning"
    await run_ticks(engine, 3)
    assert engine.objects[stove] == "off"


def test_trouble_is_noticed_throughout_the_building_and_nothing_else_is(world):
    """A fire in the kitchen is smelled from the common room (the recorded 1.5B morning had
    the family in the common room while the Lin stove burned unseen); an ordinary state in
    another room stays out of sight, and another building hears nothing."""
    house = "Lin family's house"
    stove = join_path(house, "kitchen", "stove")
    objects = {**world.default_object_states(), stove: "burning",
               join_path(house, "kitchen", "refrigerator"): "open"}
    bodies = {"Mei Lin": Body(house, "common room", action="reading"),
              "Sam Moore": Body("Moore family's house", "kitchen", action="cooking")}
    seen = Scene(bodies, objects, world.default_object_states()).perceive("Mei Lin")
    assert [(s.text, s.subject) for s in seen] == [
        ('The stove in the kitchen is "burning"', stove)]
    assert not seen[0].attended
    assert Scene(bodies, objects, world.default_object_states()).perceive("Sam Moore") == []


async def test_cooking_on_a_burning_stove_does_not_put_it_out(engine):
    """Only a reaction to the trouble changes it: a resident who walks in and starts cooking
    leaves the fire a person set, sees it next tick and deals with it."""
    engine.clock.tick = 3  # 07:30, Isabella (up at 6:00) is awake
    apartment = "Isabella Rodriguez's apartment"
    stove = join_path(apartment, "kitchen", "stove")
    engine.objects[stove] = "burning"
    engine._apply(Intent("Isabella Rodriguez", apartment, "kitchen", "cooking eggs", "🍳",
                         "stove", "cooking eggs"), [])
    assert engine.objects[stove] == "burning"
    assert engine.bodies["Isabella Rodriguez"].object_path == stove
    events = await run_ticks(engine, 1)
    assert any(e.actor == "Isabella Rodriguez" and "stove" in e.text for e in events)
    assert engine.objects[stove] != "burning"


def test_a_resident_does_not_note_the_object_it_is_using(world):
    machine = join_path("Hobbs Cafe", "cafe", "coffee machine")
    barista = Body("Hobbs Cafe", "cafe", action="brewing coffee", object_path=machine,
                   object_state="brewing coffee")
    guest = Body("Hobbs Cafe", "cafe", action="waiting")
    bodies = {"Isabella Rodriguez": barista, "Klaus Mueller": guest}
    objects = {**world.default_object_states(), machine: "brewing coffee"}
    scene = Scene(bodies, objects, world.default_object_states())
    own = [s.text for s in scene.perceive("Isabella Rodriguez")]
    other = scene.perceive("Klaus Mueller")
    assert not any("coffee machine" in t for t in own)
    machine_seen = [s for s in other if s.kind == "object"]
    assert machine_seen and machine_seen[0].attended, "someone is using it: nothing to fix"
