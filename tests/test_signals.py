"""Signals sent to real `townbot` processes: SIGTERM and SIGHUP stop `sim` and `play` as Ctrl-C
does (one line, the tick under way committed, the shell's exit code for the signal); a second
signal stops at once (the tick rolled back), and any signal after that is one line more; never a
traceback, never a hang. `run` (on the in-memory Discord, tests/run_on_fake_discord.py) closes
once however many signals come, keeps its gateway closed and logs no ERROR of its own shutdown.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT
from local_server import PROXY_VARIABLES, serving
from test_fault_campaign import Snapshot, committed

HANG = 90  # seconds after which a process that has not ended counts as hung


def start(command: list[str], db: Path, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "townbot", *command, "--db", str(db)],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def after_ticks(process: subprocess.Popen, db: Path, ticks: int) -> None:
    deadline = time.monotonic() + 60
    while committed(db) < ticks:
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline, "no tick was committed"
        time.sleep(0.01)


def signal_at(process: subprocess.Popen, plan: list[tuple[int, float]]) -> str:
    """Send each (signal, seconds after the first) and return standard error once it ended
    (standard output, when piped, is kept as `process.out`)."""
    begin = time.monotonic()
    for signum, at in plan:
        time.sleep(max(0.0, begin + at - time.monotonic()))
        if process.poll() is None:
            process.send_signal(signum)
    try:
        process.out, err = process.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"still running {HANG} s after the signals") from None
    assert "Traceback" not in err and "Error" not in err, err
    return err


@pytest.mark.parametrize(("signum", "name", "code"), [(signal.SIGTERM, "SIGTERM", 143),
                                                       (signal.SIGHUP, "SIGHUP", 129)])
@pytest.mark.parametrize("command", ["sim", "play"])
def test_sigterm_and_sighup_stop_like_ctrl_c_after_the_tick_under_way(tmp_path, command, signum,
                                                                     name, code):
    db = tmp_path / "town.db"
    args = ["sim", "--days", "3", "--quiet"] if command == "sim" else \
        ["play", "--speed", "0", "--ticks", "5000"]
    process = start(args, db)
    if command == "play":
        process.stdin.write("/wait 1000\n")
        process.stdin.flush()
    after_ticks(process, db, 3)
    err = signal_at(process, [(signum, 0.0)])
    lines = [line for line in err.splitlines() if not line.startswith("progress:")]
    assert process.returncode == code
    assert len(lines) == 1 and lines[0].startswith(f"stopped by {name}"), err
    assert lines[0].endswith(f"saved to {db}" if command == "sim" else f"saved in {db}")
    stopped_at = committed(db)
    assert stopped_at < 50, "the run stopped after the tick under way, not at its end"
    Snapshot(db)


@pytest.mark.parametrize("gap", [0.01, 0.03, 0.05])
def test_two_ctrl_cs_close_together_in_sim_are_lines_never_a_traceback(tmp_path, gap):
    db = tmp_path / "town.db"
    process = start(["sim", "--days", "3", "--quiet"], db)
    after_ticks(process, db, 2)
    err = signal_at(process, [(signal.SIGINT, 0.0), (signal.SIGINT, gap), (signal.SIGINT, 2 * gap)])
    lines = [line for line in err.splitlines() if not line.startswith("progress:")]
    assert process.returncode == 130
    assert any(line.startswith("stopped by Ctrl-C") for line in lines), err
    assert all(line.startswith(("stopped by Ctrl-C", "Ctrl-C again: the town is being saved"))
               for line in lines), err
    Snapshot(db)


def test_sigterm_then_ctrl_c_in_play_ends_in_lines_and_a_whole_town(tmp_path):
    db = tmp_path / "town.db"
    process = start(["play", "--speed", "0", "--ticks", "5000"], db)
    process.stdin.write("/wait 1000\n")
    process.stdin.flush()
    after_ticks(process, db, 2)
    err = signal_at(process, [(signal.SIGTERM, 0.0), (signal.SIGINT, 0.01), (signal.SIGHUP, 0.05)])
    assert process.returncode in (130, 143)
    assert err.strip() and all(line.startswith(("stopped by", "Ctrl-C again", "SIGHUP again"))
                               for line in err.splitlines()), err
    Snapshot(db)


def serving_on(process: subprocess.Popen, port: int) -> None:
    """Wait until the process accepts connections on the port (a loaded machine can take
    several seconds to start a server)."""
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, process.stderr.read()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, "the server never listened"
            time.sleep(0.05)


def test_sigterm_to_a_command_without_signals_of_its_own_is_one_line(tmp_path):
    """`web`, `export`, `doctor`...: SIGTERM is a Ctrl-C there too, not a silent exit 143."""
    db = tmp_path / "town.db"
    subprocess.run([sys.executable, "-m", "townbot", "sim", "--hours", "0.2", "--quiet", "--db",
                    str(db)], cwd=ROOT, capture_output=True, check=True, timeout=120)
    port = 20000 + os.getpid() % 20000
    process = subprocess.Popen([sys.executable, "-m", "townbot", "web", "--db", str(db),
                                "--port", str(port)], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    serving_on(process, port)
    err = signal_at(process, [(signal.SIGTERM, 0.0), (signal.SIGTERM, 0.02)])
    assert process.returncode == 0
    assert err.strip().splitlines()[0] == "stopped", err
    assert len(err.strip().splitlines()) <= 2, err


@pytest.fixture
def slow_model():
    """A model server that, once `slow` is set, takes 30 s over each chat answer: a tick is
    then under way and stuck, as with a model that stopped answering, and shutdown has to
    wait for it (at most its grace), so a second signal lands in the middle of closing."""
    slow = threading.Event()

    def answer(body: dict, path: str):
        if path.endswith("/chat/completions") and slow.is_set():
            time.sleep(30)
        return None
    with serving(behaviour=answer) as (url, _):
        yield url, slow


def test_run_closes_once_keeps_the_gateway_closed_and_logs_no_error(tmp_path, slow_model):
    """SIGTERM, then Ctrl-C 0.3 s later while a tick waits on the model: once left the process
    alive forever with two database threads, and discord.py opened the gateway again."""
    url, slow = slow_model
    env = {name: value for name, value in os.environ.items() if name not in PROXY_VARIABLES}
    env.update({"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
                "TOWNBOT_BASE_URL": url, "TOWNBOT_CHAT_MODEL": "fake-chat",
                "TOWNBOT_EMBEDDING_MODEL": "fake-embed"})
    process = subprocess.Popen([sys.executable, str(ROOT / "tests" / "run_on_fake_discord.py"),
                                str(tmp_path)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    log: list[str] = []
    reader = threading.Thread(target=lambda: log.extend(process.stderr), daemon=True)
    reader.start()
    wait_for(log, "the town is open", process)
    slow.set()
    wait_for(log, "skipped a tick: the previous tick is still running", process)
    process.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=HANG)  # not communicate: the reader thread alone reads stderr
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"`run` still running {HANG} s after the signals") from None
    out = process.stdout.read()
    reader.join(10)
    err = "".join(log)
    assert process.returncode == 0, err
    assert out.count("gateway: connect") == 1, "the gateway was opened again while closing"
    assert " ERROR " not in err and "Traceback" not in err, err
    assert "SIGTERM: shutting down" in err
    assert "Ctrl-C again: the town is being saved and closed; it stops in a moment" in err
    assert "ticks did not finish in 6 s and are cancelled" in err
    for db in tmp_path.glob("*.db"):
        with sqlite3.connect(db) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def wait_for(log: list[str], words: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not any(words in line for line in log):
        assert process.poll() is None, "".join(log)
        assert time.monotonic() < deadline, f"never logged {words!r}: {''.join(log)[-2000:]}"
        time.sleep(0.05)
