"""`/healthz` and `/metrics` beside the towns' pages of `townbot run`, for a process manager
and Prometheus. Neither belongs to a town nor shows a town's contents, so neither needs a
town's token. Also: a visit to a town's page counts as someone being there (see town/rest.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from townbot.platforms.metrics import TownMetrics

METRICS_KEY = web.AppKey("metrics", object)
HEALTH_KEY = web.AppKey("health", object)


def add_operations(app: web.Application, metrics: TownMetrics | None,
                   health: Callable[[], dict[str, Any]] | None,
                   on_visit: Callable[[int], Awaitable[None]] | None) -> None:
    """The two routes, and `on_visit(server id)` after each request for a town's page."""
    app[METRICS_KEY], app[HEALTH_KEY] = metrics, health
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_text)
    if on_visit is not None:
        async def visited(request: web.Request, response: web.StreamResponse) -> None:
            guild = request.match_info.get("guild", "")
            if guild.isdigit() and response.status < 400:
                await on_visit(int(guild))
        app.on_response_prepare.append(visited)


async def healthz(request: web.Request) -> web.Response:
    """200 and what the process holds while it serves; 503 once it is shutting down."""
    health = request.app[HEALTH_KEY]
    state = health() if health is not None else {"status": "ok"}
    return web.json_response(state, status=200 if state.get("status") == "ok" else 503)


async def metrics_text(request: web.Request) -> web.Response:
    metrics = request.app[METRICS_KEY]
    body = metrics.text() if metrics is not None else b""
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})
