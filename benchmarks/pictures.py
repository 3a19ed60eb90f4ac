"""Time to draw one map of 25 residents, and to serve the web page of a town with 7 days of
history (issue 14).

Makes the 7-day town on the offline model in a temporary folder (a minute or two), or reuses
one given with --db. Then, in one process: replaying a moment from the outbox, drawing it
(buildings reused, as every front end does) and encoding the PNG; and over HTTP on 127.0.0.1,
the page, the API of a moment, a map picture at a tick not drawn before, the event feed and a
resident's page. Prints medians of CPU-light wall times; targets: a map in a few hundred ms,
each request well under a second.

Usage: python benchmarks/pictures.py [--db PATH] [--days 7] [--repeat 15]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from aiohttp import ClientSession, web

from townbot.llm.offline import OfflineModel
from townbot.llm.stack import build_model_stack
from townbot.pictures.townmap import MapPainter
from townbot.platforms.web.site import make_app
from townbot.platforms.web.town import WebTown
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.town.history import load_history
from townbot.world.loading import load_world

ROOT = Path(__file__).resolve().parents[1]


async def make_town(world, db: Path, days: int) -> None:
    store = await Store.open(db)
    engine = await Engine.open(world, store, build_model_stack(OfflineModel(seed=0)))
    ticks = engine.clock.ticks_for(days=days)
    started = time.perf_counter()
    for done in range(1, ticks + 1):
        await engine.tick()
        if done % 144 == 0:
            print(f"  day {done // 144} of {days} made ({time.perf_counter() - started:.0f} s)",
                  flush=True)
    await store.close()


def median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:7.1f} ms (min {min(samples) * 1000:.1f})"


async def time_drawing(world, db: Path, repeat: int) -> None:
    store = await Store.open(db, read_only=True)
    started = time.perf_counter()
    history = await load_history(store, world)
    loaded = time.perf_counter() - started
    await store.close()
    painter = MapPainter(world)
    started = time.perf_counter()
    painter.draw(history.at(history.latest))
    first = time.perf_counter() - started
    replay, draw, encode = [], [], []
    step = max(1, len(history.tick_times()) // repeat)
    for moment_time in history.tick_times()[::step][:repeat]:
        started = time.perf_counter()
        moment = history.at(moment_time + timedelta(minutes=5))
        replay.append(time.perf_counter() - started)
        started = time.perf_counter()
        picture = painter.draw(moment)
        draw.append(time.perf_counter() - started)
        started = time.perf_counter()
        picture.png()
        encode.append(time.perf_counter() - started)
    total = [a + b + c for a, b, c in zip(replay, draw, encode, strict=True)]
    print(f"history: {len(history.events)} events over {len(history.tick_times())} ticks, "
          f"read in {loaded * 1000:.0f} ms")
    print(f"first map (buildings drawn too):   {first * 1000:7.1f} ms")
    print(f"replay one moment from the events: {median_ms(replay)}")
    print(f"draw one map, 25 residents:        {median_ms(draw)}")
    print(f"encode it as PNG:                  {median_ms(encode)}")
    print(f"moment to PNG, all together:       {median_ms(total)}")


async def time_serving(world, db: Path, repeat: int) -> None:
    started = time.perf_counter()
    town = await WebTown.open(world, db)
    opened = time.perf_counter() - started
    runner = web.AppRunner(make_app(town), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    ticks = town.tick_count()
    print(f"web page: town opened in {opened * 1000:.0f} ms")
    async with ClientSession() as session:
        async def get(path: str) -> float:
            began = time.perf_counter()
            async with session.get(base + path) as response:
                await response.read()
                assert response.status == 200, (path, response.status)
            return time.perf_counter() - began

        pages = {"page /": lambda i: "/", "api/town": lambda i: "/api/town",
                 "api/moment (new tick)": lambda i: f"/api/moment?tick={(i * 67) % ticks}",
                 "map.png (drawn before)": lambda i: f"/map.png?tick={(i * 67) % ticks}",
                 "map.png (new tick)": lambda i: f"/map.png?tick={(i * 67 + 31) % ticks}",
                 "api/events (all areas)": lambda i: f"/api/events?tick={(i * 67) % ticks}",
                 "resident page": lambda i: "/resident/Isabella%20Rodriguez"}
        for label, path in pages.items():
            samples = [await get(path(i)) for i in range(repeat)]
            print(f"  {label:<24} {median_ms(samples)}")
    await runner.cleanup()
    await town.close()


async def main(db: str | None, days: int, repeat: int) -> None:
    world = load_world(ROOT / "world.yaml", ROOT / "personas")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(db) if db else Path(folder) / "week.db"
        if db is None:
            print(f"making a {days}-day town on the offline model...", flush=True)
            await make_town(world, path, days)
        await time_drawing(world, path, repeat)
        await time_serving(world, path, repeat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="an existing town to measure (default: make one)")
    parser.add_argument("--days", type=int, default=7, help="days of the town made (default 7)")
    parser.add_argument("--repeat", type=int, default=15, help="samples per figure (default 15)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.db, arguments.days, arguments.repeat))
