"""`townbot web --db PATH`: serve a town's read-only web page until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import re
import secrets
import sys
from pathlib import Path
from typing import Any

TOKEN_LENGTH = 16
TOKEN_FORM = re.compile(r"[A-Za-z0-9_-]+")


def add_web_parser(subparsers: Any) -> None:
    serve = subparsers.add_parser("web", help="serve a town's read-only web page: live map, "
                                  "replay, events, residents")
    serve.add_argument("--db", required=True, help="the town's database (read only)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                       "127.0.0.1; 0.0.0.0 for every interface)")
    serve.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    serve.add_argument("--token", help="serve the page only under /TOKEN/ (at least "
                       f"{TOKEN_LENGTH} letters, digits, - or _); needed off localhost, where "
                       "one is made and printed when none is given")
    serve.add_argument("--world", help="world file (default: ./world.yaml)")
    serve.add_argument("--personas", help="persona folder (default: ./personas)")


def run_web(args: argparse.Namespace) -> int:
    from townbot.store.database import StoreError

    if not 1 <= args.port <= 65535:
        raise StoreError(f"--port {args.port} is not a port; use 1 to 65535, e.g. 8080")
    args.token = page_token(args.host, args.token)
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    return 0


async def serve(args: argparse.Namespace) -> None:
    from aiohttp import web

    from townbot.platforms.web.site import make_app, runner
    from townbot.platforms.web.town import WebTown
    from townbot.town.launch import TownFiles

    town = await WebTown.open(TownFiles(args.world, args.personas).load(), Path(args.db))
    app_runner = runner(make_app(town, args.token))
    await app_runner.setup()
    try:
        site = web.TCPSite(app_runner, args.host, args.port)
        try:
            await site.start()
        except OSError as error:
            from townbot.store.database import StoreError
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
        await app_runner.cleanup()
        await town.close()


def page_token(host: str, token: str | None) -> str | None:
    """The token the page answers under: the one given, or off this machine a new one (the
    page of a town is for the people it is given to), or on localhost none."""
    from townbot.store.database import StoreError

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
                       on_visit: Any = None, metrics: Any = None, health: Any = None) -> Any:
    """The towns' pages beside the bot (`townbot run` with TOWNBOT_WEB_PORT), each server's
    at /town/<server id>/<token>/, with /healthz and /metrics (web/operations.py); returns a
    callable that stops serving."""
    from aiohttp import web

    from townbot.platforms.web.operations import add_operations
    from townbot.platforms.web.site import TownShelf, make_towns_app, runner

    shelf = TownShelf(world, database_of)
    app = make_towns_app(shelf)
    add_operations(app, metrics, health, on_visit)
    app_runner = runner(app)
    await app_runner.setup()
    try:
        await web.TCPSite(app_runner, host, port).start()
    except OSError as error:
        await app_runner.cleanup()
        from townbot.platforms.discord.config import WEB_PORT, ConfigError
        raise ConfigError(f"{WEB_PORT}={port}: cannot listen on {host}:{port} "
                          f"({error.strerror}); choose another port") from error

    async def stop() -> None:
        await app_runner.cleanup()
        await shelf.close()
    stop.addresses = app_runner.addresses  # type: ignore[attr-defined]
    return stop
