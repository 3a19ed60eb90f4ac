"""`townbot backup` copies a running town consistently; `townbot fork` starts a new town from
a town or a backup, at a game day's start when asked, and that town goes on as the original did."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from townbot.cli import main
from townbot.store.backup import prune_backups

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--residents", "3", "--quiet"]


def integrity(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        return [row[0] for row in connection.execute("PRAGMA integrity_check")]


def tick_of(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT tick FROM towns").fetchone()[0]


def posts_from(path: Path, tick: int) -> list[tuple]:
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT tick, channel, kind, actor, text FROM outbox WHERE "
                                  "tick >= ? ORDER BY id", (tick,)).fetchall()


def test_a_backup_taken_while_sim_writes_is_whole_and_resumes(tmp_path, capsys):
    db, folder = tmp_path / "town.db", tmp_path / "backups"
    folder.mkdir()
    sim = subprocess.Popen([sys.executable, "-m", "townbot", "sim", "--db", str(db), "--days", "3",
                            *SMALL], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    taken_while_running = []
    try:
        while sim.poll() is None:
            if not db.exists() or tick_of_or_none(db) is None:
                time.sleep(0.05)  # not yet founded; wait without spinning
                continue
            assert main(["backup", "--db", str(db), "--to", str(folder)]) == 0
            if sim.poll() is None:  # the sim was still writing when the copy ended
                taken_while_running.append(sorted(folder.glob("*.db"))[-1])
            if len(taken_while_running) >= 3:
                break
    finally:
        sim.wait()
    assert sim.returncode == 0, sim.stderr.read() if sim.stderr else ""
    assert taken_while_running, "no backup was taken while the sim ran"
    for copy in taken_while_running:
        assert integrity(copy) == ["ok"]
    copy = taken_while_running[-1]
    before = tick_of(copy)
    assert main(["sim", "--db", str(copy), "--hours", "1", *SMALL]) == 0
    assert tick_of(copy) == before + 6
    assert "integrity check ok" in capsys.readouterr().out


def tick_of_or_none(path: Path) -> int | None:
    try:
        return tick_of(path)
    except (sqlite3.Error, TypeError):
        return None


def test_a_backup_never_overwrites_and_names_itself_inside_a_folder(tmp_path, capsys):
    db = tmp_path / "town.db"
    assert main(["sim", "--db", str(db), "--hours", "1", *SMALL]) == 0
    target = tmp_path / "copy.db"
    assert main(["backup", "--db", str(db), "--to", str(target)]) == 0
    before = target.read_bytes()
    assert main(["backup", "--db", str(db), "--to", str(target)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert target.read_bytes() == before
    assert main(["backup", "--db", str(tmp_path / "none.db"), "--to", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


def test_pruning_keeps_the_newest_backups_of_a_town(tmp_path):
    for day in ("01", "02", "03"):
        (tmp_path / f"42-202601{day}-000000-000000.db").write_bytes(b"")
    (tmp_path / "7-20260101-000000-000000.db").write_bytes(b"")
    gone = prune_backups(tmp_path, "42", keep=2)
    assert [p.name for p in gone] == ["42-20260101-000000-000000.db"]
    assert sorted(p.name for p in tmp_path.glob("*.db")) == [
        "42-20260102-000000-000000.db", "42-20260103-000000-000000.db",
        "7-20260101-000000-000000.db"]


def test_a_fork_at_a_day_goes_on_as_the_original_did_and_says_where_it_came_from(tmp_path, capsys):
    db, fork = tmp_path / "town.db", tmp_path / "fork.db"
    assert main(["sim", "--db", str(db), "--days", "2", *SMALL]) == 0
    assert main(["fork", "--db", str(db), "--to", str(fork), "--at", "2"]) == 0
    said = capsys.readouterr().out
    assert "at day 2's start (tick 144, Tue Feb 14 07:00)" in said
    assert tick_of(fork) == 144 and posts_from(fork, 144) == []
    assert main(["sim", "--db", str(fork), "--hours", "24", *SMALL]) == 0
    assert posts_from(fork, 144) == posts_from(db, 144) != []
    with sqlite3.connect(fork) as connection:
        audit = connection.execute("SELECT use_case, detail FROM audit_log").fetchall()
    assert audit == [("fork", f"forked from {db} at day 2's start")]


def test_a_fork_without_a_day_is_the_town_as_it_is_and_a_missing_day_changes_nothing(
        tmp_path, capsys):
    db = tmp_path / "town.db"
    assert main(["sim", "--db", str(db), "--hours", "2", *SMALL]) == 0
    assert main(["fork", "--db", str(db), "--to", str(tmp_path / "now.db")]) == 0
    assert tick_of(tmp_path / "now.db") == 12
    assert main(["fork", "--db", str(db), "--to", str(tmp_path / "later.db"), "--at", "3"]) == 2
    assert "keeps no checkpoint of day 3; days kept: 1" in capsys.readouterr().err
    assert not (tmp_path / "later.db").exists()
    assert tick_of(db) == 12
    assert main(["fork", "--db", str(db), "--to", str(tmp_path / "now.db"), "--at", "1"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert tick_of(tmp_path / "now.db") == 12, "an existing file is never replaced"
    assert main(["fork", "--db", str(db), "--to", str(tmp_path / "zero.db"), "--at", "0"]) == 2
    assert "days count from 1" in capsys.readouterr().err
    assert not (tmp_path / "zero.db").exists()
