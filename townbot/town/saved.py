"""A town as its database holds it (bodies, minds' states, memory streams, objects, visitors),
loaded whole: when the engine opens a town, and when it goes back to the last commit."""

from __future__ import annotations

from dataclasses import dataclass

from townbot.mind.memory import MemoryStream
from townbot.mind.state import MindState
from townbot.store.database import Store, StoreError, TownRow, VisitorRow
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
        streams = {name: MemoryStream(town.embedding_dim) for name in bodies}
        async for chunk in store.memory_chunks(town.id):  # a chunk of rows at a time
            if chunk.agent in streams:
                streams[chunk.agent].extend_stored(chunk.memories, chunk.vectors)
        return cls(bodies, states, streams, await store.objects(town.id),
                   await store.visitors(town.id))
