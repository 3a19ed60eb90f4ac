"""A town's database file: refused before SQLite touches it when it is no townbot database, and
what stopped a write to it, said in one line (a read-only folder or file, a full disk, the
file-size limit): the operating system and SQLite report these as an errno or a result code;
the person needs the cause and what to change."""

from __future__ import annotations

import contextlib
import errno
import resource
import shutil
import sqlite3
from pathlib import Path

import aiosqlite

from townbot.store.errors import StoreError

SQLITE_HEADER = b"SQLite format 3\x00"

SQLITE_BASE = 0xFF  # an extended result code's low byte is its primary code


def file_size_limit() -> int | None:
    """The process's file-size limit in bytes (`ulimit -f`), or None when there is none."""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else soft


# Below this much free space, an I/O error is taken for a full disk: SQLite reports a write
# that found no room as SQLITE_IOERR rather than SQLITE_FULL in some places (the WAL, a journal).
NEARLY_FULL_BYTES = 1 << 20


def nearly_full(database: str) -> bool:
    try:
        return shutil.disk_usage(Path(database).resolve().parent).free < NEARLY_FULL_BYTES
    except OSError:
        return False


def size_limit_cause(database: str) -> str:
    limit = file_size_limit()
    shown = f"{limit:,} bytes" if limit is not None else "set by the system"
    return f"the town in {database} reached this process's file-size limit ({shown}, `ulimit -f`)"


def os_write_error(error: OSError, database: str, written: Path) -> StoreError:
    """An OSError writing `written` (the database, its folder or the lock beside it) before a
    town was opened, as one line; nothing was written."""
    folder = written.parent if written.name else written
    code = error.errno
    if code == errno.EROFS:
        cause = f"{folder} is on a read-only file system; give --db a path on a writable disk"
    elif code in (errno.EACCES, errno.EPERM):
        cause = f"{written} cannot be created ({error.strerror}); change the permissions of " \
                f"{folder} or give --db another path"
    elif code == errno.ENOSPC:
        cause = f"the disk of {database} is full; free some space and run again"
    elif code == errno.EDQUOT:
        cause = f"the disk quota of {database}'s owner is used up; free some space and run again"
    elif code == errno.EFBIG:
        return StoreError(f"{size_limit_cause(database)}; nothing was written; raise the limit "
                          "and run again")
    else:
        cause = f"{written} cannot be written ({error.strerror or error}); check the disk"
    return StoreError(f"the town in {database} cannot be written: {cause}")


def sqlite_write_error(error: BaseException, database: str) -> StoreError | None:
    """SQLite refusing to write (full disk, read-only file, an I/O error such as the file-size
    limit) as one line saying what happened to the town; None for any other error."""
    code = getattr(error, "sqlite_errorcode", None)
    if not isinstance(error, sqlite3.Error) or code is None:
        return None
    base = code & SQLITE_BASE
    kept = "the last change was not saved and the town is intact as of its last save"
    if base == sqlite3.SQLITE_FULL or (base == sqlite3.SQLITE_IOERR and nearly_full(database)):
        return StoreError(f"the disk of {database} is full: {kept}; free some space and run "
                          "again")
    if base == sqlite3.SQLITE_READONLY:
        return StoreError(f"{database} is read-only (the file or its folder cannot be written), "
                          "so the town cannot run there; it was left untouched; make it writable "
                          "or give --db a copy")
    if base == sqlite3.SQLITE_IOERR:
        if file_size_limit() is not None:
            return StoreError(f"{size_limit_cause(database)}: {kept}; raise the limit and run "
                              "again")
        return StoreError(f"{database} could not be written (disk I/O error): {kept}; check the "
                          "disk and run again")
    return None


def check_database_file(path: str, *, must_exist: bool) -> None:
    """Refuse, before SQLite touches it, a path that is a folder, unreadable or not SQLite."""
    file = Path(path)
    if not file.exists():
        if must_exist:
            raise StoreError(f"{path} does not exist; give the --db of a town (made by "
                             "`townbot sim` or `townbot run`)")
        return
    if file.is_dir():
        raise StoreError(f"{path} is a folder, not a database file; give a file path to --db")
    try:
        with file.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as error:
        raise StoreError(f"{path} cannot be read ({error.strerror}); check its permissions") \
            from error
    if header and header != SQLITE_HEADER:
        raise StoreError(f"{path} is not a townbot database (not an SQLite file); it was left "
                         "untouched; give --db another file")


def read_only_uri(path: Path) -> str:
    return f"file:{path.resolve().as_uri()[7:]}?mode=ro"


def remove_database_files(path: str) -> None:
    """A database this process created and could not found a town in, with SQLite's files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            Path(path + suffix).unlink(missing_ok=True)


async def schema_version(db: aiosqlite.Connection) -> int:
    async with db.execute("PRAGMA user_version") as cursor:
        return int((await cursor.fetchone())[0])


async def table_names(db: aiosqlite.Connection) -> set[str]:
    async with db.execute("SELECT name FROM sqlite_master WHERE type = 'table'") as cursor:
        return {row[0] for row in await cursor.fetchall()}


async def check_townbot_schema(connection: aiosqlite.Connection, path: str) -> None:
    """An SQLite file that has tables but no townbot schema belongs to something else."""
    tables = await table_names(connection)
    if tables and (await schema_version(connection) == 0 or "towns" not in tables):
        raise StoreError(f"{path} is an SQLite database of something else (no townbot tables); "
                         "it was left untouched; give --db another file")
