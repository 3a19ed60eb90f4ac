"""A consistent copy of a town's database while its town runs, by SQLite's online backup API.

The copy is read in one step, inside one read transaction: with the town in WAL mode its writer
goes on meanwhile, and the copy is the town as of one commit. It is written beside its
destination under a temporary name, checked (`PRAGMA integrity_check`) and only then renamed into
place, so a destination never holds half a copy.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from townbot.store.disk import check_database_file, read_only_uri
from townbot.store.errors import StoreError

STAMP = "%Y%m%d-%H%M%S-%f"  # in backup names: sorts in time order, one per microsecond


@dataclass(frozen=True)
class Backup:
    path: Path
    bytes: int
    tick: int
    town: str


def backup_database(source: Path, target: Path) -> Backup:
    """Copy `source` (a town's database, running or not) to `target`, a new file, or a new
    file named after the town and the time inside `target` when it is a folder."""
    check_database_file(str(source), must_exist=True)
    if target.is_dir():
        target = target / f"{source.stem}-{datetime.now(UTC):{STAMP}}.db"
    if target.exists():
        raise StoreError(f"{target} already exists; give --to a new file name or a folder")
    if target.resolve() == source.resolve():
        raise StoreError("--to is the town's own database; give another file")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    try:
        tick, town = _copy(source, partial)
        os.replace(partial, target)
    except sqlite3.Error as error:
        raise StoreError(f"{source} could not be copied ({error}); nothing was written to "
                         f"{target}") from error
    finally:
        partial.unlink(missing_ok=True)
    return Backup(target, target.stat().st_size, tick, town)


def _copy(source: Path, partial: Path) -> tuple[int, str]:
    reader = sqlite3.connect(read_only_uri(source), uri=True)
    try:
        town = reader.execute("SELECT name FROM sqlite_master WHERE name = 'towns'").fetchone()
        if town is None:
            raise StoreError(f"{source} holds no town; give the --db of a town")
        partial.unlink(missing_ok=True)
        writer = sqlite3.connect(partial)
        try:
            reader.backup(writer, pages=-1)  # one step: one read transaction, one commit's town
            problems = [row[0] for row in writer.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                raise StoreError(f"the copy of {source} failed its integrity check "
                                 f"({'; '.join(problems[:3])}); the town itself may be damaged")
            row = writer.execute("SELECT tick, name FROM towns ORDER BY id LIMIT 1").fetchone()
        finally:
            writer.close()
    finally:
        reader.close()
    return (row[0], row[1]) if row else (0, "")


def prune_backups(folder: Path, stem: str, keep: int) -> list[Path]:
    """Delete all but the newest `keep` backups named after `stem` in `folder`; return those
    deleted."""
    found = sorted(folder.glob(f"{stem}-*.db"))
    doomed = found[:-keep] if keep > 0 else found
    for path in doomed:
        path.unlink(missing_ok=True)
    return doomed
