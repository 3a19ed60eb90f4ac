"""The fault campaign: a town killed with SIGKILL at several moments of ticks and of use cases,
resumed each time, stays whole (integrity, a clock that never goes back, no event lost or
written twice, memories never fewer); a full disk fails one tick, leaves the town intact and says
so; unlucky operators (issue 31): YAML aliases, numbers out of range, read-only and full disks and
the file-size limit each end in one line, exit 2 and nothing left behind. Two writers are in
test_one_writer.py, signals sent to real processes in test_signals.py, poison strings through
every use case in test_hostile_text.py. docs/reliability.md lists what each promise is checked
by."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from townbot.cli import main
from townbot.store.database import Store, StoreError


def read(db: Path, query: str, args: tuple = ()) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as raw:
        return raw.execute(query, args).fetchall()


def committed(db: Path, query: str = "SELECT tick FROM towns") -> int:
    try:
        rows = read(db, query)
    except sqlite3.Error:
        return -1
    return rows[0][0] if rows and rows[0][0] is not None else -1


def kill_when(command: list[str], db: Path, query: str, target: int, extra: float,
              stdin: str | None = None) -> None:
    """Start `townbot COMMAND`, SIGKILL it `extra` seconds after QUERY first reaches TARGET."""
    process = subprocess.Popen([sys.executable, "-m", "townbot", *command, "--db", str(db)],
                               cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    if stdin is not None:
        process.stdin.write(stdin.encode())
        process.stdin.flush()
    deadline = time.monotonic() + 60
    while committed(db, query) < target and time.monotonic() < deadline:
        assert process.poll() is None, "the process ended before it could be killed"
        time.sleep(0.01)
    time.sleep(extra)  # land somewhere inside the next tick or use case
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    process.stdin.close()


class Snapshot:
    """What a town holds now; `check_after` says it only grew, in order, with nothing twice."""

    def __init__(self, db: Path) -> None:
        assert read(db, "PRAGMA integrity_check") == [("ok",)]
        assert read(db, "PRAGMA foreign_key_check") == []
        self.tick = committed(db)
        self.events = read(db, "SELECT id, tick, game_time, channel, kind, actor, text FROM outbox "
                               "ORDER BY id")
        self.memories = dict(read(db, "SELECT agent, COUNT(*) FROM memories GROUP BY agent"))
        self.audit = read(db, "SELECT id, use_case, outcome FROM audit_log ORDER BY id")
        for agent, count, top in read(db, "SELECT agent, COUNT(*), MAX(seq) FROM memories "
                                          "GROUP BY agent"):
            assert top == count - 1, f"{agent}'s memories have a gap or a repeat"
        assert all(event[1] <= self.tick for event in self.events), "an event after the clock"
        ticks = [event[1] for event in self.events]
        assert ticks == sorted(ticks), "events out of tick order"
        actions = [(e[1], e[5]) for e in self.events if e[4] == "action"]
        assert len(actions) == len(set(actions)), "two actions of one resident in one tick"

    def check_after(self, later: Snapshot) -> None:
        assert later.tick >= self.tick, "the clock went back"
        assert later.events[:len(self.events)] == self.events, "a committed event was lost"
        assert later.audit[:len(self.audit)] == self.audit, "an audit row was lost"
        for agent, count in self.memories.items():
            assert later.memories.get(agent, 0) >= count, f"{agent} lost memories"


def test_killed_during_ticks_at_several_moments_and_resumed_each_time(tmp_path):
    db = tmp_path / "town.db"
    before = None
    for round_number, (more_ticks, extra) in enumerate([(2, 0.0), (3, 0.013), (1, 0.05),
                                                        (4, 0.002)]):
        target = max(0, committed(db)) + more_ticks
        kill_when(["sim", "--days", "3", "--quiet"], db, "SELECT tick FROM towns", target, extra)
        now = Snapshot(db)
        assert now.tick >= target, f"round {round_number}: the killed run kept its commits"
        if before is not None:
            before.check_after(now)
        before = now
    resumed = subprocess.run([sys.executable, "-m", "townbot", "sim", "--hours", "0.5", "--db",
                              str(db), "--quiet"], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    final = Snapshot(db)
    before.check_after(final)
    assert final.tick == before.tick + 3


USE_CASES = "\n".join([
    "/join Alex a reporter for the Smallville Gazette",
    "Good morning, who is running for mayor?",
    "/whisper Klaus Mueller: You want to finish your paper on gentrification today",
    "/set <Hobbs Cafe: cafe: cafe customer seating> is reserved for a meeting",
    "/go Hobbs Cafe",
    "/interview Isabella Rodriguez: What are you planning this week?",
    "/seed Sam Moore: Sam Moore wants to talk to everyone about the election",
    "/announce The library opens late today",
    "Isabella, are you having a party?",
    "/go Johnson Park",
    "/whisper Maria Lopez: You should visit Hobbs Cafe this afternoon",
    "/set <Johnson Park: park: park garden> is covered in frost",
    "/wait 2",
]) + "\n"
AUDITED = "SELECT COUNT(*) FROM audit_log"


def test_killed_during_use_cases_at_several_moments_and_resumed_each_time(tmp_path):
    db = tmp_path / "town.db"
    before = None
    for target, extra in [(2, 0.0), (5, 0.004), (9, 0.02)]:
        kill_when(["play", "--speed", "0", "--ticks", "40", "--name", "alex"], db, AUDITED,
                  max(0, committed(db, AUDITED)) + target, extra,
                  stdin=USE_CASES if before is None else USE_CASES.split("\n", 1)[1])
        now = Snapshot(db)
        if before is not None:
            before.check_after(now)
        before = now
    visitors = read(db, "SELECT name FROM visitors WHERE left_at IS NULL")
    assert visitors == [("Alex",)], "the visitor's join survived every kill"
    resumed = subprocess.run([sys.executable, "-m", "townbot", "play", "--speed", "0", "--ticks",
                              "1", "--name", "alex", "--db", str(db)],
                             input="/join Alex a reporter\n/leave\n", cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "already in the town as Alex" in resumed.stdout + resumed.stderr
    before.check_after(Snapshot(db))


async def _full_disk_store(path: Path, spare_pages: int, opener=Store.open) -> Store:
    store = await opener(path)
    async with store.db.execute("PRAGMA page_count") as cursor:
        pages = (await cursor.fetchone())[0]
    await store.db.execute(f"PRAGMA max_page_count = {pages + spare_pages}")
    return store


def test_a_full_disk_fails_the_tick_leaves_the_town_intact_and_says_so(tmp_path, capsys,
                                                                       monkeypatch):
    db = tmp_path / "town.db"
    assert main(["sim", "--hours", "0.5", "--db", str(db), "--quiet"]) == 0
    capsys.readouterr()
    before = Snapshot(db)
    opened = Store.open

    async def nearly_full(path, **kwargs):
        return await _full_disk_store(path, 2, opened) if not kwargs else \
            await opened(path, **kwargs)

    monkeypatch.setattr(Store, "open", nearly_full)
    assert main(["sim", "--hours", "2", "--db", str(db), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"the disk of {db} is full" in err[0], err
    assert "the town is intact as of its last save" in err[0]
    after = Snapshot(db)
    before.check_after(after)
    monkeypatch.setattr(Store, "open", opened)
    assert main(["sim", "--hours", "0.5", "--db", str(db), "--quiet"]) == 0, "runs on with room"
    after.check_after(Snapshot(db))


async def test_a_full_disk_during_a_tick_raises_a_store_error_and_commits_nothing(world,
                                                                                 tmp_path):
    from townbot.llm.offline import OfflineModel
    from townbot.llm.stack import build_model_stack
    from townbot.town.engine import Engine
    store = await _full_disk_store(tmp_path / "town.db", 400)
    engine = await Engine.open(world, store, build_model_stack(OfflineModel()))
    with pytest.raises(StoreError, match="is full: the last change was not saved"):
        for _ in range(50):
            await engine.tick()
    tick = (await store.town()).tick
    await store.close()
    Snapshot(tmp_path / "town.db")
    assert committed(tmp_path / "town.db") == tick


# ---------------------------------------------------------------- unlucky operators (issue 31)


def townbot(*args: str, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "townbot", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=timeout, **kwargs)


def one_line_refusal(result: subprocess.CompletedProcess, words: str) -> str:
    """The run ended with exit 2 and exactly one line on stderr holding `words`."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and words in lines[0], result.stderr
    return lines[0]


def test_a_persona_of_nested_aliases_is_one_line_and_creates_nothing(tmp_path):
    import shutil

    from test_world_validation import laughs
    personas = tmp_path / "personas"
    shutil.copytree(ROOT / "personas", personas)
    (personas / "isabella_rodriguez.yaml").write_text(laughs(8), encoding="utf-8")
    db = tmp_path / "town.db"
    result = townbot("sim", "--hours", "1", "--personas", str(personas), "--db", str(db),
                     "--quiet", timeout=60)
    one_line_refusal(result, "isabella_rodriguez.yaml: line 1, column 4: uses the YAML anchor")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["personas"]


@pytest.mark.parametrize(("arguments", "problem"), [
    (["sim", "--hours", "1e308"], "argument --hours: 1e308 is more than 8760; give 0.5 to 8760"),
    (["sim", "--seed", "99999999999999999999999"], "argument --seed: 99999999999999999999999 is "
                                                   "out of range; give 0 to 4294967295"),
])
def test_numbers_beyond_their_range_end_in_one_error_and_no_file(tmp_path, arguments, problem):
    result = townbot(*arguments, "--db", str(tmp_path / "town.db"), timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1].endswith(problem), result.stderr
    assert list(tmp_path.iterdir()) == []


def test_wait_in_play_stops_at_the_end_of_ticks(tmp_path):
    db = tmp_path / "town.db"
    result = townbot("play", "--ticks", "3", "--speed", "0", "--db", str(db), timeout=120,
                     input="/wait 1000\n/wait 2\n/wait\n")
    assert result.returncode == 0, result.stderr
    assert "! 1000 ticks is out of range; wait 1 to 2 ticks (--ticks 3 leaves 2)" in result.stdout
    assert "! all 3 ticks of --ticks have passed; /quit to leave" in result.stdout
    assert committed(db) == 3


# A private mount namespace (`unshare -m`, root only) gives each disk case a real read-only or
# full file system that no other process sees and that goes when the case ends.
PRIVATE_MOUNTS = os.geteuid() == 0 and subprocess.run(
    ["unshare", "-m", "true"], capture_output=True).returncode == 0 \
    if os.path.exists("/usr/bin/unshare") else False
needs_mounts = pytest.mark.skipif(not PRIVATE_MOUNTS, reason="needs root and `unshare -m`")

DISK_SETUPS = {
    "a read-only folder": "mount --bind $D $D && mount -o remount,ro,bind $D $D",
    "a read-only town file": "$TOWNBOT sim --hours 0.2 --quiet --db $D/t.db >/dev/null 2>&1 && "
                             "mount --bind $D/t.db $D/t.db && mount -o remount,ro,bind $D/t.db "
                             "$D/t.db",
    "a disk full at start": "mount -t tmpfs -o size=256k tmpfs $D && "
                            "dd if=/dev/zero of=$D/fill bs=4k count=64 2>/dev/null; true",
    "a disk with 12 kB left": "mount -t tmpfs -o size=256k tmpfs $D && "
                              "dd if=/dev/zero of=$D/fill bs=4k count=61 2>/dev/null",
}


@needs_mounts
@pytest.mark.parametrize(("case", "line"), [
    ("a read-only folder", "error: the town in $D/t.db cannot be written: $D is on a read-only "
                           "file system; give --db a path on a writable disk"),
    ("a read-only town file", "error: $D/t.db is read-only (the file or its folder cannot be "
                              "written), so the town cannot run there; it was left untouched; "
                              "make it writable or give --db a copy"),
    ("a disk full at start", "error: the town in $D/t.db cannot be written: the disk of $D/t.db "
                             "is full; free some space and run again"),
    ("a disk with 12 kB left", "error: the disk of $D/t.db is full: the last change was not "
                               "saved and the town is intact as of its last save; free some "
                               "space and run again"),
])
def test_a_town_on_an_unwritable_disk_is_one_line_exit_2_and_nothing_left(tmp_path, case, line):
    folder = tmp_path / "town"
    folder.mkdir()
    script = (f"D={folder}; TOWNBOT='{sys.executable} -m townbot'; {DISK_SETUPS[case]} || exit 9; "
              "ls -A $D > $D.before; $TOWNBOT sim --hours 1 --quiet --db $D/t.db 2> $D.err; "
              "echo $? > $D.code; ls -A $D > $D.after")
    subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=ROOT, timeout=180, check=True)
    err = Path(f"{folder}.err").read_text()
    assert Path(f"{folder}.code").read_text().strip() == "2", err
    assert err.strip().splitlines() == [line.replace("$D", str(folder))]
    assert Path(f"{folder}.after").read_text() == Path(f"{folder}.before").read_text(), \
        "the refused run left a file behind"


def test_the_file_size_limit_is_named_and_a_town_never_founded_leaves_nothing(tmp_path):
    import resource

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, resource.RLIM_INFINITY))
    db = tmp_path / "town.db"
    result = townbot("sim", "--hours", "1", "--quiet", "--db", str(db), preexec_fn=limited)
    one_line_refusal(result, f"error: the town in {db} reached this process's file-size limit "
                             "(100,000 bytes, `ulimit -f`): the last change was not saved")
    assert list(tmp_path.iterdir()) == []


def test_a_refused_foreign_database_gets_no_lock_beside_it(tmp_path):
    foreign = tmp_path / "photos.db"
    with sqlite3.connect(foreign) as raw:
        raw.execute("CREATE TABLE photos (name TEXT)")
    before = foreign.read_bytes()
    result = townbot("sim", "--hours", "1", "--quiet", "--db", str(foreign), timeout=60)
    one_line_refusal(result, "is an SQLite database of something else")
    assert [path.name for path in tmp_path.iterdir()] == ["photos.db"]
    assert foreign.read_bytes() == before
