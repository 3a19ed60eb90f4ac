"""The `townbot` command: check, sim, export."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence

from townbot.llm.offline import OFFLINE_LABEL
from townbot.store.database import Store, StoreError
from townbot.town.engine import Engine
from townbot.town.export import export_town, to_markdown
from townbot.town.launch import TownFiles, open_engine
from townbot.town.transcript import render_transcript
from townbot.town.usage import render_usage, summarise
from townbot.world.errors import DataError
from townbot.world.events import TownEvent


def _add_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--world", help="world file (default: ./world.yaml)")
    parser.add_argument("--personas", help="persona folder (default: ./personas)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="townbot", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="validate world.yaml and personas/, then summarise")
    _add_files(check)

    sim = commands.add_parser("sim", help="run the town headless and print the transcript")
    _add_files(sim)
    length = sim.add_mutually_exclusive_group()
    length.add_argument("--hours", type=float, help="game hours to run")
    length.add_argument("--days", type=float, help="game days to run (default 1)")
    sim.add_argument("--db", default="townbot.db", help="database file (default: townbot.db)")
    sim.add_argument("--seed", type=int, default=0, help="seed for a new town (default 0)")
    sim.add_argument("--scenario", help="scenario from scenarios/ to load first")
    sim.add_argument("--no-transcript", action="store_true", help="print only the summary")

    export = commands.add_parser("export", help="print a town's state and history")
    export.add_argument("--db", required=True, help="database file")
    export.add_argument("--format", choices=["json", "markdown"], default="json")
    return parser


def run_check(args: argparse.Namespace) -> int:
    world = TownFiles(args.world, args.personas).load()
    arenas = sum(len(s.arenas) for s in world.sectors.values())
    print(f"{world.town}: {len(world.sectors)} sectors, {arenas} arenas, "
          f"{len(world.object_paths())} objects, {len(world.personas)} residents: all valid")
    for sector in world.sectors.values():
        hours = f", open {sector.hours.describe()}" if sector.hours else ""
        print(f"  #{sector.channel:<24} {sector.name} ({sector.kind}{hours})")
    return 0


class Progress:
    """A one-line progress bar on a terminal; a few plain lines otherwise."""

    def __init__(self, total: int) -> None:
        self.total = max(1, total)
        self.tty = sys.stderr.isatty()
        self._last_tenth = -1

    def update(self, done: int, label: str) -> None:
        if self.tty:
            filled = 30 * done // self.total
            bar = "#" * filled + "." * (30 - filled)
            end = "\n" if done >= self.total else ""
            print(f"\r[{bar}] {done}/{self.total} ticks  {label}", end=end, file=sys.stderr,
                  flush=True)
        elif (tenth := 10 * done // self.total) != self._last_tenth:
            self._last_tenth = tenth
            print(f"progress: {done}/{self.total} ticks ({label})", file=sys.stderr, flush=True)


async def simulate(engine: Engine, ticks: int) -> list[TownEvent]:
    events: list[TownEvent] = []
    progress = Progress(ticks)
    for done in range(1, ticks + 1):
        events += await engine.tick()
        progress.update(done, engine.clock.now.strftime("%a %b %d %H:%M"))
    return events


async def run_sim(args: argparse.Namespace) -> int:
    engine = await open_engine(TownFiles(args.world, args.personas), args.db, seed=args.seed)
    try:
        if args.scenario:
            raise DataError(args.scenario, "", "scenarios are not available yet in this version")
        start = engine.clock.now
        ticks = engine.clock.ticks_for(hours=args.hours or 0, days=args.days or 0) \
            if (args.hours or args.days) else engine.clock.ticks_for(days=1)
        print(f"{engine.world.town}: {len(engine.minds)} residents, from "
              f"{start:%a %b %d %H:%M} for {ticks} ticks of {engine.clock.tick_minutes} min "
              f"(database {args.db})")
        events = await simulate(engine, ticks)
        if not args.no_transcript:
            print(render_transcript(events))
        channels = len({e.channel for e in events})
        print(f"{len(events)} events in {channels} channels, {start:%a %H:%M} to "
              f"{engine.clock.now:%a %H:%M}; saved to {args.db}")
        print(render_usage(summarise(await engine.store.usage_rows(engine.town.id))))
    finally:
        await engine.store.close()
    return 0


async def run_export(args: argparse.Namespace) -> int:
    store = await Store.open(args.db)
    try:
        data = await export_town(store)
    finally:
        await store.close()
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.format == "json"
          else to_markdown(data))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "sim":
        print(f"townbot: using the {OFFLINE_LABEL}", flush=True)
    try:
        if args.command == "check":
            return run_check(args)
        if args.command == "sim":
            return asyncio.run(run_sim(args))
        return asyncio.run(run_export(args))
    except (DataError, StoreError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
