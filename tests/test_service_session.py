"""Every use case of TownService, accepted and refused, in one scripted session against a golden
record: what each person reads (the outcome's text or the refusal), the data platforms build
their messages from, the events posted, and the audit log's rows. A changed word in any of them
fails here; rerun with TOWNBOT_UPDATE_GOLDEN=1 when the change is meant, and read the diff.

The mutation run over townbot/town/service.py (docs/reliability.md) relies on this record to
kill mutants that change what a person is told."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Awaitable
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from recording import Recording

from townbot.llm.offline import OfflineModel
from townbot.llm.stack import build_model_stack
from townbot.mind.answering import Ablation
from townbot.store.database import Store
from townbot.town.admission import AUDIT_TEXT, RateLimit, audited
from townbot.town.engine import Engine
from townbot.town.service import Person, TownError, TownService

GOLDEN = Path(__file__).parent / "golden" / "service_session.json"
ALEX = Person("test:alex", "Alex")
BEA = Person("test:bea", "Bea")
CARL = Person("test:carl", "Carl")
MOD = Person("test:mod", "Mo", moderator=True)
CAFE_SEATS = "Hobbs Cafe: cafe: cafe customer seating"


async def _step(record: list[dict], label: str, call) -> None:
    try:
        outcome = await call
    except TownError as refusal:
        record.append({"step": label, "refused": str(refusal)})
        return
    text, data = outcome.text, json.loads(json.dumps(outcome.data, default=str))
    if "memories" in data:  # the order below the best is retrieval's business, not this file's
        lines = text.splitlines()
        text = f"{lines[0]} (+{len(lines) - 1} lines)"
        data = {"memories": data["memories"][:1], "count": len(data["memories"])}
    record.append({"step": label, "text": text, "data": data,
                   "events": [dataclasses.asdict(e) for e in outcome.events]})


def _script(town: TownService) -> list[tuple[str, Awaitable]]:
    """Every use case, accepted and refused, in order: (the step's label, its call)."""
    eve, fred, gus = Person("test:eve", "Eve"), Person("test:fred", "Fred"), Person("test:gus", "Gus")
    return [
        ("status before anyone joins", town.status(ALEX)),
        ("go before joining", town.go(ALEX, "Johnson Park")),
        ("say before joining", town.say(ALEX, "hello")),
        ("join at the cafe", town.join(ALEX, "Alex", "a reporter", "Hobbs Cafe")),
        ("join twice", town.join(ALEX, "Alex", "a reporter", "Hobbs Cafe")),
        ("join as a resident's first name", town.join(BEA, "klaus", "x", "Johnson Park")),
        ("join with a name too long", town.join(BEA, "B" * 41, "x", "Johnson Park")),
        ("join an unknown area", town.join(BEA, "Bea", "a painter", "Hobbs Caffe")),
        ("join an unknown arena", town.join(BEA, "Bea", "a painter", "Hobbs Cafe: attic")),
        ("join by channel", town.join(BEA, "Bea", "a painter", "#johnson-park")),
        ("where", town.where(ALEX)),
        ("say with a name in small letters", town.say(ALEX, "isabella, good morning!")),
        ("say with a first name only", town.say(ALEX, "ISABELLA, what is on today?")),
        ("say naming someone elsewhere, one resident here",
         town.say(ALEX, "Klaus, are you around?")),
        ("say in the park naming someone elsewhere", town.say(BEA, "Klaus, are you around?")),
        ("say in the park naming someone asleep", town.say(BEA, "Is Arthur up yet?")),
        ("say in the park naming someone walking", town.say(BEA, "Where is John?")),
        ("say in the park naming nobody", town.say(BEA, "What a morning.")),
        ("say naming nobody", town.say(ALEX, "What a lovely place.")),
        ("say nothing", town.say(ALEX, "   ")),
        ("whisper", town.whisper(ALEX, "Isabella", "You want to bake a cake for Maria")),
        ("whisper to a sleeper", town.whisper(ALEX, "Arthur", "You want to call a friend")),
        ("whisper to nobody", town.whisper(ALEX, "Isabela", "hello")),
        ("interview", town.interview(ALEX, "Isabella", "What are you doing today?")),
        ("interview as a persona", town.interview(
            ALEX, "Klaus", "Who is running for mayor?", as_persona="a local journalist")),
        ("interview remembered", town.interview(
            BEA, "Maria", "What are you studying?", remember=True)),
        ("set in the written form", town.set_object(ALEX, f"<{CAFE_SEATS}> is wobbly")),
        ("set with path and state", town.set_object(ALEX, f"<{CAFE_SEATS}>", "fixed")),
        ("set in a bad form", town.set_object(ALEX, "the stove is on fire")),
        ("set a path of two parts", town.set_object(ALEX, "Hobbs Cafe: cafe", "x")),
        ("set an unknown object", town.set_object(ALEX, "Hobbs Cafe: cafe: sofa", "x")),
        ("set to nothing", town.set_object(ALEX, f"<{CAFE_SEATS}>", " ")),
        ("look at a changed object", town.look(ALEX, CAFE_SEATS)),
        ("look at an object in its usual state", town.look(ALEX, "Hobbs Cafe: cafe: piano")),
        ("look at an object in use", town.look(ALEX, "hobbs cafe: Cafe: Coffee Machine")),
        ("profile", town.profile(ALEX, "Isabella Rodriguez")),
        ("profile of nobody", town.profile(ALEX, "Isabel Rodrigues")),
        ("seed by a member", town.seed(ALEX, "Klaus", "Klaus wants tea")),
        ("seed", town.seed(MOD, "Klaus", "Klaus wants to write a poem about the town")),
        ("memories", town.memories(MOD, "Isabella", "party")),
        ("memories, one", town.memories(MOD, "Isabella", "party", count=1)),
        ("memories, fifty", town.memories(MOD, "Isabella", "party", count=50)),
        ("memories, none", town.memories(MOD, "Isabella", "party", count=0)),
        ("memories, too many", town.memories(MOD, "Isabella", "party", count=51)),
        ("memories with an empty query", town.memories(MOD, "Klaus", " ")),
        ("event status before any event", town.event_status(MOD)),
        ("unknown scenario", town.load_scenario(MOD, "valentine-party")),
        ("scenario", town.load_scenario(MOD, "valentines-party")),
        ("event status", town.event_status(MOD)),
        ("announce", town.announce(MOD, "The library closes early today.")),
        ("announce in an area", town.announce(MOD, "Fresh bread!", "Hobbs Cafe")),
        ("announce nothing", town.announce(MOD, "")),
        ("speed, back to back", town.speed(MOD, 0)),
        ("status at full speed", town.status(ALEX)),
        ("speed, slowest", town.speed(MOD, 3600)),
        ("speed, too slow", town.speed(MOD, 3600.5)),
        ("speed, below zero", town.speed(MOD, -1)),
        ("speed, one second", town.speed(MOD, 1)),
        ("status at the terminal's pace", town.status(ALEX, tick_seconds=2.5)),
        ("resume a running town", town.resume(MOD)),
        ("pause", town.pause(MOD)),
        ("pause twice", town.pause(MOD)),
        ("say while paused", town.say(ALEX, "Isabella, hello?")),
        ("status while paused", town.status(ALEX)),
        ("tick while paused", _events(town)),
        ("resume by a member", town.resume(ALEX)),
        ("resume", town.resume(MOD)),
        ("go into someone's home", town.go(ALEX, "Arthur Burton's apartment")),
        ("go somewhere closed", town.go(ALEX, "The Rose and Crown Pub")),
        ("go into an occupied bathroom", town.go(ALEX, "Dorm for Oak Hill College: bathroom")),
        ("go into the cafe kitchen", town.go(ALEX, "Hobbs Cafe: kitchen")),
        ("go within the cafe", town.go(ALEX, "Hobbs Cafe: cafe")),
        ("go to the park", town.go(ALEX, "Johnson Park: park")),
        ("say while walking", town.say(ALEX, "Hello?")),
        ("takeover by a member", town.takeover(ALEX, CARL, "Klaus")),
        ("takeover of someone in town", town.takeover(MOD, BEA, "Klaus")),
        ("takeover", town.takeover(MOD, CARL, "Klaus")),
        ("takeover of a taken resident", town.takeover(MOD, Person("test:dan", "Dan"), "Klaus")),
        ("go as a taken-over resident", town.go(CARL, "Hobbs Cafe")),
        ("leave as a taken-over resident", town.leave(CARL)),
        ("leave", town.leave(BEA)),
        ("leave twice", town.leave(BEA)),
        ("join in the park", town.join(gus, "Gus", "a gardener", "Johnson Park")),
        ("say to one of two by first name", town.say(gus, "Sam, how is the garden?")),
        ("join beside sleepers",
         town.join(eve, "Eve", "a student", "Dorm for Oak Hill College: common room")),
        ("say beside sleepers", town.say(eve, "Hello?")),
        ("takeover of a sleeper", town.takeover(MOD, fred, "Arthur")),
        ("say as a resident, nobody awake", town.say(fred, "I am Arthur, is anyone up?")),
    ]


async def _session(town: TownService) -> list[dict]:
    record: list[dict] = []
    for label, call in _script(town):
        await _step(record, label, call)
    rows = await town.engine.store.audit_rows(town.engine.town.id)
    record.append({"audit": [{k: v for k, v in row.items() if k not in ("at", "id")}
                             for row in rows]})
    return record




async def _events(town: TownService):
    class Ticked:
        def __init__(self, events):
            self.text, self.data, self.events = f"{len(events)} events", {}, events
    return Ticked(await town.tick())


async def test_every_use_case_tells_people_what_the_golden_record_says(world, tmp_path):
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, build_model_stack(OfflineModel(seed=0)))
    town = TownService(engine)
    for _ in range(7):  # 08:10: people are up
        await town.tick()
    record = await _session(town)
    await store.close()
    if os.environ.get("TOWNBOT_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for got, want in zip(record, expected, strict=True):
        assert got == want, "a use case's answer changed; rerun with TOWNBOT_UPDATE_GOLDEN=1 " \
                            "if intended"


async def test_a_scenario_in_a_smaller_town_seeds_those_present_and_names_the_rest(world,
                                                                                  tmp_path):
    from townbot.world.loading import select_residents

    small = select_residents(world, "Klaus, Maria Lopez")
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(small, store, build_model_stack(OfflineModel(seed=0)))
    town = TownService(engine)
    nobody = await town.event_status(MOD)
    outcome = await town.load_scenario(MOD, "valentines-party")
    await store.close()
    assert outcome.text.endswith("(not in this town, so not seeded: Isabella Rodriguez)")
    assert nobody.text == ("Nobody knows of a tracked event yet; load one with the scenario "
                           "command (valentines-party, mayoral-election).")


async def test_event_status_counts_only_todays_plans(world, tmp_path):
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, build_model_stack(OfflineModel(seed=0)))
    town = TownService(engine)
    await town.tick()
    klaus, maria = engine.minds["Klaus Mueller"], engine.minds["Maria Lopez"]
    for mind in (klaus, maria):
        mind.state.planning.day_plan = [*mind.state.planning.day_plan,
                                        "go to Isabella's Valentine's Day party at Hobbs Cafe"]
    klaus.state.planning.day = engine.clock.now.date()
    maria.state.planning.day = engine.clock.now.date() - timedelta(days=1)  # yesterday's plan
    outcome = await town.event_status(MOD)
    await store.close()
    assert outcome.data["events"]["party"]["planning"] == ["Klaus Mueller"]
    assert "  plans to be there today: Klaus Mueller" in outcome.text


async def test_look_names_everyone_using_an_object(world, tmp_path):
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, build_model_stack(OfflineModel(seed=0)))
    town = TownService(engine)
    path = "Hobbs Cafe: cafe: piano"
    for name in ("Klaus Mueller", "Maria Lopez"):
        engine.bodies[name].object_path = path
    outcome = await town.look(ALEX, path)
    await store.close()
    assert outcome.text.endswith("; in use by Klaus Mueller, Maria Lopez.")


def test_a_resident_named_elsewhere_is_found_by_full_or_unique_first_name():
    minds = dict.fromkeys(["John Lin", "John Smith", "Klaus Mueller", "Maria Lopez"])
    town = TownService(SimpleNamespace(minds=minds))  # type: ignore[arg-type]
    elsewhere = town._named_elsewhere
    assert elsewhere("is john smith around?", [], "Alex") == "John Smith"
    assert elsewhere("is john around?", [], "Alex") is None, "two Johns: which one?"
    assert elsewhere("klaus here", [], "Alex") == "Klaus Mueller"
    assert elsewhere("I, Klaus, am here", [], "Klaus Mueller") is None, "not the speaker"
    assert elsewhere("John Lin and Maria?", ["John Lin"], "Alex") == "Maria Lopez"


async def _fresh(world, tmp_path, model=None, scenarios=None):
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, build_model_stack(model or OfflineModel(seed=0)))
    return TownService(engine, scenarios=scenarios), store


async def test_a_sector_alone_means_its_liveliest_arena_of_people_awake(world, tmp_path):
    town, store = await _fresh(world, tmp_path)
    for name in ("Klaus Mueller", "Maria Lopez"):
        body = town.engine.bodies[name]
        body.sector, body.arena, body.action = "Hobbs Cafe", "kitchen", "reading"
    livelier = town.area("Hobbs Cafe")
    isabella = town.engine.bodies["Isabella Rodriguez"]
    isabella.sector, isabella.arena, isabella.action = "Hobbs Cafe", "cafe", "serving"
    two_against_one = town.area("Hobbs Cafe")
    for name in ("Klaus Mueller", "Maria Lopez"):
        town.engine.bodies[name].action = "sleeping"
    asleep = town.area("Hobbs Cafe")
    await store.close()
    assert livelier == two_against_one == ("Hobbs Cafe", "kitchen")
    assert asleep == ("Hobbs Cafe", "cafe"), "sleepers are no company: the first arena"


async def test_a_resident_taken_over_may_go_where_their_staff_may_before_opening(world, tmp_path):
    town, store = await _fresh(world, tmp_path)  # 07:00: Hobbs Cafe opens at 08:00
    await town.takeover(MOD, CARL, "Isabella")
    went = await town.go(CARL, "Hobbs Cafe")
    await store.close()
    assert went.text.startswith("You will be at Hobbs Cafe")


async def test_one_persons_exchange_never_reaches_anothers_reply(world, tmp_path):
    model = Recording()
    town, store = await _fresh(world, tmp_path, model)
    for _ in range(7):
        await town.tick()
    await town.join(ALEX, "Alex", "a reporter", "Hobbs Cafe")
    await town.join(BEA, "Bea", "a painter", "Johnson Park")
    await town.say(ALEX, "Isabella, the secret word is pumpkin.")
    model.prompts.clear()
    await town.say(BEA, "Sam, hello there!")
    await store.close()
    replies = [prompt for purpose, prompt in model.prompts if purpose == "utterance"]
    assert replies and not any("pumpkin" in prompt for prompt in replies)


async def test_an_interview_keeps_the_ablation_the_town_and_what_it_touches(world, tmp_path):
    model = Recording()
    town, store = await _fresh(world, tmp_path, model)
    mind = town.engine.minds["Isabella Rodriguez"]
    before = {m.id: m.last_accessed for m in mind.stream.memories}
    await town.interview(ALEX, "Isabella", "What is on today?",
                         access=Ablation(observations=False, reflections=False, plans=False))
    bare = [prompt for purpose, prompt in model.prompts if purpose == "answer"][-1]
    untouched = {m.id: m.last_accessed for m in mind.stream.memories}
    await town.engine.tick()  # a later moment, so a touch shows
    await town.interview(ALEX, "Isabella", "What is on today?", remember=True)
    touched = {m.id: m.last_accessed for m in mind.stream.memories}
    model.prompts.clear()
    stranger = await town.interview(ALEX, "Isabella", "What do you think of Zed Quill?")
    await town.memories(MOD, "Isabella", "party")
    after_memories = {m.id: m.last_accessed for m in mind.stream.memories}
    await store.close()
    assert "- (nothing comes to mind)" in bare, "no memories with every part switched off"
    assert untouched == before, "an interview not remembered touches nothing"
    assert touched != untouched, "a remembered interview refreshes what it recalled"
    assert after_memories == touched, "a moderator's look at memories touches nothing"
    assert "Zed Quill" in stranger.text and not any(p == "answer" for p, _ in model.prompts), \
        "a person the town does not have is not known, without a model call"


async def test_scenario_edges_no_scenarios_a_broken_one_objects_and_announcements(world,
                                                                                   tmp_path):
    from townbot.world.loading import select_residents

    empty = tmp_path / "none"
    empty.mkdir()
    town, store = await _fresh(world, tmp_path, scenarios=empty)
    with pytest.raises(TownError, match="available: none$"):
        await town.load_scenario(MOD, "fair")
    await store.close()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "broken.yaml").write_text("name: Broken\nname: Twice\n", encoding="utf-8")
    (mine / "fair.yaml").write_text(
        "name: Street fair\ndescription: A fair in the park.\nseeds:\n"
        "  - resident: Klaus Mueller\n    thought: Klaus wants to see the fair.\n"
        "  - resident: Isabella Rodriguez\n    thought: Isabella sells cake at the fair.\n"
        "  - resident: Sam Moore\n    thought: Sam opens the fair.\n"
        "objects:\n  - path: 'Hobbs Cafe: cafe: piano'\n    state: being tuned for the fair\n"
        "announcement: The street fair starts at noon.\n", encoding="utf-8")
    small = select_residents(world, "Klaus, Maria Lopez")
    store = await Store.open(tmp_path / "small.db")
    engine = await Engine.open(small, store, build_model_stack(OfflineModel(seed=0)))
    town = TownService(engine, scenarios=mine)
    with pytest.raises(TownError, match="broken.yaml"):
        await town.load_scenario(MOD, "broken")
    profile = await town.profile(ALEX, "Klaus")
    loaded = await town.load_scenario(MOD, "fair")
    engine.minds["Maria Lopez"].stream = type(engine.minds["Maria Lopez"].stream)(
        engine.town.embedding_dim)
    empty_mind = await town.memories(MOD, "Maria", "fair")
    await store.close()
    assert profile.text.endswith("Today: not planned yet")
    assert loaded.text.endswith("(not in this town, so not seeded: Isabella Rodriguez, "
                                "Sam Moore)")
    assert [e.kind for e in loaded.events] == ["announcement"]
    assert engine.objects["Hobbs Cafe: cafe: piano"] == "being tuned for the fair"
    assert empty_mind.text == "no memories yet"


async def test_rate_limits_are_the_towns_own_counted_to_the_second(world, tmp_path):
    clock = [1000.0]
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, build_model_stack(OfflineModel(seed=0)))
    town = TownService(engine, rates={"whisper": RateLimit(2, 60)}, now=lambda: clock[0])
    await town.whisper(ALEX, "Klaus", "You want tea")
    clock[0] += 20.5
    await town.whisper(ALEX, "Klaus", "You want cake")
    clock[0] += 10
    with pytest.raises(TownError, match=r"used whisper 2 times in the last 60 s; try again in 30 s"):
        await town.whisper(ALEX, "Klaus", "You want more")
    clock[0] = 1060.0  # the first use is exactly 60 s old: it no longer counts
    await town.whisper(ALEX, "Klaus", "You want soup")
    with pytest.raises(TownError, match=r"try again in 21 s"):
        await town.whisper(ALEX, "Klaus", "You want bread")
    for _ in range(6):  # not limited in this town, though the defaults allow five a minute
        await town.interview(ALEX, "Klaus", "How are you?")
    rows = await store.audit_rows(engine.town.id)
    await store.close()
    assert rows[0]["at"].endswith("+00:00"), "audit times are UTC"


def test_an_argument_of_exactly_the_audit_limit_is_kept_whole():
    assert audited("x" * AUDIT_TEXT) == "x" * AUDIT_TEXT
    assert audited("x" * (AUDIT_TEXT + 1)).endswith(f"… [{AUDIT_TEXT + 1} characters in all]")
