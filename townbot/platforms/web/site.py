"""The read-only web page of a town, on aiohttp: the live map with a replay slider, the event
feed by area, and a page per resident. Every URL is relative, so a town's pages work at the
root (`townbot web`) or under a prefix (`townbot run` serves each server's town at
/town/<server id>/).
"""

from __future__ import annotations

from html import escape
from importlib import resources
from typing import Any

from aiohttp import web

from townbot.platforms.web.town import WebTown
from townbot.store.database import StoreError
from townbot.world.clock import clock_face, format_game_time, minute_of_day, parse_game_time

TOWN_KEY = web.AppKey("town", WebTown)
EVENT_LIMIT = 200
STATIC = resources.files("townbot.platforms.web") / "static"


def make_app(town: WebTown) -> web.Application:
    """The pages of one town. Only GET routes exist: nothing here can change the town."""
    app = web.Application(middlewares=[refresh_first])
    app[TOWN_KEY] = town
    app.router.add_get("/", index)
    app.router.add_get("/map.png", map_png)
    app.router.add_get("/api/town", town_info)
    app.router.add_get("/api/moment", moment_info)
    app.router.add_get("/api/events", events_info)
    app.router.add_get("/resident/{name}", resident_page)
    app.router.add_get("/static/{file}", static_file)
    return app


@web.middleware
async def refresh_first(request: web.Request, handler: Any) -> web.StreamResponse:
    """Read on from the database before answering; bad input is a 400 with the reason."""
    await request.app[TOWN_KEY].refresh()
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
    town = request.app[TOWN_KEY]
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
    town = request.app[TOWN_KEY]
    _, data = await town.picture(_tick(request), _area(request, town))
    return web.Response(body=data, content_type="image/png",
                        headers={"Cache-Control": "no-cache"})


async def town_info(request: web.Request) -> web.Response:
    town = request.app[TOWN_KEY]
    history = town.history
    return web.json_response({
        "name": town.world.town, "start": history.town.start,
        "latest": format_game_time(history.latest), "ticks": town.tick_count(),
        "tick_minutes": history.town.tick_minutes})


async def moment_info(request: web.Request) -> web.Response:
    town = request.app[TOWN_KEY]
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
    town = request.app[TOWN_KEY]
    _, moment = town.moment(_tick(request))
    channel = request.query.get("area") or None
    return web.json_response(town.events_until(moment.time, channel, EVENT_LIMIT))


async def resident_page(request: web.Request) -> web.Response:
    town = request.app[TOWN_KEY]
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


