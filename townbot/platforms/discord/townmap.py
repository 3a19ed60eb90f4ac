"""`/town map`: the town now as a picture with a caption of who is where, drawn like `townbot map`
from the town's history, which is read on a read-only connection of its own (never the
engine's, which may be inside a tick) and kept per town between calls."""

from __future__ import annotations

import asyncio
import io
import weakref
from collections import defaultdict
from datetime import timedelta

import discord
from PIL import Image

from townbot.pictures.townmap import MapPainter, MapPicture
from townbot.store.database import Store
from townbot.town.history import History, Moment, load_history, read_on
from townbot.world.model import World

CAPTION_LIMIT = 1500  # leaves room in Discord's 2000 characters for the link
FILE_LIMIT = 10 * 1024 * 1024  # Discord's upload limit for a server without boosts


_kept: weakref.WeakKeyDictionary[object, tuple[History, MapPainter]] = weakref.WeakKeyDictionary()
_locks: weakref.WeakKeyDictionary[object, asyncio.Lock] = weakref.WeakKeyDictionary()


async def current_picture(owner: object, world: World, database: str,
                          area: str | None) -> tuple[Moment, MapPicture]:
    """The map of the town's present (its clock's next tick: what people changed since the
    last tick shows too), drawn off the event loop. `owner` stands for the town while it is
    open; its history is kept as long as it lives."""
    async with _locks.setdefault(owner, asyncio.Lock()):
        store = await Store.open(database, read_only=True)
        try:
            if owner not in _kept:
                _kept[owner] = (await load_history(store, world), MapPainter(world))
            else:
                await read_on(store, _kept[owner][0])
        finally:
            await store.close()
        history, painter = _kept[owner]
        now = history.latest + timedelta(minutes=history.town.tick_minutes) \
            if history.town.tick else history.start
        moment = history.at(now)
        return moment, await asyncio.to_thread(painter.draw, moment, area)


def caption(moment: Moment, area: str | None, link: str | None) -> str:
    """Who is where, in a few lines: by area, or everyone in one area with what they do."""
    lines = [f"**{area or 'The town'}**, {moment.time:%A %B %d, %H:%M}"]
    if area is not None:
        here = [p for p in moment.people.values() if p.sector == area]
        lines += [f"{p.emoji} {p.name}: {p.action} ({p.arena})" for p in here] or ["nobody here"]
    else:
        by_area: dict[str, list[str]] = defaultdict(list)
        walking = []
        for person in moment.people.values():
            first = person.name.split()[0]
            if person.walk is not None:
                walking.append(f"{first} → {person.walk.sector}")
            else:
                by_area[person.sector or "?"].append(first)
        lines += [f"{name}: {', '.join(people)}" for name, people in
                  sorted(by_area.items(), key=lambda item: (-len(item[1]), item[0]))]
        if walking:
            lines.append("on the way: " + "; ".join(walking))
    text = "\n".join(lines)
    if len(text) > CAPTION_LIMIT:
        text = text[:CAPTION_LIMIT].rsplit("\n", 1)[0] + "\n…"
    if link:
        text += f"\nLive map and replay: <{link}>"
    return text


def attachment(picture: MapPicture, limit: int, name: str = "town-map.png") -> discord.File:
    """The picture as a PNG within the server's upload limit (halved until it fits)."""
    image, data = picture.image, picture.png()
    while len(data) > min(limit, FILE_LIMIT) and image.width > 200:
        image = image.resize((image.width // 2, image.height // 2), Image.Resampling.LANCZOS)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        data = buffer.getvalue()
    return discord.File(io.BytesIO(data), filename=name,
                        description="map of the town: who is where")
