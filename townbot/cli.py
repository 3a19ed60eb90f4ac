"""The `townbot` command: check, sim, play, run, sync, web, map, eval, doctor, export, usage,
reembed."""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

# Only argument parsers are imported here, so that `townbot --help` and a mistyped command stay
# fast: each command's module (and numpy, openai, discord...) loads in `main` once it is chosen.
from townbot.doctor import add_doctor_parser
from townbot.eval.parser import add_eval_parser
from townbot.platforms.arguments import INTERRUPTED, add_town_files, check_scenario
from townbot.platforms.discord.cli import add_run_parser, add_sync_parser
from townbot.platforms.map_parser import add_map_parser
from townbot.platforms.play_parser import add_play_parser
from townbot.platforms.sim_parser import add_sim_parser
from townbot.platforms.web.cli import add_web_parser

if TYPE_CHECKING:
    from townbot.llm.settings import ModelSettings

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="townbot", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="validate world.yaml and personas/, then summarise")
    add_town_files(check)

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


def model_line(settings: ModelSettings) -> str:
    """The first line of `townbot sim`: which model answers."""
    if settings.offline:
        from townbot.llm.offline import OFFLINE_LABEL

        return f"townbot: using the {OFFLINE_LABEL}"
    return f"townbot: using {settings.describe()}"


def user_errors() -> tuple[type[Exception], ...]:
    """The errors whose message is meant for the user. Called only once an error arrives: by
    then the module that raised it is loaded, and --help never pays for the others."""
    from townbot.llm.port import ModelError
    from townbot.llm.settings import SettingsError
    from townbot.store.errors import StoreError
    from townbot.town.service import TownError
    from townbot.world.errors import DataError

    return DataError, StoreError, SettingsError, ModelError, TownError


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except KeyboardInterrupt:  # Ctrl-C before a town was open: nothing to save
        print("stopped by Ctrl-C", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except user_errors() as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    """The chosen command, its module imported only now."""
    from townbot.town.launch import pin_blas_threads

    pin_blas_threads()
    if args.command == "check":
        from townbot.platforms.maintenance import run_check
        return run_check(args)
    if args.command == "export":
        from townbot.platforms.maintenance import run_export
        return asyncio.run(run_export(args))
    if args.command in ("run", "sync"):
        from townbot.platforms.discord.cli import run_command, run_sync
        return run_command(args) if args.command == "run" else run_sync(args)
    if args.command == "map":
        from townbot.platforms.map_command import run_map
        return run_map(args)
    if args.command == "web":
        from townbot.platforms.web.cli import run_web
        return run_web(args)
    if args.command == "eval":
        from townbot.eval.cli import run_eval
        return run_eval(args)
    from townbot.llm.settings import load_settings

    settings = load_settings()
    check_scenario(getattr(args, "scenario", None))
    if args.command == "sim":
        from townbot.platforms.sim import run_sim
        print(model_line(settings), flush=True)
        return asyncio.run(run_sim(args, settings))
    if args.command == "play":
        return run_play_command(args, settings)
    if args.command == "doctor":
        from townbot.doctor import run_doctor
        return run_doctor(args, settings, dict(os.environ))
    if args.command == "usage":
        from townbot.platforms.maintenance import run_usage
        return asyncio.run(run_usage(args, settings))
    from townbot.platforms.maintenance import run_reembed
    return asyncio.run(run_reembed(args, settings))


def run_play_command(args: argparse.Namespace, settings: ModelSettings) -> int:
    from townbot.platforms.console import run_play
    from townbot.town.launch import TownFiles, open_engine

    if isinstance(sys.stdin, io.TextIOWrapper):  # a stray invalid byte must not end play
        sys.stdin.reconfigure(errors="replace")
    print(model_line(settings), flush=True)
    return asyncio.run(run_play(args, lambda: open_engine(
        TownFiles(args.world, args.personas, args.residents), args.db, seed=args.seed,
        settings=settings)))
