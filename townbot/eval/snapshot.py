"""A town read for evaluation, opened read-only, at two moments: the end is the town as stored;
the start is the town as founded (persona seed memories and the thoughts seeded at the start
time, with the persona's own description as summary and no plan yet).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from townbot.mind.answering import todays_plan
from townbot.mind.memory import Memory, MemoryStream
from townbot.mind.plans import PlanBlock
from townbot.mind.summary import render_summary
from townbot.store.database import Store, StoreError, TownRow
from townbot.world.clock import GameClock, parse_game_time
from townbot.world.events import TownEvent
from townbot.world.model import Persona, World


@dataclass
class ResidentView:
    """One resident at one moment: the memories visible then, the summary and the plan."""

    persona: Persona
    stream: MemoryStream
    summary: str
    plan: tuple[str, ...] | None  # today's plan lines; None when today is not planned yet
    doing: str | None = None  # what the resident is doing at the moment, e.g. "sleeping"

    @property
    def memories(self) -> list[Memory]:
        return self.stream.memories


@dataclass
class TownMoment:
    label: str  # "start" | "end"
    now: datetime
    residents: dict[str, ResidentView]


@dataclass
class TownSnapshot:
    path: str
    town: TownRow
    world: World
    start: TownMoment
    end: TownMoment
    events: list[TownEvent]

    @property
    def residents(self) -> list[str]:
        return sorted(self.end.residents)


async def open_read_only(path: str | Path) -> Store:
    if not Path(path).is_file():
        raise StoreError(f"{path} does not exist; give the database of a town that has run "
                         "(townbot sim --db PATH), or use `townbot eval run` to make one")
    return await Store.open(path, read_only=True)


def _stream(memories: list[tuple[Memory, object]], dim: int) -> MemoryStream:
    stream = MemoryStream(dim)
    for memory, vector in memories:
        stream.add(memory.kind, memory.text, memory.created, memory.importance, vector,
                   memory.evidence, last_accessed=memory.last_accessed)
        stream.memories[-1].id = memory.id  # keep the stored id for reports
    stream.take_changes()
    return stream


async def read_town(path: str | Path, world: World) -> TownSnapshot:
    store = await open_read_only(path)
    try:
        town = await store.town()
        if town is None:
            raise StoreError(f"{path} holds no town yet; run `townbot sim --db {path}` first")
        rows = await store.agents(town.id)
        missing = sorted(set(rows) - set(world.personas))
        if missing:
            raise StoreError(f"residents {', '.join(missing)} of this town have no persona here; "
                             "use the persona folder the town was founded with (--personas)")
        stored = await store.memories(town.id)
        events = await store.events(town.id)
    finally:
        await store.close()
    clock = GameClock(parse_game_time(town.start), town.tick_minutes, town.tick)
    start_time = clock.start
    by_agent: dict[str, list[tuple[Memory, object]]] = {name: [] for name in rows}
    for item in stored:
        if item.agent in by_agent:
            by_agent[item.agent].append((item.memory, item.vector))
    start, end = {}, {}
    for name, (body, mind) in rows.items():
        persona = world.personas[name]
        everything = by_agent[name]
        founding = [(m, v) for m, v in everything if m.created <= start_time and (
            m.kind == "thought" or (m.kind == "observation" and m.text in persona.seed_memories))]
        start[name] = ResidentView(persona, _stream(founding, town.embedding_dim),
                                   render_summary(persona, None), None)
        blocks = [PlanBlock.from_dict(b) for b in mind.get("blocks", [])]
        day = date.fromisoformat(mind["day"]) if mind.get("day") else None
        end[name] = ResidentView(persona, _stream(everything, town.embedding_dim),
                                 render_summary(persona, mind.get("summary")),
                                 todays_plan(day, blocks, clock.now), body.get("action"))
    return TownSnapshot(str(path), town, world, TownMoment("start", start_time, start),
                        TownMoment("end", clock.now, end), events)
