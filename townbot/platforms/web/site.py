"""The read-only web page of a town, on aiohttp: the live map with a replay slider, the event
feed by area, and a page per resident. Every URL is relative, so a town's pages work at the
root (`townbot web`) or under a prefix (`townbot run` serves each server's town at
/town/<server id>/).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

from townbot.platforms.web.town import WebTown
from townbot.store.database import StoreError
from townbot.world.clock import clock_face, format_game_time, minute_of_day, parse_game_time
from townbot.world.model import World

Finder = Callable[[web.Request], Awaitable[WebTown]]
FINDER_KEY = web.AppKey("finder", object)
EVENT_LIMIT = 200
STATIC = resources.files("townbot.platforms.web") / "static"


def make_app(town: WebTown) -> web.Application:
    """The pages of one town at the root. Only GET routes exist: nothing here can change it."""
    async def find(request: web.Request) -> WebTown:
        return town
    return _app(find, "")


def make_towns_app(shelf: TownShelf) -> web.Application:
    """The towns of `townbot run`, each server's at /town/<server id>/."""
    async def find(request: web.Request) -> WebTown:
        text = request.match_info["guild"]
        town = await shelf.town(int(text)) if text.isdigit() else None
        if town is None:
            raise web.HTTPNotFound(text=f"no town is kept for server {text}")
        return town

    async def to_slash(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"/town/{request.match_info['guild']}/")

    app = _app(find, "/town/{guild}")
    app.router.add_get("/town/{guild}", to_slash)
    return app


def _app(find: Finder, prefix: str) -> web.Application:
    app = web.Application(middlewares=[refusals])
    app[FINDER_KEY] = find
    app.router.add_get(prefix + "/", index)
    app.router.add_get(prefix + "/map.png", map_png)
    app.router.add_get(prefix + "/api/town", town_info)
    app.router.add_get(prefix + "/api/moment", moment_info)
    app.router.add_get(prefix + "/api/events", events_info)
    app.router.add_get(prefix + "/resident/{name}", resident_page)
    app.router.add_get(prefix + "/static/{file}", static_file)
    return app


class TownShelf:
    """Towns opened read-only on their first visit and kept: `database_of` says where a
    server's town is (None: not here)."""

    def __init__(self, world: World, database_of: Callable[[int], Path | None]) -> None:
        self.world, self.database_of = world, database_of
        self.towns: dict[int, WebTown] = {}
        self._lock = asyncio.Lock()

    async def town(self, guild_id: int) -> WebTown | None:
        async with self._lock:
            if guild_id not in self.towns:
                path = self.database_of(guild_id)
                if path is None or not path.is_file():
                    return None
                try:
                    self.towns[guild_id] = await WebTown.open(self.world, path)
                except StoreError:
                    return None  # no town founded in it yet
            return self.towns[guild_id]

    async def close(self) -> None:
        for town in self.towns.values():
            await town.close()
        self.towns.clear()


async def town_of(request: web.Request) -> WebTown:
    """The request's town, read on from its database first."""
    town = await request.app[FINDER_KEY](request)  # type: ignore[operator]
    await town.refresh()
    return town


@web.middleware
async def refusals(request: web.Request, handler: Any) -> web.StreamResponse:
    """Bad input is a 400 with the reason."""
    try:
        return await handler(request)
    except StoreError as error:
        raise web.HTTPBadRequest(text=str(error)) from error


def _tick(request: web.Request) -> int | None:
    text = request.query.get("tick")
    if text is None or text == "":
        return None
    if not text.lstrip("-").isdigit():
        raise StoreError(f"tick '{text}' is not a number; use a tick number such as 0")
    return int(text)


def _area(request: web.Request, town: WebTown) -> str | None:
    area = request.query.get("area") or None
    if area is not None and area not in town.world.sectors:
        raise StoreError(f"there is no area called '{area}'")
    return area


async def index(request: web.Request) -> web.Response:
    town = await town_of(request)
    areas = "".join(f'<option value="{escape(s.channel)}">{escape(name)}</option>'
                    for name, s in sorted(town.world.sectors.items()))
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    html = html.replace("{{town}}", escape(town.world.town)).replace("{{areas}}", areas)
    return web.Response(text=html, content_type="text/html")


async def static_file(request: web.Request) -> web.Response:
    name = request.match_info["file"]
    types = {"app.js": "application/javascript", "style.css": "text/css"}
    if name not in types:
        raise web.HTTPNotFound()
    return web.Response(text=(STATIC / name).read_text(encoding="utf-8"), content_type=types[name])


async def map_png(request: web.Request) -> web.Response:
    town = await town_of(request)
    _, data = await town.picture(_tick(request), _area(request, town))
    return web.Response(body=data, content_type="image/png",
                        headers={"Cache-Control": "no-cache"})


async def town_info(request: web.Request) -> web.Response:
    town = await town_of(request)
    history = town.history
    return web.json_response({
        "name": town.world.town, "start": history.town.start,
        "latest": format_game_time(history.latest), "ticks": town.tick_count(),
        "tick_minutes": history.town.tick_minutes})


async def moment_info(request: web.Request) -> web.Response:
    town = await town_of(request)
    tick = _tick(request)
    index, moment = town.moment(tick)
    picture, _ = await town.picture(index, _area(request, town))
    people = []
    for name, marker in sorted(picture.positions_json().items()):
        person = moment.people[name]
        people.append({**marker, "name": name, "action": person.action, "emoji": person.emoji,
                       "place": person.place})
    width, height = picture.image.size
    return web.json_response({"tick": index, "time": format_game_time(moment.time),
                              "width": width, "height": height, "people": people,
                              "troubles": moment.troubles})


async def events_info(request: web.Request) -> web.Response:
    town = await town_of(request)
    _, moment = town.moment(_tick(request))
    channel = request.query.get("area") or None
    return web.json_response(town.events_until(moment.time, channel, EVENT_LIMIT))


async def resident_page(request: web.Request) -> web.Response:
    town = await town_of(request)
    name = request.match_info["name"]
    try:
        data = await town.resident(name)
    except KeyError:
        raise web.HTTPNotFound(text=f"no resident called {name}") from None
    return web.Response(text=render_resident(town.world.town, data), content_type="text/html")


def text(value: object) -> str:
    """Escaped text of a value that may be missing."""
    return escape(str(value)) if value is not None else ""


def render_resident(town: str, data: dict[str, Any]) -> str:
    persona, body, summary = data["persona"], data["body"], data["summary"]
    where = (f"walking to {body['travel_sector']}" if body.get("travel_sector")
             else f"{body['sector']}: {body['arena']}")
    about = " ".join(summary.get(k, "") for k in ("core", "occupation", "feeling")).strip() \
        or persona.identity()
    plan = "".join(f"<li>{escape(item)}</li>" for item in data["day_plan"]) or "<li>none yet</li>"
    blocks = "".join(
        f"<li><b>{clock_face(minute_of_day(parse_game_time(b['start'])))}</b> "
        f"{text(b.get('activity'))} <span class=place>"
        f"{text(': '.join(p for p in (b.get('sector'), b.get('arena')) if p))}</span></li>"
        for b in data["blocks"])
    recent = "".join(f"<li><span class=when>{m['created']}</span> <span class=kind>{m['kind']}"
                     f"</span> {escape(m['text'])}</li>" for m in data["recent"])
    reflections = "".join(
        f"<li class=reflection><span class=when>{r['created']}</span> {escape(r['text'])}"
        f"<ul class=evidence>{''.join(f'<li>{escape(e)}</li>' for e in r['evidence'])}</ul></li>"
        for r in data["reflections"]) or "<li>none yet</li>"
    talks = "".join(
        f"<li class=conversation><span class=when>{t['started']}</span> at "
        f"{escape(t['sector'])}: {escape(t['arena'])} with "
        f"{escape(', '.join(p for p in t['participants'] if p != data['name']))}<ul>"
        + "".join(f"<li><b>{escape(u['speaker'])}</b>: {escape(u['text'])}</li>"
                  for u in t["utterances"]) + "</ul></li>"
        for t in data["conversations"]) or "<li>none yet</li>"
    name = escape(data["name"])
    return f"""<!doctype html>
<html lang=en><head><meta charset=utf-8><title>{name}, {escape(town)}</title>
<meta name=viewport content="width=device-width, initial-scale=1">
<link rel=stylesheet href="../static/style.css"></head>
<body class=resident>
<p><a href="../" id=back>&larr; {escape(town)}</a></p>
<h1 id=resident-name>{name}</h1>
<p class=now>{escape(body.get('emoji') or '')} {escape(body.get('action') or '')}
 <span class=place>({escape(where)})</span></p>
<section id=summary><h2>Summary</h2><p>{escape(about)}</p>
<p class=facts>Age {persona.age}; {escape(', '.join(persona.traits))}</p></section>
<section id=plan><h2>Today's plan ({escape(data['day'] or 'not made yet')})</h2><ol>{plan}</ol>
<details><summary>Hour by hour</summary><ul>{blocks}</ul></details></section>
<section id=memories><h2>Recent memories</h2><ul>{recent}</ul></section>
<section id=reflections><h2>Reflections and their evidence</h2><ul>{reflections}</ul></section>
<section id=conversations><h2>Conversations</h2><ul>{talks}</ul></section>
</body></html>"""


