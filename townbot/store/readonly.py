"""Opening a town's database for reading only: the map, the web page and replays never write."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

import aiosqlite

from townbot.store.database import Store, StoreError
from townbot.store.migrations import MIGRATIONS

OLDEST_READABLE = 2  # visitors arrived in schema 2


async def open_readonly(path: str | Path) -> Store:
    """A Store on `path` that cannot change it; a clear StoreError when it is not a town."""
    file = Path(path)
    if not file.is_file():
        raise StoreError(f"{path} does not exist; give the --db of a town made by `townbot sim` "
                         "or `townbot run`")
    connection = await aiosqlite.connect(f"file:{quote(str(file.resolve()))}?mode=ro", uri=True)
    connection.row_factory = aiosqlite.Row
    try:
        version = await Store(connection, str(path)).schema_version()
    except sqlite3.DatabaseError as error:
        await connection.close()
        raise StoreError(f"{path} is not a townbot database ({error})") from error
    if not OLDEST_READABLE <= version <= len(MIGRATIONS):
        await connection.close()
        newer = version > len(MIGRATIONS)
        raise StoreError(f"{path} has schema version {version}; " + (
            "upgrade townbot to read it" if newer else
            "it is not a townbot database, or one too old: open it once with `townbot sim` to upgrade it"))
    return Store(connection, str(path))
