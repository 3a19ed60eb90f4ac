"""`townbot play` at a keyboard: prompt_toolkit's own pipe input and dummy output drive the real
PromptSession (completion, history, /quit, Ctrl-C, Ctrl-D), and pexpect runs the real command on
a pseudo-terminal."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import subprocess
import sys
import threading
import time

import pexpect
import pytest
from conftest import ROOT, open_engine
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from townbot.platforms.console import Console, TownCompleter, make_session, play_live
from townbot.town.service import Person, TownService

HOUR = 3600.0  # seconds per tick: no tick comes by itself while a test runs
GENEROUS = 30  # seconds; a loaded machine is slow, but never this slow for one line


@pytest.fixture
async def console(world, tmp_path):
    engine = await open_engine(world, tmp_path / "play.db")
    shell = Console(TownService(engine), Person("console:me", "me", moderator=True), out=io.StringIO(),
                    seconds_per_tick=HOUR)
    yield shell
    await engine.store.close()


def completions(console: Console, line: str) -> list[str]:
    return [text for text, _ in TownCompleter(console.service).complete(line)]


async def test_commands_and_their_arguments_complete(console):
    assert completions(console, "/wh") == ["/whisper", "/where"]
    assert completions(console, "/whisper Isa") == ["Isabella Rodriguez: "]
    assert completions(console, "/interview rod") == ["Isabella Rodriguez: "], "any word of a name"
    assert completions(console, "/go Hob") == ["Hobbs Cafe"]
    assert completions(console, "/join Alex a reporter @ john") == ["Johnson Park"]
    assert completions(console, "/scenario val") == ["valentines-party"]
    assert completions(console, "/set <Hobbs") == ["Hobbs Cafe: "]
    assert completions(console, "/look <Hobbs Cafe: ca") == ["cafe: "]
    assert "coffee machine> " in completions(console, "/set <Hobbs Cafe: cafe: cof")
    assert completions(console, "/whisper Isabella Rodriguez: You") == [], "the text is free"
    assert completions(console, "hello there") == []


async def drive(console: Console, *keys: str, stop: asyncio.Event | None = None) -> tuple[bool, float]:
    """Types `keys` into a real PromptSession over a pipe; (ended by Ctrl-C, seconds after the
    last key until play_live returned)."""
    with create_pipe_input() as keyboard, create_app_session(input=keyboard, output=DummyOutput()):
        session = make_session(console)
        live = asyncio.create_task(play_live(console, session, None, stop or asyncio.Event()))
        for key in keys:
            await asyncio.sleep(0.05)
            keyboard.send_text(key)
        sent = time.monotonic()
        interrupted = await asyncio.wait_for(live, GENEROUS)
        return interrupted, time.monotonic() - sent


async def test_tab_completes_a_residents_name_and_the_whisper_runs(console):
    interrupted, _ = await drive(console, "/whisper Isa", "\t", "You should paint a mural\r", "/quit\r")
    out = console.out.getvalue()
    assert "Isabella Rodriguez hears the thought" in out and not interrupted


async def test_quit_leaves_at_once_without_waiting_for_a_tick(console):
    interrupted, seconds = await drive(console, "/quit\r")
    assert not interrupted and console.ticks_done == 0
    print(f"/quit returned after {seconds:.3f} s")  # a tick would take an hour here


async def test_ctrl_c_and_ctrl_d_at_the_prompt(console):
    interrupted, _ = await drive(console, "\x03")
    assert interrupted
    console.quitting.clear()
    interrupted, _ = await drive(console, "\x04")
    assert not interrupted


async def test_a_tick_under_way_is_finished_before_leaving(console):
    console.seconds_per_tick = 0  # ticks back to back: /quit always lands during one
    ticks = console.service.engine.clock.tick
    await drive(console, "/quit\r")
    store = console.service.engine.store
    town = await store.town(console.service.engine.town.id)
    assert town.tick == console.service.engine.clock.tick > ticks, "every tick shown was committed"


def spawn_play(tmp_path, *extra: str) -> pexpect.spawn:
    env = {**os.environ, "TERM": "xterm-256color", "PYTHONIOENCODING": "utf-8",
           "PROMPT_TOOLKIT_NO_CPR": "1"}  # nobody here answers the cursor position request
    return pexpect.spawn(sys.executable, ["-m", "townbot", "play", "--speed", str(HOUR), "--db",
                                          str(tmp_path / "t.db"), *extra],
                         cwd=str(ROOT), env=env, dimensions=(40, 160), encoding="utf-8",
                         timeout=GENEROUS * 2)


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_on_a_real_terminal_tab_completes_and_quit_exits_within_a_second(tmp_path):
    play = spawn_play(tmp_path)
    try:
        play.expect_exact("Type /help for commands.")
        play.expect_exact("you>")
        play.send("/profile Isa")
        play.send("\t")  # -> /profile Isabella Rodriguez (uncompleted, 'Isa' would be refused)
        play.send("\r")
        play.expect_exact("Today: ")
        play.expect_exact("you>")
        started = time.monotonic()
        play.send("/quit\r")
        play.expect(pexpect.EOF, timeout=GENEROUS)
        seconds = time.monotonic() - started
        play.close()
    finally:
        play.terminate(force=True)
    assert play.exitstatus == 0 and "Traceback" not in play.before
    print(f"/quit on a pty: process gone after {seconds:.2f} s")
    assert seconds < 5, "no tick to wait for (one an hour), no Enter to press"


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_on_a_real_terminal_ctrl_c_exits_with_one_line(tmp_path):
    play = spawn_play(tmp_path)
    try:
        play.expect_exact("you>")
        play.sendcontrol("c")
        play.expect(pexpect.EOF, timeout=GENEROUS)
        play.close()
    finally:
        play.terminate(force=True)
    after = play.before
    assert play.exitstatus == 130
    assert "Traceback" not in after and "KeyboardInterrupt" not in after
    assert after.count("stopped by Ctrl-C") == 1


async def test_the_end_of_ticks_ends_a_live_session_without_a_key(console):
    console.seconds_per_tick = 0
    with create_pipe_input() as keyboard, create_app_session(input=keyboard, output=DummyOutput()):
        interrupted = await asyncio.wait_for(
            play_live(console, make_session(console), 2, asyncio.Event()), GENEROUS)
    assert not interrupted and console.ticks_done == 2


def test_ctrl_c_ends_a_scripted_session_with_one_line(tmp_path):
    play = subprocess.Popen([sys.executable, "-m", "townbot", "play", "--speed", str(HOUR), "--db",
                             str(tmp_path / "t.db")], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        play.stdin.write("/status\n")
        play.stdin.flush()
        while not play.stdout.readline().startswith("model "):  # the status table's last row
            pass
        play.send_signal(signal.SIGINT)  # standard input stays open: only Ctrl-C ends this
        # Read to the end without closing standard input (communicate would close it, and the
        # end of input could then end the session before the signal does).
        hung = threading.Timer(GENEROUS * 2, play.kill)
        hung.start()
        out, err = play.stdout.read(), play.stderr.read()
        play.wait()
        hung.cancel()
    finally:
        play.kill()
    assert play.returncode == 130
    assert err.splitlines() == [line for line in err.splitlines() if line.startswith("stopped by Ctrl-C")]
    assert len(err.splitlines()) == 1 and "Traceback" not in out + err
