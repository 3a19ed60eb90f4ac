"""One writer per town: a second writer is refused at once naming the holder, readers work
beside a writer, a dead holder's lock is taken over; broken --db files are refused untouched."""

from __future__ import annotations

import asyncio
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
from townbot.store.writer_lock import TownBusy, WriterLock


def townbot(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "townbot", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def start_writer(db: Path) -> subprocess.Popen:
    """A long `townbot sim` on `db`, returned once it holds the lock and has founded the town."""
    process = subprocess.Popen([sys.executable, "-m", "townbot", "sim", "--days", "5", "--db",
                                str(db), "--no-transcript"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if _holder_pid(db) == process.pid and _has_town(db):
            return process
        time.sleep(0.05)
    process.kill()
    raise AssertionError("the writer never took its lock")


def _holder_pid(db: Path) -> int | None:
    try:
        first = Path(f"{db}.lock").read_text().split("\n")[0]
    except FileNotFoundError:
        return None
    return int(first) if first.isdigit() else None


def _has_town(db: Path) -> bool:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as raw:
            return raw.execute("SELECT COUNT(*) FROM towns").fetchone()[0] > 0
    except sqlite3.Error:
        return False


def test_a_second_writer_is_refused_naming_the_holder_and_readers_work_beside_it(tmp_path,
                                                                                capsys):
    db = tmp_path / "t.db"
    writer = start_writer(db)
    refusal = (f"error: the town in {db} is being run by `townbot sim`, pid {writer.pid}; "
               "stop it or use --db for another town")
    try:
        refused = townbot("sim", "--hours", "1", "--db", str(db), timeout=60)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.strip().splitlines() == [refusal]
        for second in (["play", "--ticks", "1", "--speed", "0"], ["reembed"]):  # in this process
            assert main([second[0], "--db", str(db), *second[1:]]) == 2
            assert capsys.readouterr().err.strip() == refusal
        exported = townbot("export", "--db", str(db))
        assert exported.returncode == 0, exported.stderr
        assert '"format": "townbot-export/1"' in exported.stdout
        assert main(["usage", "--db", str(db)]) == 0
        assert writer.poll() is None, "the writer runs on undisturbed"
    finally:
        writer.kill()
        writer.wait()


def test_the_lock_of_a_killed_writer_is_taken_over(tmp_path):
    db = tmp_path / "t.db"
    writer = start_writer(db)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert _holder_pid(db) == writer.pid, "the dead holder's note is still in the file"
    resumed = townbot("sim", "--hours", "0.5", "--db", str(db), "--no-transcript")
    assert resumed.returncode == 0, resumed.stderr
    assert Path(f"{db}.lock").read_text() == "", "released on a clean exit"


async def test_two_writers_in_one_process_are_refused_and_a_closed_store_lets_the_next_in(tmp_path):
    db = tmp_path / "t.db"
    first = await Store.open(db)
    with pytest.raises(TownBusy, match=f"pid {os.getpid()}"):
        await Store.open(db)
    reader = await Store.open(db, read_only=True)
    await reader.close()
    await first.close()
    second = await Store.open(db)
    await second.close()


def test_a_lock_being_written_is_described_vaguely(tmp_path):
    held = WriterLock(tmp_path / "t.db").acquire("townbot run")
    Path(f"{tmp_path / 't.db'}.lock").write_text("")  # as if the holder had not written yet
    with pytest.raises(TownBusy, match="another townbot process"):
        WriterLock(tmp_path / "t.db").acquire()
    held.release()


def test_a_file_that_is_not_a_database_is_refused_untouched_and_the_process_exits(tmp_path):
    db = tmp_path / "notes.db"
    content = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    db.write_bytes(content)
    for command in (["sim", "--hours", "1"], ["export"]):
        done = townbot(*command, "--db", str(db), timeout=30)  # it used to hang after a traceback
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            f"error: {db} is not a townbot database (not an SQLite file); it was left "
            "untouched; give --db another file"]
    assert db.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"], "nothing created"


def test_every_command_refuses_a_text_file_as_database(tmp_path, capsys):
    db = tmp_path / "people.csv"
    db.write_text("name,age\nIsabella,34\n")
    for command in ("sim", "play", "export", "usage", "reembed"):
        assert main([command, "--db", str(db)]) == 2
        assert "is not a townbot database" in capsys.readouterr().err
    assert db.read_text() == "name,age\nIsabella,34\n"


async def test_an_sqlite_database_of_something_else_is_refused_untouched(tmp_path):
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as raw:
        raw.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    before = db.read_bytes()
    for read_only in (False, True):
        with pytest.raises(StoreError, match="something else"):
            await Store.open(db, read_only=read_only)
    assert db.read_bytes() == before


async def test_a_folder_or_unreadable_file_as_database_gets_one_line(tmp_path):
    with pytest.raises(StoreError, match="is a folder"):
        await Store.open(tmp_path)
    if os.geteuid() != 0:  # root reads every file
        locked = tmp_path / "locked.db"
        locked.write_bytes(b"")
        locked.chmod(0)
        with pytest.raises(StoreError, match="cannot be read"):
            await Store.open(locked)



def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


async def _read_as_eval_web_and_discord(world, db: Path) -> None:
    from townbot.eval.snapshot import open_read_only
    from townbot.platforms.discord.townmap import current_picture
    from townbot.platforms.web.town import WebTown

    await (await open_read_only(db)).close()
    web = await WebTown.open(world, db)
    await web.close()
    class Owner:  # what stands for the town on Discord (kept weakly)
        pass

    await current_picture(Owner(), world, str(db), None)


def test_every_reader_opens_a_town_one_way_and_changes_nothing(world, tmp_path, capsys):
    """export, usage, eval, the map (CLI and Discord) and the web page all read through
    Store.open(read_only=True): no lock file, no -wal or -shm (the writer left the town out of
    WAL mode), not a byte changed."""
    town = tmp_path / "town"
    town.mkdir()
    db = town / "t.db"
    assert main(["sim", "--hours", "0.5", "--db", str(db), "--no-transcript"]) == 0
    Path(f"{db}.lock").unlink()  # the writer's (empty) lock stays behind; readers make none
    before = _listing(town)
    assert main(["export", "--db", str(db)]) == 0
    assert main(["usage", "--db", str(db)]) == 0
    assert main(["map", "--db", str(db), "--out", str(tmp_path / "m.png")]) == 0
    asyncio.run(_read_as_eval_web_and_discord(world, db))
    capsys.readouterr()
    assert _listing(town) == before


async def test_a_reader_refuses_an_older_town_untouched_and_says_how_to_upgrade(tmp_path):
    db = tmp_path / "v2.db"
    db.write_bytes((ROOT / "tests" / "fixtures" / "town_v2.db").read_bytes())
    with sqlite3.connect(db) as old:  # as a writer of this townbot leaves a town at rest
        old.execute("PRAGMA journal_mode=DELETE")
    old.close()
    before = _listing(tmp_path)
    with pytest.raises(StoreError, match="schema version 2, older than this townbot .*upgrade"):
        await Store.open(db, read_only=True)
    assert _listing(tmp_path) == before
