"""What stopped a write to a town's files, said in one line: a read-only folder or file, a full
disk, the file-size limit. The operating system and SQLite report these as an errno or a result
code; the person needs the cause and what to change."""

from __future__ import annotations

import errno
import resource
import shutil
import sqlite3
from pathlib import Path

from townbot.store.errors import StoreError

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
