"""The `townbot` command: check, sim, play, run, sync, web, map, eval, doctor, export, usage,
reembed, backup, fork."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from importlib import import_module
from typing import TYPE_CHECKING

# Only argument parsers are imported here, so that `townbot --help` and a mistyped command stay
# fast: each command's module (and numpy, openai, discord...) loads in `main` once it is chosen.
from townbot import installed_version
from townbot.doctor import add_doctor_parser
from townbot.eval.parser import add_eval_parser
from townbot.platforms.arguments import (
    STOP_SIGNALS,
    Stopped,
    add_map_parser,
    add_play_parser,
    add_sim_parser,
    add_town_files,
    add_web_parser,
    check_scenario,
    exit_code,
    run_stoppable,
    say_stopping,
    signal_name,
    stop_like_ctrl_c,
)
from townbot.platforms.discord.cli import add_run_parser, add_sync_parser

if TYPE_CHECKING:
    from townbot.llm.settings import ModelSettings

DOC_PAGES = ("configuration", "models", "commands", "discord", "terminal", "map-and-web",
             "evaluation", "rules", "reliability", "data", "benchmarks")
READ_MORE = ("Read more: README.md (start there: set-up, hosting on Discord, real models) and the "
             f"pages of docs/ in townbot's source: {', '.join(DOC_PAGES)}.")


class VersionAction(argparse.Action):
    """`--version`: the installed package's version, looked up only when asked for, so that
    `townbot --help` and every command start without importlib.metadata."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:  # (namespace, values)
        print(f"townbot {installed_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="townbot", description=__doc__, epilog=READ_MORE)
    parser.add_argument("--version", action=VersionAction, help="print townbot's version and exit")
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

    backup = commands.add_parser(
        "backup", help="copy a town's database consistently, even while the town runs")
    backup.add_argument("--db", required=True, help="the town's database file")
    backup.add_argument("--to", required=True,
                        help="a new file, or a folder (the copy is named after the town and time)")

    fork = commands.add_parser(
        "fork", help="start a new town from a town or a backup, at a game day's start if asked")
    fork.add_argument("--db", required=True, help="the town (or backup) to start from")
    fork.add_argument("--to", required=True, help="the new town's database file")
    fork.add_argument("--at", type=int, metavar="DAY",
                      help="start from this game day's start (a checkpoint is kept each day)")
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
        with stop_signals_like_ctrl_c(process_ends=argv is None):
            try:
                return run(args)
            except KeyboardInterrupt as stop:  # Ctrl-C (or SIGTERM, SIGHUP) outside a town's run
                for signum in STOP_SIGNALS:  # from now on every further signal is only one line
                    with suppress(ValueError, OSError):  # not the main thread
                        signal.signal(signum, lambda number, frame: say_stopping(number))
                signum = stop.signum if isinstance(stop, Stopped) else signal.SIGINT
                print(f"stopped by {signal_name(signum)}", file=sys.stderr)
                return exit_code(signum)
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except user_errors() as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


@contextmanager
def stop_signals_like_ctrl_c(*, process_ends: bool) -> Iterator[None]:
    """SIGTERM and SIGHUP stop any command as Ctrl-C does (sim, play and run take them on their
    event loop; elsewhere they raise Stopped), and not silently with the default's exit 143.
    Only in the main thread (tests call `main` from others too). When the process ends with
    the command (`process_ends`: the `townbot` program), a signal after its last line is
    dropped, not a kill; otherwise (a test calling `main`) the handlers are put back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    for signum in STOP_SIGNALS[1:]:
        signal.signal(signum, stop_like_ctrl_c)
    try:
        yield
    finally:
        # When the process ends, ignored while it exits a moment later. Not blocked: a mask
        # holds only this thread, and as Python shuts down it puts the default (a kill) back
        # for signals it handled, which another thread (play's reader of piped lines) may then
        # take; an ignored signal it leaves as it is.
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_IGN if process_ends else handler)  # type: ignore[arg-type]


# Commands that need no model settings: the module and function that run each, imported only
# once the command is chosen. An async function's coroutine is run by asyncio.
COMMANDS_WITHOUT_MODEL = {
    "check": ("townbot.platforms.maintenance", "run_check"),
    "export": ("townbot.platforms.maintenance", "run_export"),
    "backup": ("townbot.platforms.maintenance", "run_backup"),
    "fork": ("townbot.platforms.maintenance", "run_fork"),
    "run": ("townbot.platforms.discord.cli", "run_command"),
    "sync": ("townbot.platforms.discord.cli", "run_sync"),
    "map": ("townbot.platforms.map_command", "run_map"),
    "web": ("townbot.platforms.web.cli", "run_web"),
    "eval": ("townbot.eval.cli", "run_eval"),
}


def run(args: argparse.Namespace) -> int:
    """The chosen command, its modules loaded first."""
    # One BLAS thread for the whole process (pin_blas_threads), asked for before numpy loads too:
    # then OpenBLAS starts no worker threads, whose spinning cost ~0.08 s of `sim`'s start-up CPU.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    openblas_starts_with_one = os.environ["OPENBLAS_NUM_THREADS"] == "1" \
        and "numpy" not in sys.modules
    from townbot.town.launch import pin_blas_threads

    pin_blas_threads(openblas_starts_with_one)
    if args.command in COMMANDS_WITHOUT_MODEL:
        module, function = COMMANDS_WITHOUT_MODEL[args.command]
        result = getattr(import_module(module), function)(args)
        return run_stoppable(result) if asyncio.iscoroutine(result) else result
    from townbot.llm.settings import load_settings

    settings = load_settings()
    check_scenario(getattr(args, "scenario", None))
    if args.command == "doctor":
        from townbot.doctor import run_doctor
        return run_doctor(args, settings, dict(os.environ))
    if args.command in ("usage", "reembed"):
        from townbot.platforms.maintenance import run_reembed, run_usage
        return run_stoppable((run_usage if args.command == "usage" else run_reembed)(args, settings))
    if args.command == "play":
        from townbot.platforms.console import run_play as run_town
    else:
        from townbot.platforms.sim import run_sim as run_town
    print(model_line(settings), flush=True)
    return asyncio.run(run_town(args, settings))
