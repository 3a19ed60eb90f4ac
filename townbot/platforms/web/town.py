"""One town as the web page sees it: a read-only store, its replayable history, the painter.

Everything here reads; nothing writes. The history reads on from its last outbox row at most
once a second, so many open pages cost one small query per second.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from PIL import Image

from townbot.pictures.townmap import MapPainter, MapPicture
from townbot.store.database import Store, StoreError, conversations
from townbot.text import clean_text
from townbot.town.history import History, Moment, load_history, read_on
from townbot.wording import inner_voice
from townbot.world.clock import format_game_time
from townbot.world.model import World

REFRESH_SECONDS = 1.0
CACHED_PICTURES = 48
RECENT_MEMORIES = 12


@dataclass
class WebTown:
    world: World
    store: Store
    history: History
    painter: MapPainter
    _read_at: float = 0.0
    _pictures: OrderedDict[tuple[int, str | None, bool], tuple[MapPicture, bytes]] = field(
        default_factory=OrderedDict)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @classmethod
    async def open(cls, world: World, db: str | Path) -> WebTown:
        store = await Store.open(db, read_only=True)
        try:
            return await cls.load(world, store)
        except BaseException:
            await store.close()
            raise

    @classmethod
    async def load(cls, world: World, store: Store) -> WebTown:
        """The town of a store opened read-only (which the caller closes if this fails)."""
        return cls(world, store, await load_history(store, world), MapPainter(world))

    async def close(self) -> None:
        await self.store.close()

    async def refresh(self) -> None:
        """Read on from the database when a second has passed since the last look."""
        if time.monotonic() - self._read_at < REFRESH_SECONDS:
            return
        async with self._lock:
            self._read_at = time.monotonic()
            if await read_on(self.store, self.history):
                self._pictures.clear()  # the newest tick may look different now

    # --- the replay --------------------------------------------------------------------------

    def tick_count(self) -> int:
        return len(self.history.tick_times())

    def time_of(self, tick: int) -> datetime:
        times = self.history.tick_times()
        if not 0 <= tick < len(times):
            raise StoreError(f"tick {tick} is outside this town's history; use 0 to {len(times) - 1}")
        return times[tick]

    def moment(self, tick: int | None) -> tuple[int, Moment]:
        index = self.tick_count() - 1 if tick is None else tick
        return index, self.history.at(self.time_of(index))

    async def picture(self, tick: int | None, area: str | None,
                      people: bool = True) -> tuple[MapPicture, bytes]:
        """The map of a tick, with its people drawn or only placed (drawn off the event loop;
        the last few kept)."""
        index, moment = self.moment(tick)
        key = (index, area, people)
        if key not in self._pictures:
            async with self._lock:
                picture = await asyncio.to_thread(self.painter.draw, moment, area, people)
                data = await asyncio.to_thread(picture.png)
            self._pictures[key] = (picture, data)
            while len(self._pictures) > CACHED_PICTURES:
                self._pictures.popitem(last=False)
        return self._pictures[key]

    def events_until(self, moment: datetime, channel: str | None, limit: int) -> list[dict]:
        """The latest events up to `moment`, newest first by game time, of one area or all.
        A conversation is written as one block when it ends, so the outbox's order is not the
        time order; among events of one minute the later written comes first."""
        chosen = [(event.game_time, index, event) for index, event in
                  enumerate(self.history.events_between(self.history.start, moment))
                  if channel is None or event.channel == channel]
        return [{"time": event.game_time, "channel": event.channel, "kind": event.kind,
                 "actor": event.actor, "text": event.text, "emoji": event.emoji,
                 "place": event.place}
                for _, _, event in heapq.nlargest(limit, chosen, key=lambda c: c[:2])]

    def speech_at(self, tick: int) -> list[dict[str, str]]:
        """The lines spoken in the tick that ends at `tick` (what the map shows as bubbles)."""
        end = format_game_time(self.time_of(tick))
        start = format_game_time(self.time_of(tick - 1)) if tick > 0 else end
        # a scan rather than a bisection: a conversation's lines are written after later events
        return [{"actor": e.actor, "text": e.text, "time": e.game_time}
                for e in self.history.events
                if e.kind == "speech" and (start < e.game_time <= end or e.game_time == end)]

    async def areas(self) -> dict[str, dict[str, Any]]:
        """Each area's channel, name and box on the whole-town map, in its pixels."""
        _, region, scale = await asyncio.to_thread(self.painter.view, None)
        picture = MapPicture(Image.new("1", (1, 1)), {}, region, scale)
        return {self.world.sectors[name].channel:
                {"name": name, "box": [round(v, 1) for v in picture.box_pixels(plan.box)]}
                for name, plan in sorted(self.painter.layout.sectors.items())}

    # --- a resident --------------------------------------------------------------------------

    @staticmethod
    def resident_at(data: dict[str, Any], moment: Moment) -> dict[str, Any]:
        """A resident's page as it was at `moment`: where they were and what they did then,
        and only what they had remembered, reflected and said by then. The plan is kept only
        for the current day, so another day's moment shows none."""
        when = format_game_time(moment.time)
        person = moment.people[data["name"]]
        same_day = data["day"] == moment.time.date().isoformat()
        return {**data, "as_of": when,
                "body": {"place": person.place, "action": person.action, "emoji": person.emoji},
                "day": data["day"] if same_day else f"not kept for {moment.time.date()}",
                "day_plan": data["day_plan"] if same_day else [],
                "blocks": data["blocks"] if same_day else [],
                "recent": [m for m in data["recent"] if m["created"] <= when],
                "reflections": [r for r in data["reflections"] if r["created"] <= when],
                "conversations": [t for t in data["conversations"] if t["started"] <= when]}

    async def resident(self, name: str) -> dict[str, Any]:
        """What a resident's page shows: summary, today's plan, memories, reflections with
        their evidence, conversations."""
        town_id = self.history.town.id
        rows = await self.store.agents(town_id)
        if name not in rows or name not in self.world.personas:
            raise KeyError(name)
        body, mind = rows[name]
        # The page hides the thoughts whispers left: each whisper the town accepted became the
        # thought `inner_voice` makes of it (the audit log keeps the text, not whom it went to),
        # and a whisper is a member's private word, taken as the resident's own.
        whispered = {inner_voice(clean_text(text), name)
                     for text in await self.store.whispers(town_id)}
        memories = [s.memory for s in await self.store.memories(town_id, name)
                    if not (s.memory.kind == "thought" and s.memory.text in whispered)]
        by_id = {m.id: m for m in memories}
        reflections = [{"text": m.text, "created": format_game_time(m.created),
                        "importance": m.importance,
                        "evidence": [by_id[i].text for i in m.evidence if i in by_id]}
                       for m in memories if m.kind == "reflection"]
        recent = sorted((m for m in memories if m.kind != "reflection"),
                        key=lambda m: (m.created, m.id))[-RECENT_MEMORIES:]
        talks = [t for t in await conversations(self.store, town_id) if name in t["participants"]]
        return {
            "name": name, "persona": self.world.personas[name], "body": body,
            "summary": mind.get("summary") or {}, "day": mind.get("day"),
            "day_plan": mind.get("day_plan", []), "blocks": mind.get("blocks", []),
            "recent": [{"kind": m.kind, "text": m.text, "created": format_game_time(m.created),
                        "importance": m.importance} for m in reversed(recent)],
            "reflections": list(reversed(reflections)),
            "conversations": list(reversed(talks)),
        }
