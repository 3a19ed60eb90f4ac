"""Model calls per real hour of a town with people about and of a town at rest (town/rest.py).

Real time is a fake clock here: the town ticks through `TownService.tick` whenever its interval
says a tick is due (the scheduler's job on Discord), the hub's once-a-minute look for idle towns
runs on the same clock, and a visitor's command every few minutes keeps the town awake. So an
hour of real time costs a few seconds of CPU on the offline model, and the figures are the
calls the town would make, not a timing. The first phase: people about for an hour. The
second: nobody for some hours; the rest begins after TOWNBOT_IDLE_AFTER, and the calls per
real hour are counted from then.

Usage: python benchmarks/rest.py [--residents 5] [--idle-hours 3] [--idle-speed pause|600]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path

from townbot.llm.settings import load_settings
from townbot.town.launch import TownFiles, open_engine
from townbot.town.rest import Rest, RestSettings, rest_settings
from townbot.town.service import TownService
from townbot.town.usage import summarise

ROOT = Path(__file__).resolve().parents[1]
CHECK_EVERY = 60.0  # the hub looks for idle towns once a real minute
VISIT_EVERY = 300.0  # a person's command every five minutes while people are about


class FakeClock:
    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds


@dataclass
class Span:
    hours: float  # real hours counted
    calls: int
    ticks: int

    @property
    def per_hour(self) -> float:
        return self.calls / self.hours if self.hours else 0.0


async def calls_since(service: TownService, after_id: int) -> int:
    store, town = service.engine.store, service.engine.town
    rows = [r for r in await store.usage_rows(town.id) if r["id"] > after_id]
    return int(summarise(rows)["calls"])


async def live(service: TownService, rest: Rest, clock: FakeClock, hours: float,
               tick_seconds: float, visitors: bool) -> Span:
    """`hours` of real time: ticks when due, the idle check each minute, visits if any. The
    span counted is the time the town was in the state the phase is about (awake with
    visitors; at rest without)."""
    end = clock.seconds + hours * 3600
    next_tick: float | None = clock.seconds + (rest.interval(tick_seconds) or 0)
    next_check, next_visit = clock.seconds + CHECK_EVERY, clock.seconds
    first_id = await service.engine.store.last_usage_id(service.engine.town.id)
    counted_from = clock.seconds if visitors else None
    ticks = 0
    while True:
        due = [t for t in (next_tick, next_check, next_visit if visitors else None)
               if t is not None]
        clock.seconds = min(due)
        if clock.seconds >= end:
            break
        if visitors and clock.seconds == next_visit:
            if rest.seen():
                next_tick = clock.seconds + tick_seconds
            next_visit += VISIT_EVERY
        elif clock.seconds == next_check:
            if rest.due():  # as the hub does: the job's new interval starts now
                interval = rest.interval(tick_seconds)
                next_tick = None if interval is None else clock.seconds + interval
                counted_from = clock.seconds
                first_id = await service.engine.store.last_usage_id(service.engine.town.id)
            next_check += CHECK_EVERY
        else:
            await service.tick()
            ticks += 1
            interval = rest.interval(tick_seconds)
            next_tick = None if interval is None else clock.seconds + interval
    clock.seconds = end
    hours_counted = (end - counted_from) / 3600 if counted_from is not None else 0.0
    return Span(hours_counted, await calls_since(service, first_id), ticks)


async def active_and_idle(folder: Path, residents: str, settings: RestSettings,
                          active_hours: float = 1.0, idle_hours: float = 3.0,
                          tick_seconds: float = 10.0) -> tuple[Span, Span]:
    files = TownFiles(str(ROOT / "world.yaml"), str(ROOT / "personas"), residents)
    engine = await open_engine(files, str(folder / "town.db"), settings=load_settings({}))
    clock = FakeClock()
    try:
        service = TownService(engine, now=clock)
        rest = Rest(settings, clock)
        active = await live(service, rest, clock, active_hours, tick_seconds, visitors=True)
        idle = await live(service, rest, clock, idle_hours, tick_seconds, visitors=False)
    finally:
        await engine.model.close()
        await engine.store.close()
    return active, idle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--residents", default="5", help="a smaller town (default 5)")
    parser.add_argument("--idle-hours", type=float, default=3.0)
    parser.add_argument("--idle-after", default="", help="seconds (default: the setting's default)")
    parser.add_argument("--idle-speed", default="", help="'pause' (default) or seconds per tick")
    args = parser.parse_args()
    settings = rest_settings({"TOWNBOT_IDLE_AFTER": args.idle_after,
                              "TOWNBOT_IDLE_SPEED": args.idle_speed})
    with tempfile.TemporaryDirectory() as folder:
        active, idle = asyncio.run(active_and_idle(Path(folder), args.residents, settings,
                                                   idle_hours=args.idle_hours))
    print(f"{args.residents} residents, one tick every 10 s while people are about; at rest "
          f"after {settings.after:g} s alone: {settings.describe()}")
    print(f"  active: {active.per_hour:8.1f} calls per real hour ({active.calls} calls, "
          f"{active.ticks} ticks in {active.hours:g} h)")
    print(f"  idle:   {idle.per_hour:8.1f} calls per real hour ({idle.calls} calls at rest over "
          f"{idle.hours:.2f} h; {idle.ticks} ticks in the phase, those before the rest included)")
    ratio = idle.per_hour / active.per_hour if active.per_hour else 0.0
    print(f"  idle/active: {ratio:.3f} (target at most 0.1)")


if __name__ == "__main__":
    main()
