"""`townbot web --db PATH`: serve a town's read-only web page until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any


def add_web_parser(subparsers: Any) -> None:
    serve = subparsers.add_parser("web", help="serve a town's read-only web page: live map, "
                                  "replay, events, residents")
    serve.add_argument("--db", required=True, help="the town's database (read only)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                       "127.0.0.1; 0.0.0.0 for every interface)")
    serve.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    serve.add_argument("--world", help="world file (default: ./world.yaml)")
    serve.add_argument("--personas", help="persona folder (default: ./personas)")


def run_web(args: argparse.Namespace) -> int:
    from townbot.store.database import StoreError

    if not 1 <= args.port <= 65535:
        raise StoreError(f"--port {args.port} is not a port; use 1 to 65535, e.g. 8080")
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    return 0


async def serve(args: argparse.Namespace) -> None:
    from aiohttp import web

    from townbot.platforms.web.site import make_app
    from townbot.platforms.web.town import WebTown
    from townbot.town.launch import TownFiles

    town = await WebTown.open(TownFiles(args.world, args.personas).load(), Path(args.db))
    runner = web.AppRunner(make_app(town), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, args.host, args.port)
        try:
            await site.start()
        except OSError as error:
            from townbot.store.database import StoreError
            raise StoreError(f"cannot listen on {args.host}:{args.port} ({error.strerror}); "
                             "choose another --port") from error
        print(f"{town.world.town} (database {args.db}, read only) at "
              f"http://{args.host}:{args.port}/ ; Ctrl-C stops", flush=True)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
        await town.close()


async def serve_beside(world: Any, database_of: Any, host: str, port: int, *,
                       on_visit: Any = None, metrics: Any = None, health: Any = None) -> Any:
    """The towns' pages beside the bot (`townbot run` with TOWNBOT_WEB_PORT), each server's
    at /town/<server id>/, with /healthz and /metrics (web/operations.py); returns a callable
    that stops serving."""
    from aiohttp import web

    from townbot.platforms.web.operations import add_operations
    from townbot.platforms.web.site import TownShelf, make_towns_app

    shelf = TownShelf(world, database_of)
    app = make_towns_app(shelf)
    add_operations(app, metrics, health, on_visit)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as error:
        await runner.cleanup()
        from townbot.platforms.discord.config import WEB_PORT, ConfigError
        raise ConfigError(f"{WEB_PORT}={port}: cannot listen on {host}:{port} "
                          f"({error.strerror}); choose another port") from error

    async def stop() -> None:
        await runner.cleanup()
        await shelf.close()
    stop.addresses = runner.addresses  # type: ignore[attr-defined]
    return stop
