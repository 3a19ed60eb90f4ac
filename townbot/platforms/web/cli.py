"""Serving the web page: `townbot web --db PATH` serves one town's until Ctrl-C, and
`townbot run` with TOWNBOT_WEB_PORT serves every server's town beside the bot, with `/healthz`
and `/metrics` for a process manager and Prometheus. Neither of those two belongs to a town or
shows a town's contents, so neither needs a town's token. The arguments of `townbot web` are in
townbot/platforms/arguments.py."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import re
import secrets
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from townbot.platforms.arguments import TOKEN_LENGTH, run_stoppable
from townbot.platforms.metrics import TownMetrics
from townbot.platforms.web.site import TownShelf, make_app, make_towns_app, serve_app
from townbot.platforms.web.town import WebTown
from townbot.store.database import StoreError
from townbot.town.launch import TownFiles

TOKEN_FORM = re.compile(r"[A-Za-z0-9_-]+")


def run_web(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        raise StoreError(f"--port {args.port} is not a port; use 1 to 65535, e.g. 8080")
    args.token = page_token(args.host, args.token)
    try:
        run_stoppable(serve(args))
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    return 0


async def serve(args: argparse.Namespace) -> None:
    town = await WebTown.open(TownFiles(args.world, args.personas).load(), Path(args.db))
    app_runner = None
    try:
        try:
            app_runner = await serve_app(make_app(town, args.token), args.host, args.port)
        except OSError as error:
            raise StoreError(f"cannot listen on {args.host}:{args.port} ({error.strerror}); "
                             "choose another --port") from error
        where = f"http://{args.host}:{args.port}/" + (f"{args.token}/" if args.token else "")
        print(f"{town.world.town} (database {args.db}, read only) at {where} ; Ctrl-C stops",
              flush=True)
        if args.token:
            print("Only people given this address can open the page; a new --token shuts "
                  "out everyone who has the old one.", flush=True)
        await asyncio.Event().wait()
    finally:
        if app_runner is not None:
            await app_runner.cleanup()
        await town.close()


def page_token(host: str, token: str | None) -> str | None:
    """The token the page answers under: the one given, or off this machine a new one (the
    page of a town is for the people it is given to), or on localhost none."""
    if token is not None and (len(token) < TOKEN_LENGTH or not TOKEN_FORM.fullmatch(token)):
        raise StoreError(f"--token must be at least {TOKEN_LENGTH} letters, digits, - or _; "
                         f"e.g. --token {secrets.token_urlsafe(24)}")
    if token is None and not is_loopback(host):
        return secrets.token_urlsafe(24)
    return token


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach an address to listen on."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may well be reachable from elsewhere


async def serve_beside(world: Any, database_of: Any, host: str, port: int, *,
                       on_visit: Callable[[int], Awaitable[None]] | None = None,
                       metrics: TownMetrics | None = None,
                       health: Callable[[], dict[str, Any]] | None = None) -> Any:
    """The towns' pages beside the bot, each server's at /town/<server id>/<token>/, with
    /healthz and /metrics, and `on_visit(server id)` after each request for a town's page (a
    visit counts as someone being there: see town/rest.py); returns a callable that stops
    serving."""
    shelf = TownShelf(world, database_of)
    app = make_towns_app(shelf)

    async def healthz(request: web.Request) -> web.Response:
        """200 and what the process holds while it serves; 503 once it is shutting down."""
        state = health() if health is not None else {"status": "ok"}
        return web.json_response(state, status=200 if state.get("status") == "ok" else 503)

    async def metrics_text(request: web.Request) -> web.Response:
        body = metrics.text() if metrics is not None else b""
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_text)
    if on_visit is not None:
        async def visited(request: web.Request, response: web.StreamResponse) -> None:
            guild = request.match_info.get("guild", "")
            if guild.isdigit() and response.status < 400:
                await on_visit(int(guild))
        app.on_response_prepare.append(visited)
    try:
        app_runner = await serve_app(app, host, port)
    except OSError as error:
        from townbot.platforms.discord.config import WEB_PORT, ConfigError
        raise ConfigError(f"{WEB_PORT}={port}: cannot listen on {host}:{port} "
                          f"({error.strerror}); choose another port") from error

    async def stop() -> None:
        await app_runner.cleanup()
        await shelf.close()
    stop.addresses = app_runner.addresses  # type: ignore[attr-defined]
    return stop
