"""The `townbot` command: check, sim, export, usage, reembed."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence

from townbot.llm.budget import OPEN, Budget
from townbot.llm.metering import MeteredModel, UsageRecord
from townbot.llm.offline import OFFLINE_LABEL
from townbot.llm.port import ModelError
from townbot.llm.settings import ModelSettings, SettingsError, load_settings
from townbot.platforms.console import add_play_parser, run_play
from townbot.platforms.discord.cli import add_run_parser, run_command
from townbot.store.database import Store, StoreError, TownRow, replace_embeddings
from townbot.town.engine import Engine
from townbot.town.export import export_town, to_markdown
from townbot.town.launch import TownFiles, make_model, open_engine
from townbot.town.service import Person, TownError, TownService
from townbot.town.transcript import render_transcript
from townbot.town.usage import render_usage, summarise
from townbot.world.clock import GameClock, parse_game_time
from townbot.world.errors import DataError
from townbot.world.events import TownEvent

PROBLEM_WORDS = {"cut_off": "cut off", "invalid_json": "not JSON", "wrong_shape": "of the wrong format",
                 "refused": "refused", "empty": "empty", "unusable": "refused by the ask's own check"}
REEMBED_CHUNK = 1024  # texts per embedding round: bounded memory, batched further by the client


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

    add_play_parser(commands)
    add_run_parser(commands)

    export = commands.add_parser("export", help="print a town's state and history")
    export.add_argument("--db", required=True, help="database file")
    export.add_argument("--format", choices=["json", "markdown"], default="json")

    usage = commands.add_parser("usage", help="print model calls, tokens and estimated price")
    usage.add_argument("--db", required=True, help="database file")

    reembed = commands.add_parser(
        "reembed", help="re-embed every memory with the configured embedding model")
    reembed.add_argument("--db", required=True, help="database file")
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


def budget_label(model: MeteredModel) -> str:
    """A note for the progress line once the budget starts to bite."""
    budget = model.budget
    if budget is None or budget.level(model.meter.game_day) == OPEN:
        return ""
    return "  " + budget.status(model.meter.game_day)


async def simulate(engine: Engine, ticks: int) -> list[TownEvent]:
    events: list[TownEvent] = []
    progress = Progress(ticks)
    for done in range(1, ticks + 1):
        events += await engine.tick()
        progress.update(done, engine.clock.now.strftime("%a %b %d %H:%M") + budget_label(engine.model))
    return events


def session_notes(model: MeteredModel) -> list[str]:
    """What happened with the model in this run: budget state, server retries, reply problems."""
    notes = []
    if model.budget is not None:
        notes.append(model.budget.status(model.meter.game_day))
    stats = getattr(model.inner, "stats", None)
    if stats is not None:
        notes.append(stats.describe())
    if model.meter.problems:
        problems = ", ".join(f"{n} {PROBLEM_WORDS.get(kind, kind)}"
                             for kind, n in sorted(model.meter.problems.items()))
        notes.append(f"unusable replies this run: {problems} (each got one repair try)")
    if model.meter.last_failure:
        notes.append(f"last model failure: {model.meter.last_failure}")
    return notes


async def run_sim(args: argparse.Namespace, settings: ModelSettings) -> int:
    engine = await open_engine(TownFiles(args.world, args.personas), args.db, seed=args.seed,
                               settings=settings)
    try:
        if args.scenario:
            print((await TownService(engine).load_scenario(SCENARIO_LOADER, args.scenario)).text)
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
        print(render_usage(summarise(await engine.store.usage_rows(engine.town.id), settings,
                                     engine.clock.tick_minutes)))
        for note in session_notes(engine.model):
            print(note)
    finally:
        await engine.model.close()
        await engine.store.close()
    return 0


async def _stored_town(store: Store) -> TownRow:
    town = await store.town()
    if town is None:
        raise StoreError(f"{store.path} holds no town yet; run `townbot sim --db {store.path}` first")
    return town


async def run_usage(args: argparse.Namespace, settings: ModelSettings) -> int:
    store = await Store.open(args.db)
    try:
        town = await _stored_town(store)
        rows = await store.usage_rows(town.id)
    finally:
        await store.close()
    print(f"{town.name} (database {args.db}; founded with {town.model})")
    print(render_usage(summarise(rows, settings, town.tick_minutes)))
    if settings.caps.any:
        budget = Budget(settings.caps)
        budget.restore(rows)
        print(budget.status(max((row["game_day"] for row in rows), default=1)))
    return 0


async def run_reembed(args: argparse.Namespace, settings: ModelSettings) -> int:
    store = await Store.open(args.db)
    model = None
    try:
        town = await _stored_town(store)
        model = make_model(town.seed, settings)
        await model.prepare()
        count = await reembed_town(store, town, model)
    finally:
        if model is not None:
            await model.close()
        await store.close()
    print(f"re-embedded {count} memories with {model.embedding_model} ({model.embedding_dim} "
          f"dimensions); they were embedded with {town.embedding_model} ({town.embedding_dim})")
    return 0


async def reembed_town(store: Store, town: TownRow, model: MeteredModel) -> int:
    """Every memory's vector from the model's embedder, written in one transaction."""
    memories = await store.memories(town.id)
    clock = GameClock(parse_game_time(town.start), town.tick_minutes, town.tick)
    report = getattr(model.inner, "embed_report", None)
    vectors, usage = [], []
    for start in range(0, len(memories), REEMBED_CHUNK):
        chunk = memories[start:start + REEMBED_CHUNK]
        texts = [stored.memory.text for stored in chunk]
        started = time.perf_counter()
        if report is None:  # a local embedder: nothing to count
            matrix = await model.inner.embed(texts)
        else:
            embedded = await report(texts)
            if embedded.failed:
                raise ModelError(f"{embedded.failed} memories could not be embedded (the server stayed "
                                 "unavailable); nothing was changed, try again later")
            matrix = embedded.vectors
            usage.append(UsageRecord("reembed", None, clock.day_number, embedded.model,
                                     embedded.prompt_tokens, 0, embedded.estimated,
                                     (time.perf_counter() - started) * 1000, "ok"))
        vectors += [(s.agent, s.memory.id, v) for s, v in zip(chunk, matrix, strict=True)]
    await replace_embeddings(store, town.id, model.embedding_model, model.embedding_dim, vectors,
                             town.tick, usage)
    return len(vectors)


async def run_export(args: argparse.Namespace) -> int:
    store = await Store.open(args.db)
    try:
        data = await export_town(store)
    finally:
        await store.close()
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.format == "json"
          else to_markdown(data))
    return 0


SCENARIO_LOADER = Person("cli:scenario", "townbot sim --scenario", moderator=True)


def model_line(settings: ModelSettings) -> str:
    """The first line of `townbot sim`: which model answers."""
    if settings.offline:
        return f"townbot: using the {OFFLINE_LABEL}"
    return f"townbot: using {settings.describe()}"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "check":
            return run_check(args)
        if args.command == "export":
            return asyncio.run(run_export(args))
        if args.command == "run":
            return run_command(args)
        settings = load_settings()
        if args.command == "sim":
            print(model_line(settings), flush=True)
            return asyncio.run(run_sim(args, settings))
        if args.command == "play":
            print(model_line(settings), flush=True)
            return asyncio.run(run_play(args, lambda: open_engine(
                TownFiles(args.world, args.personas), args.db, seed=args.seed, settings=settings)))
        if args.command == "usage":
            return asyncio.run(run_usage(args, settings))
        return asyncio.run(run_reembed(args, settings))
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (DataError, StoreError, SettingsError, ModelError, TownError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
