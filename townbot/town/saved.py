"""A town as its database holds it (bodies, minds' states, memory streams, objects, visitors),
loaded whole: when the engine opens a town, and when it goes back to the last commit."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from townbot.mind.memory import MemoryStream, StoredColumns
from townbot.mind.state import MindState
from townbot.store.database import MemoryChunk, Store, StoreError, TownRow, VisitorRow
from townbot.town.body import Body
from townbot.world.model import World


@dataclass
class SavedTown:
    """Everything of a town's state the database holds, loaded."""

    bodies: dict[str, Body]
    states: dict[str, MindState]
    streams: dict[str, MemoryStream]
    objects: dict[str, str]
    visitors: list[VisitorRow]

    @classmethod
    async def load(cls, store: Store, town: TownRow, world: World) -> SavedTown:
        rows = await store.agents(town.id)
        missing = sorted(set(world.personas) - set(rows))
        if missing:
            raise StoreError(f"residents {', '.join(missing)} are not in this town's database; "
                             "use the persona folder the town was founded with or a new --db")
        bodies = {n: Body.from_dict(b) for n, (b, _) in rows.items() if n in world.personas}
        states = {n: MindState.from_dict(m) for n, (_, m) in rows.items() if n in world.personas}
        streams = await cls._streams(store, town, bodies)
        return cls(bodies, states, streams, await store.objects(town.id),
                   await store.visitors(town.id))

    @staticmethod
    async def _streams(store: Store, town: TownRow, names: Iterable[str]) -> dict[str, MemoryStream]:
        """Each resident's memory stream as stored; its arrays are made once, at their full
        size, after every chunk of the town's memories is read."""
        chunks: dict[str, list[MemoryChunk]] = {name: [] for name in names}
        async for chunk in store.memory_chunks(town.id):  # a chunk at a time: no list of all rows
            if chunk.agent in chunks:
                chunks[chunk.agent].append(chunk)
        streams = {name: MemoryStream(town.embedding_dim) for name in chunks}
        hours: dict[datetime, float] = {}  # a tick's memories share their moments
        for name, mine in chunks.items():
            columns = StoredColumns.joined([c.columns for c in mine])
            streams[name].extend_stored([m for c in mine for m in c.memories],
                                        *(c.packed for c in mine), hours=hours, columns=columns)
            mine.clear()  # its embeddings now live in the stream only
        return streams
