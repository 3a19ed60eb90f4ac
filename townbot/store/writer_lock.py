"""One writer per town: an OS lock on a sidecar file `DATABASE.lock`.

The first process to open a town's database for writing holds an exclusive `flock` on the
sidecar and writes its process id and command into it; a second writer is refused at once with
one line naming the holder. The operating system drops the lock when the holder's process ends,
however it ends (kill -9 included), so a stale lock of a dead process is simply taken over: the
stale text in the file is overwritten by the new holder. Readers (export, usage) take no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from pathlib import Path

from townbot.store.disk import os_write_error
from townbot.store.errors import StoreError


class TownBusy(StoreError):
    """Another live process is writing this town; the message names it."""


def running_command() -> str:
    """`townbot run`, `townbot sim`, ...: the program and its subcommand, for the lock file."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if program in {"townbot", "__main__.py"}:  # the installed script or `python -m townbot`
        words = ["townbot", *sys.argv[1:2]]
        return " ".join(word for word in words if not word.startswith("-"))
    return program


class WriterLock:
    """The exclusive right to write one database, held until `release` or the process ends."""

    def __init__(self, database: str | Path) -> None:
        self.database = str(database)
        self.path = Path(f"{database}.lock")
        self._fd: int | None = None
        self.created = False  # this lock made the sidecar file

    def acquire(self, command: str | None = None) -> WriterLock:
        """Hold the lock, or raise one StoreError line: another holder (TownBusy), or a folder
        or disk that cannot take the lock file (which is then not left behind)."""
        self.created = not self.path.exists()
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise os_write_error(error, self.database, self.path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise TownBusy(f"the town in {self.database} is being run by {holder}; stop it or "
                           "use --db for another town") from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n{command or running_command()}\n".encode(), 0)
        except OSError as error:  # a full disk, the file-size limit
            self.release(refused=True)
            raise os_write_error(error, self.database, self.path) from None
        return self

    def release(self, *, refused: bool = False) -> None:
        """Let the next writer in. The sidecar stays: removing it could let two writers lock
        two different files of the same name. Only when the town was `refused` (a foreign
        file, a full disk) and this lock made the sidecar, it goes, while still held: a
        refused --db leaves nothing beside it."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        if refused and self.created:
            with contextlib.suppress(OSError):
                self.path.unlink()
        with contextlib.suppress(OSError):  # a full disk cannot refuse shrinking to nothing
            os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _read_holder(fd: int) -> str:
    """'`townbot run`, pid 1234' from the lock file, or a vaguer phrase while it is written."""
    text = os.pread(fd, 512, 0).decode("utf-8", errors="replace")
    pid, _, command = text.partition("\n")
    command = command.strip()
    if not pid.strip().isdigit():
        return "another townbot process"
    return f"`{command or 'townbot'}`, pid {pid.strip()}"
