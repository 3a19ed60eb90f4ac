"""The read-only web page of a town, on aiohttp: the live map with a replay slider, the event
feed by area, and a page per resident. Every URL is relative, so a town's pages work at the
root (`townbot web` on localhost) or under a prefix: `townbot run` serves each server's town at
/town/<server id>/<token>/, and `townbot web --token` at /<token>/.

The token is the capability: a town's pages, API, map pictures and static files answer only
under it. A wrong, closed or missing token and a town that is not here get the same plain 404,
so that a guess tells nothing. Relative links carry the token from page to page; the access log
writes `<token>` in its place, and no response sends a Referer that would carry it elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from html import escape
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from townbot.pictures.townmap import is_night
from townbot.platforms.web.town import WebTown
from townbot.store.database import Store, StoreError
from townbot.world.clock import clock_face, format_game_time, minute_of_day, parse_game_time
from townbot.world.model import World

Finder = Callable[[web.Request], Awaitable[WebTown]]
Handler = Callable[[web.Request, WebTown], Awaitable[web.StreamResponse]]
REDACT_KEY = web.AppKey("redact", Callable[[str], str])
EVENT_LIMIT = 200
STATIC = resources.files("townbot.platforms.web") / "static"
ACCESS_LOG = logging.getLogger("townbot.web.access")
# Sent with every response, errors included: no Referer leaves a page (it would carry the
# token), and a browser takes each file as the type it is served as.
# The page runs only its own script and style, draws only its own pictures, and no other site
# may frame it.
SAFE_HEADERS = {"Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": "default-src 'none'; script-src 'self'; "
                "style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
                "X-Frame-Options": "DENY"}
STATIC_TYPES = {"app.js": "application/javascript", "style.css": "text/css",
                "leaflet.js": "application/javascript", "leaflet.css": "text/css",
                "favicon.svg": "image/svg+xml"}
TICK_DIGITS = 9  # ticks of 10 game minutes: nine digits is some 19,000 game years


def make_app(town: WebTown, token: str | None = None) -> web.Application:
    """The pages of one town: at the root, or under /<token>/ when a token is given. Only GET
    routes exist: nothing here can change the town."""
    async def find(request: web.Request) -> WebTown:
        if token is not None and not same_secret(request.match_info["token"], token):
            raise web.HTTPNotFound()
        return town

    if token is None:
        return _app(find, "", lambda path: path)
    return _app(find, "/{token}", lambda path: re.sub(r"^/[^/]+", "/<token>", path))


def make_towns_app(shelf: TownShelf) -> web.Application:
    """The towns of `townbot run`, each server's at /town/<server id>/<token>/."""
    async def find(request: web.Request) -> WebTown:
        guild, token = request.match_info["guild"], request.match_info["token"]
        town = await shelf.town(int(guild), token) if guild.isdigit() else None
        if town is None:
            raise web.HTTPNotFound()  # the same answer whether the town or the token is wrong
        return town

    return _app(find, "/town/{guild}/{token}",
                lambda path: re.sub(r"^(/town/[^/]+)/[^/]+", r"\1/<token>", path))


def _app(find: Finder, prefix: str, redact: Callable[[str], str]) -> web.Application:
    """The town's routes under `prefix`, each answering only once `find` has found the town.
    Routes added to the app afterwards (a health check) are not a town's and need no token."""
    app = web.Application(middlewares=[refusals])
    app[REDACT_KEY] = redact
    app.on_response_prepare.append(safe_headers)
    routes: dict[str, Handler] = {"/": index, "/map.png": map_png, "/api/town": town_info,
                                  "/api/moment": moment_info, "/api/events": events_info,
                                  "/resident/{name}": resident_page, "/static/{file}": static_file}
    for path, handler in routes.items():
        app.router.add_get(prefix + path, gated(find, handler))
    if prefix:
        app.router.add_get(prefix, gated(find, to_slash))
    return app


async def to_slash(request: web.Request, town: WebTown) -> web.Response:
    """The town's address typed without its last slash: the relative links need it."""
    raise web.HTTPFound(request.path + "/")


def gated(find: Finder, handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The handler, run only for the request's town (read on from its database first)."""
    async def answer(request: web.Request) -> web.StreamResponse:
        town = await find(request)
        await town.refresh()
        return await handler(request, town)
    return answer


def same_secret(given: str, expected: str | None) -> bool:
    """Whether a token from a URL is the town's (a closed page's "" matches nothing); compared
    in constant time, so that the time of a refusal tells nothing about the token."""
    return bool(expected) and secrets.compare_digest(given.encode(), expected.encode())  # type: ignore[union-attr]


async def safe_headers(request: web.Request, response: web.StreamResponse) -> None:
    for name, value in SAFE_HEADERS.items():
        response.headers.setdefault(name, value)


class AccessLog(AbstractAccessLogger):
    """One line per request at DEBUG level, with `<token>` in place of a town's token."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.debug("%s %s %s %s %.3fs", request.remote, request.method,
                          shown_path(request), response.status, time)

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.DEBUG)


def shown_path(request: web.BaseRequest) -> str:
    """The path as a log may show it: a route of no town's (a health check) as it is, any
    other with `<token>` in place of the token, also when nothing matched (a mistyped page
    may still carry a real token)."""
    if not isinstance(request, web.Request):
        return "-"
    resource = request.match_info.route.resource
    if resource is not None and "{token}" not in resource.canonical:
        return request.path
    return request.app[REDACT_KEY](request.path)


async def serve_app(app: web.Application, host: str, port: int) -> web.AppRunner:
    """The app listening on host:port, logging requests without their tokens (an OSError
    when it cannot listen)."""
    app_runner = web.AppRunner(app, access_log_class=AccessLog, access_log=ACCESS_LOG)
    await app_runner.setup()
    try:
        await web.TCPSite(app_runner, host, port).start()
    except OSError:
        await app_runner.cleanup()
        raise
    return app_runner


class TownShelf:
    """Towns opened read-only on their first visit with the right token, and kept:
    `database_of` says where a server's town is (None: not here)."""

    def __init__(self, world: World, database_of: Callable[[int], Path | None]) -> None:
        self.world, self.database_of = world, database_of
        self.towns: dict[int, WebTown] = {}
        self._lock = asyncio.Lock()

    async def town(self, guild_id: int, token: str) -> WebTown | None:
        """The server's town when `token` opens it; None for a wrong, closed or missing token
        and for a town that is not here alike."""
        async with self._lock:
            town = self.towns.get(guild_id)
            if town is None:
                opened = await self._open(guild_id, token)  # only for the right token
                if opened is not None:
                    self.towns[guild_id] = opened
                return opened
        kept = await town.store.web_token(town.history.town.id)  # as the town keeps it now
        return town if same_secret(token, kept) else None

    async def _open(self, guild_id: int, token: str) -> WebTown | None:
        """The town's history is read only for the right token: a guess opens the database
        just long enough to read one row."""
        path = self.database_of(guild_id)
        if path is None or not path.is_file():
            return None
        try:
            store = await Store.open(path, read_only=True)
        except StoreError:
            return None  # no town founded in it yet, or made by another townbot version
        try:
            row = await store.town()
            if row is not None and same_secret(token, await store.web_token(row.id)):
                return await WebTown.load(self.world, store)
        except StoreError:
            pass  # a history that cannot be read: no page, as for no town
        except BaseException:
            await store.close()
            raise
        await store.close()
        return None

    async def close(self) -> None:
        for town in self.towns.values():
            await town.close()
        self.towns.clear()


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
    if not re.fullmatch(r"-?[0-9]+", text, re.ASCII):
        raise StoreError(f"tick '{text[:20]}' is not a number; use a tick number such as 0")
    if len(text.lstrip("-")) > TICK_DIGITS:
        raise StoreError(f"tick '{text[:20]}...' is far outside this town's history; use a tick "
                         "number such as 0")
    return int(text)


def _people(request: web.Request) -> bool:
    """Whether the map draws its people (the page draws its own over it: people=0)."""
    text = request.query.get("people", "1")
    if text not in ("0", "1"):
        raise StoreError(f"people '{text[:20]}' is neither 0 nor 1; use people=0 for the map "
                         "without its people")
    return text == "1"


def _area(request: web.Request, town: WebTown) -> str | None:
    area = request.query.get("area") or None
    if area is not None and area not in town.world.sectors:
        raise StoreError(f"there is no area called '{area}'")
    return area


async def index(request: web.Request, town: WebTown) -> web.Response:
    areas = "".join(f'<option value="{escape(s.channel)}">{escape(name)}</option>'
                    for name, s in sorted(town.world.sectors.items()))
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    html = html.replace("{{town}}", escape(town.world.town)).replace("{{areas}}", areas)
    return web.Response(text=html, content_type="text/html")


async def static_file(request: web.Request, town: WebTown) -> web.Response:
    name = request.match_info["file"]
    if name not in STATIC_TYPES:
        raise web.HTTPNotFound()
    return web.Response(body=(STATIC / name).read_bytes(), content_type=STATIC_TYPES[name],
                        charset="utf-8")


async def map_png(request: web.Request, town: WebTown) -> web.Response:
    _, data = await town.picture(_tick(request), _area(request, town), _people(request))
    return web.Response(body=data, content_type="image/png",
                        headers={"Cache-Control": "no-cache"})


async def town_info(request: web.Request, town: WebTown) -> web.Response:
    history = town.history
    return web.json_response({
        "name": town.world.town, "start": history.town.start,
        "latest": format_game_time(history.latest), "ticks": town.tick_count(),
        "tick_minutes": history.town.tick_minutes, "areas": await town.areas()})


async def moment_info(request: web.Request, town: WebTown) -> web.Response:
    index, moment = town.moment(_tick(request))
    picture, _ = await town.picture(index, _area(request, town), people=False)
    marks, people = town.painter.identities(moment), []
    for name, marker in sorted(picture.positions_json().items()):
        person, mark = moment.people[name], marks[name]
        people.append({**marker, "name": name, "action": person.action, "emoji": person.emoji,
                       "place": person.place, "colour": mark.css, "initials": mark.initials})
    width, height = picture.image.size
    return web.json_response({"tick": index, "time": format_game_time(moment.time),
                              "night": is_night(moment.time), "width": width,
                              "height": height, "people": people, "troubles": moment.troubles,
                              "speech": town.speech_at(index)})


async def events_info(request: web.Request, town: WebTown) -> web.Response:
    _, moment = town.moment(_tick(request))
    return web.json_response(town.events_until(moment.time, request.query.get("area") or None,
                                               EVENT_LIMIT))


async def resident_page(request: web.Request, town: WebTown) -> web.Response:
    name = request.match_info["name"]
    tick = _tick(request)
    try:
        data = await town.resident(name)
    except KeyError:
        raise web.HTTPNotFound(text=f"no resident called {name}") from None
    if tick is not None:  # opened from the replay: as the resident was at the slider's moment
        _, moment = town.moment(tick)
        data = town.resident_at(data, moment)
    return web.Response(text=render_resident(town.world.town, data), content_type="text/html")


def text(value: object) -> str:
    """Escaped text of a value that may be missing."""
    return escape(str(value)) if value is not None else ""


def render_resident(town: str, data: dict[str, Any]) -> str:
    persona, body, summary = data["persona"], data["body"], data["summary"]
    where = body.get("place") or (f"walking to {body['travel_sector']}"
                                  if body.get("travel_sector")
                                  else f"{body['sector']}: {body['arena']}")
    moment = (f'<p class=as-of id=as-of>As at {escape(data["as_of"])} in the replay; '
              f'<a href="../">back to the live town</a></p>') if data.get("as_of") else ""
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
    page = Template((STATIC / "resident.html").read_text(encoding="utf-8"))
    return page.substitute(
        name=escape(data["name"]), town=escape(town), moment=moment,
        emoji=escape(body.get("emoji") or ""), action=escape(body.get("action") or ""),
        where=escape(where), about=escape(about), age=persona.age,
        traits=escape(", ".join(persona.traits)), day=escape(data["day"] or "not made yet"),
        plan=plan, blocks=blocks, recent=recent, reflections=reflections, talks=talks)


