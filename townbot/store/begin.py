"""Starting a write on a connection that may have a read of its own in flight.

A read between its first and last row holds a snapshot. If another connection to the same
town (the engine's or the Discord store's) has committed since, SQLite refuses that
connection's BEGIN IMMEDIATE at once (SQLITE_BUSY_SNAPSHOT), without the busy timeout's wait.
The read ends within a few turns of the event loop, so the write waits for it and tries again.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable

SNAPSHOT_WAIT_S = 0.005  # between tries
SNAPSHOT_WAIT_LIMIT_S = 10.0  # as long as a busy timeout lets a writer wait for another


def met_read_in_flight(error: BaseException) -> bool:
    return (isinstance(error, sqlite3.OperationalError)
            and getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY_SNAPSHOT)


async def begin_writing(begin: Callable[[], Awaitable[object]]) -> None:
    """Await `begin` (which starts with BEGIN IMMEDIATE and has done nothing when that is
    refused) until the connection's own read in flight no longer stands in its way."""
    waited = 0.0
    while True:
        try:
            await begin()
            return
        except sqlite3.OperationalError as error:
            if not met_read_in_flight(error) or waited >= SNAPSHOT_WAIT_LIMIT_S:
                raise
        await asyncio.sleep(SNAPSHOT_WAIT_S)
        waited += SNAPSHOT_WAIT_S
