"""The `townbot` command: check, sim, export, usage, reembed."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import sys
from collections.abc import Sequence

from townbot.doctor import add_doctor_parser, run_doctor
from townbot.eval.cli import add_eval_parser, run_eval
from townbot.llm.budget import Budget
from townbot.llm.metering import CollectedUsage
from townbot.llm.offline import OFFLINE_LABEL
from townbot.llm.port import CallContext, LanguageModel, ModelError
from townbot.llm.settings import ModelSettings, SettingsError, load_settings
from townbot.platforms.arguments import check_scenario
from townbot.platforms.console import add_play_parser, run_play
from townbot.platforms.discord.cli import add_run_parser, add_sync_parser, run_command, run_sync
from townbot.platforms.map_command import add_map_parser, run_map
from townbot.platforms.sim import INTERRUPTED, add_sim_parser, run_sim
from townbot.platforms.web.cli import add_web_parser, run_web
from townbot.store.database import Store, StoreError, TownRow, replace_embeddings
from townbot.town.export import export_town, to_markdown
from townbot.town.launch import TownFiles, make_model, open_engine, pin_blas_threads
from townbot.town.service import TownError
from townbot.town.usage import render_usage, summarise
from townbot.world.clock import GameClock, parse_game_time
from townbot.world.errors import DataError

REEMBED_CHUNK = 1024  # texts per embedding round: bounded memory, batched further by the client


def _add_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--world", help="world file (default: ./world.yaml)")
    parser.add_argument("--personas", help="persona folder (default: ./personas)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="townbot", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="validate world.yaml and personas/, then summarise")
    _add_files(check)

    add_sim_parser(commands)
    add_play_parser(commands)
    add_doctor_parser(commands)
    add_run_parser(commands)
    add_map_parser(commands)
    add_sync_parser(commands)
    add_web_parser(commands)
    add_eval_parser(commands)

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


async def _stored_town(store: Store) -> TownRow:
    town = await store.town()
    if town is None:
        raise StoreError(f"{store.path} holds no town yet; run `townbot sim --db {store.path}` first")
    return town


async def run_usage(args: argparse.Namespace, settings: ModelSettings) -> int:
    store = await Store.open(args.db, read_only=True)
    try:
        town = await _stored_town(store)
        rows = await store.usage_rows(town.id)
    finally:
        await store.close()
    print(f"{town.name} (database {args.db}; founded with {town.model})")
    print(render_usage(summarise(rows, settings, town.tick_minutes), "model usage, town totals (all runs):"))
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


async def reembed_town(store: Store, town: TownRow, model: LanguageModel) -> int:
    """Every memory's vector from the model's embedder, written in one transaction."""
    from townbot.llm.openai_client import ServerUnavailable  # openai is slow to import: when used

    memories = await store.memories(town.id)
    clock = GameClock(parse_game_time(town.start), town.tick_minutes, town.tick)
    usage = CollectedUsage()  # stored with the vectors, all or nothing
    call = CallContext(game_day=clock.day_number, purpose="reembed", usage=usage)
    vectors = []
    for start in range(0, len(memories), REEMBED_CHUNK):
        chunk = memories[start:start + REEMBED_CHUNK]
        try:
            embedded = await model.embed_report([stored.memory.text for stored in chunk], call)
        except ServerUnavailable as error:
            raise ModelError(f"{error}; nothing was changed, try again later") from None
        if embedded.failed:
            raise ModelError(f"{embedded.failed} memories could not be embedded (the server stayed "
                             "unavailable); nothing was changed, try again later")
        vectors += [(s.agent, s.memory.id, v)
                    for s, v in zip(chunk, embedded.vectors, strict=True)]
    await replace_embeddings(store, town.id, model.embedding_model, model.embedding_dim, vectors,
                             town.tick, usage.records)
    return len(vectors)


async def run_export(args: argparse.Namespace) -> int:
    store = await Store.open(args.db, read_only=True)
    try:
        data = await export_town(store)
    finally:
        await store.close()
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.format == "json"
          else to_markdown(data))
    return 0


def model_line(settings: ModelSettings) -> str:
    """The first line of `townbot sim`: which model answers."""
    if settings.offline:
        return f"townbot: using the {OFFLINE_LABEL}"
    return f"townbot: using {settings.describe()}"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    pin_blas_threads()
    try:
        if args.command == "check":
            return run_check(args)
        if args.command == "export":
            return asyncio.run(run_export(args))
        if args.command == "run":
            return run_command(args)
        if args.command == "map":
            return run_map(args)
        if args.command == "sync":
            return run_sync(args)
        if args.command == "web":
            return run_web(args)
        if args.command == "eval":
            return run_eval(args)
        settings = load_settings()
        check_scenario(getattr(args, "scenario", None))
        if args.command == "sim":
            print(model_line(settings), flush=True)
            return asyncio.run(run_sim(args, settings))
        if args.command == "play":
            if isinstance(sys.stdin, io.TextIOWrapper):  # a stray invalid byte must not end play
                sys.stdin.reconfigure(errors="replace")
            print(model_line(settings), flush=True)
            return asyncio.run(run_play(args, lambda: open_engine(
                TownFiles(args.world, args.personas, args.residents), args.db, seed=args.seed,
                settings=settings)))
        if args.command == "doctor":
            return run_doctor(args, settings, dict(os.environ))
        if args.command == "usage":
            return asyncio.run(run_usage(args, settings))
        return asyncio.run(run_reembed(args, settings))
    except KeyboardInterrupt:  # Ctrl-C before a town was open: nothing to save
        print("stopped by Ctrl-C", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (DataError, StoreError, SettingsError, ModelError, TownError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
