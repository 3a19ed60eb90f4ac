"""How many towns one `townbot run` process ticks at 10 s per tick on the offline model.

Every town has its own scheduler job; when they fall due together they share one event loop, so
a round of ticks (each town one tick, as the jobs fire) must finish within the tick interval,
or the next ticks are skipped. This opens N towns (each its own database, as on Discord) and
times rounds of ticks through `TownService.tick`, the call the scheduler makes, from noon of the
first game day (a morning of memories behind each resident; every town starts from a copy of
one town run to that hour). N doubles while the slowest
round fits in the interval; the figure printed is the largest N that kept up, and the estimate
from the mean time per town tick. Posting is not included: it waits on Discord, not on the CPU.

Usage: python benchmarks/discord_towns.py [--interval 10] [--rounds 6] [--start-hour 12]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from townbot.llm.settings import load_settings
from townbot.town.launch import TownFiles, open_engine
from townbot.town.service import Person, TownService

ROOT = Path(__file__).resolve().parents[1]
FOUNDER = Person("bench", "bench", moderator=True)


FILES = TownFiles(str(ROOT / "world.yaml"), str(ROOT / "personas"))


async def open_town(path: Path) -> TownService:
    return TownService(await open_engine(FILES, str(path), settings=load_settings({})))


async def template(folder: Path, ticks: int) -> Path:
    """One town run `ticks` ticks from its founding, closed: each measured town copies it."""
    path = folder / "template.db"
    town = await open_town(path)
    for _ in range(ticks):
        await town.tick()
    await close([town])
    return path


async def open_towns(folder: Path, source: Path, count: int) -> list[TownService]:
    towns = []
    for n in range(count):
        copy = folder / f"{n}.db"
        shutil.copyfile(source, copy)
        towns.append(await open_town(copy))
    return towns


async def close(towns: list[TownService]) -> None:
    for town in towns:
        await town.engine.model.close()
        await town.engine.store.close()


async def measure(source: Path, count: int, rounds: int) -> tuple[float, float]:
    """(slowest round in seconds, mean CPU seconds per town tick) for `count` towns."""
    with tempfile.TemporaryDirectory() as folder:
        towns = await open_towns(Path(folder), source, count)
        slowest, cpu = 0.0, []
        for _ in range(rounds):
            wall, used = time.perf_counter(), time.process_time()
            await asyncio.gather(*(town.tick() for town in towns))
            slowest = max(slowest, time.perf_counter() - wall)
            cpu.append((time.process_time() - used) / count)
        await close(towns)
    return slowest, statistics.mean(cpu)


async def main(interval: float, rounds: int, start_hour: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        source = await template(Path(folder), max(0, round((start_hour - 7) * 6)))
        await find_limit(source, interval, rounds)


async def find_limit(source: Path, interval: float, rounds: int) -> None:
    count, kept_up, behind, cpu_per_tick = 1, 0, 0, []

    async def attempt(towns: int) -> bool:
        slowest, cpu = await measure(source, towns, rounds)
        cpu_per_tick.append(cpu)
        fits = slowest <= interval
        print(f"{towns:4d} towns: slowest round {slowest:6.2f} s, {cpu * 1000:6.1f} ms CPU per "
              f"town tick: {'keeps up' if fits else 'falls behind'}", flush=True)
        return fits

    while await attempt(count):  # double until a round no longer fits
        kept_up, count = count, count * 2
    behind = count
    for _ in range(2):  # then halve the gap twice
        middle = (kept_up + behind) // 2
        if middle in (kept_up, behind):
            break
        if await attempt(middle):
            kept_up = middle
        else:
            behind = middle
    cpu_bound = int(interval / statistics.mean(cpu_per_tick))
    print(f"towns per process at {interval:g} s per tick (offline model): {kept_up} "
          f"(measured; {behind} fell behind). CPU alone would allow about {cpu_bound}; the "
          "rest of a round is spent waiting on the databases' commits.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=float, default=10.0, help="seconds per tick")
    parser.add_argument("--rounds", type=int, default=6, help="ticks per town measured")
    parser.add_argument("--start-hour", type=float, default=12.0,
                        help="game hour the measured rounds start at (a town opens at 7)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.interval, arguments.rounds, arguments.start_hour))
