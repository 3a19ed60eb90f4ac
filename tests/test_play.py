"""`townbot play`: a scripted terminal session through the real Console and TownService, and
the piped command line a newcomer runs."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from conftest import ROOT, open_engine

from townbot.platforms.console import Console
from townbot.town.service import Person, TownService


@pytest.fixture
async def console(world, tmp_path):
    engine = await open_engine(world, tmp_path / "play.db")
    out = io.StringIO()
    shell = Console(TownService(engine), Person("console:me", "me", moderator=True), out=out,
                    seconds_per_tick=0)
    yield shell
    await engine.store.close()


async def run(console: Console, *lines: str) -> str:
    start = console.out.tell()
    for line in lines:
        await console.handle(line)
    console.out.seek(start)
    text = console.out.read()
    console.out.seek(0, io.SEEK_END)
    return text


async def test_a_visitor_greets_isabella_and_is_answered_in_the_same_tick(console):
    await run(console, "/wait 7")  # 08:10: Hobbs Cafe is open, Isabella is behind the counter
    joined = await run(console, "/join Alex a reporter for the Smallville Gazette @ Hobbs Cafe")
    assert "You are Alex" in joined and "Hobbs Cafe" in joined
    tick = console.service.engine.clock.tick
    answer = await run(console, "Good morning Isabella!")
    assert "Isabella Rodriguez:" in answer
    assert '#hobbs-cafe' in answer and 'Alex: "Good morning Isabella!"' in answer
    assert console.service.engine.clock.tick == tick


async def test_a_whisper_changes_a_residents_plans(console):
    await run(console, "/wait 7")
    john = console.service.engine.minds["John Lin"]
    before = [b.activity for b in john.state.planning.blocks]
    out = await run(console, "/whisper John Lin: You are going to run against Sam in the "
                             "upcoming election")
    assert "rewrites the rest of the day" in out
    assert [b.activity for b in john.state.planning.blocks] != before


async def test_a_burning_stove_is_dealt_with_by_whoever_is_in_that_kitchen(console):
    engine = console.service.engine
    cook = None
    for _ in range(40):
        await console.tick()
        cook = next((name for name, body in sorted(engine.bodies.items())
                     if name in engine.minds and body.arena == "kitchen" and not body.walking
                     and "stove" in engine.world.arena(body.sector, "kitchen").objects
                     and body.action != "sleeping"), None)
        if cook:
            break
    assert cook, "someone is in a kitchen within the first hours"
    kitchen = engine.bodies[cook].sector
    out = await run(console, f"/set <{kitchen}: kitchen: stove> is burning", "/wait 1")
    assert "is now burning" in out
    assert any(cook in line and "stove" in line for line in out.splitlines()), out
    assert engine.objects[f"{kitchen}: kitchen: stove"] != "burning"


async def test_an_interview_answers_from_memory_and_keeps_the_memory_count(console):
    sam = console.service.engine.minds["Sam Moore"]
    count = len(sam.stream)
    out = await run(console, "/interview Sam Moore: Who is running for mayor? as a reporter")
    assert "Sam Moore:" in out and "mayor" in out.lower()
    assert len(sam.stream) == count


async def test_the_party_scenario_loads_and_errors_are_explained(console):
    out = await run(console, "/scenario valentines-party")
    assert "Loaded scenario 'Valentine's Day party'" in out
    out = await run(console, "/whisper Nobody: hi", "/frobnicate", "/speed fast", "/wait x")
    refusals = out.splitlines()
    assert len(refusals) == 4 and all(line.startswith("! ") for line in refusals), \
        "every refusal, an unknown command's too, looks the same"
    assert "there is no command /frobnicate" in out and "/help" in out
    assert "there is no resident called 'Nobody'" in out


def test_a_piped_session_from_the_command_line(tmp_path):
    script = "/join Alex a reporter\nWho is running for mayor?\n"
    done = subprocess.run([sys.executable, "-m", "townbot", "play", "--ticks", "6", "--speed",
                           "0", "--db", str(tmp_path / "t.db")], input=script, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "offline model" in lines[0]
    assert any(line.startswith("> You are Alex") for line in lines)
    answers = [line for line in lines if "Sam Moore" in line and "mayor" in line]
    assert len(answers) == 1 and 'Sam Moore: "' in answers[0]  # the answer once, as said
    assert any(line.startswith("07:50 #") for line in lines), "six ticks: 07:00 to 07:50"


async def test_the_running_clock_lets_slow_talks_carry_over_and_a_typed_tick_waits(console,
                                                                                 monkeypatch):
    engine = console.service.engine
    engine_tick, asked = engine.tick, []

    async def recorded_tick(**pacing):
        asked.append(pacing)
        return await engine_tick(**pacing)
    monkeypatch.setattr(engine, "tick", recorded_tick)
    console.seconds_per_tick = 0.01
    await console.run_clock(limit=1)
    await run(console, "/wait 1")
    assert asked == [{"carry_after": 0.0025}, {"carry_after": None}]


async def test_wait_stays_within_the_ticks_of_the_session(console):
    """`--ticks 12` is the session's length: `/wait 1000` once ran 1,000 ticks past it."""
    console.tick_limit, console.ticks_done = 12, 9
    tick = console.service.engine.clock.tick
    out = await run(console, "/wait 1000", "/wait 4")
    assert out.splitlines() == ["! 1000 ticks is out of range; wait 1 to 3 ticks (--ticks 12 "
                                "leaves 3)", "! 4 ticks is out of range; wait 1 to 3 ticks "
                                "(--ticks 12 leaves 3)"]
    assert console.service.engine.clock.tick == tick, "a refused wait runs no tick"
    await run(console, "/wait 3")
    assert console.ticks_done == 12
    assert (await run(console, "/wait")).strip() == \
        "! all 12 ticks of --ticks have passed; /quit to leave"
    console.tick_limit = None
    assert "wait 1 to 1000 ticks" in await run(console, "/wait 1001")


async def test_a_conversation_block_is_shown_among_the_ticks_other_events_in_time_order(console):
    from townbot.world.events import TownEvent

    tick = [TownEvent("2023-02-13 17:40", "hobbs-cafe", "action", "Isabella Rodriguez",
                      "is wiping the counter"),
            TownEvent("2023-02-13 17:31", "hobbs-cafe", "speech", "Maria Lopez", "Hello!"),
            TownEvent("2023-02-13 17:37", "hobbs-cafe", "speech", "Klaus Mueller", "Hi, Maria."),
            TownEvent("2023-02-13 17:30", "johnson-park", "action", "Sam Moore", "is walking")]
    start = console.out.tell()
    console.show(tick)
    console.out.seek(start)
    clocks = [line.split()[0] for line in console.out.read().splitlines()]
    assert clocks == ["17:30", "17:31", "17:37", "17:40"]
