"""The arguments of `townbot sim`, `play`, `map` and `web`, the argument types and checks the
subcommands share, and their exit codes on signals.

Light on purpose (argparse only): `townbot --help` imports this, so the town's own modules load
only inside `check_scenario`, which runs once a command was chosen (and before a town is opened,
so a bad command line writes nothing). Each command's own module loads once it is chosen."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

# Each stops a run as Ctrl-C does; the exit code is the shell's for the signal: 128 + its number
# (Ctrl-C 130, SIGTERM 143, SIGHUP 129).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def signal_name(signum: int) -> str:
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


def exit_code(signum: int) -> int:
    return 128 + signum


def say_stopping(signum: int) -> None:
    """The one line for a signal that comes while the town is already stopping. Written with
    os.write: a signal handler may run in the middle of a print."""
    with contextlib.suppress(OSError):
        os.write(2, f"{signal_name(signum)} again: the town is being saved and closed; it stops "
                    "in a moment\n".encode())


T = TypeVar("T")


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where Python would raise KeyboardInterrupt for Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal_name(signum))
        self.signum = signum


def stop_like_ctrl_c(signum: int, frame: object) -> None:
    raise Stopped(signum)


def run_stoppable(command: Coroutine[Any, Any, T]) -> T:
    """Run an async command as asyncio.run does, SIGTERM and SIGHUP cancelling it as the runner
    cancels it for Ctrl-C: raised by the signal handler, Stopped could land in any task of the
    loop (a web server accepting a connection) and end there as a logged traceback. A second
    signal stops at once."""
    async def stoppable() -> T:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        received: list[int] = []

        def stop(signum: int) -> None:
            if received or task is None or task.done():
                raise Stopped(signum)
            received.append(signum)
            task.cancel()

        # Only the main thread takes signals (tests run main in others too).
        main_thread = threading.current_thread() is threading.main_thread()
        previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS[1:] if main_thread}
        for signum in previous:
            loop.add_signal_handler(signum, stop, signum)
        try:
            result = await command
        except asyncio.CancelledError:
            if not received:
                raise
        finally:
            for signum, handler in previous.items():  # the loop's handler would leave SIG_DFL
                loop.remove_signal_handler(signum)
                signal.signal(signum, handler)  # type: ignore[arg-type]
        if received:
            raise Stopped(received[0])
        return result

    return asyncio.run(stoppable())


RESIDENTS_HELP = ("a smaller town: a number of residents who know each other, or names "
                  "separated by commas (e.g. 4, or 'Isabella Rodriguez, Klaus Mueller')")


def add_town_files(parser: argparse.ArgumentParser) -> None:
    """--world and --personas, which every command that loads the town's files takes."""
    parser.add_argument("--world", help="world file (default: ./world.yaml)")
    parser.add_argument("--personas", help="persona folder (default: ./personas)")


# The documented ranges of the numbers on command lines (docs/reliability.md): each is checked
# by argparse, before a town is opened or a file created.
HOURS_MAX = 8760.0  # a game year
DAYS_MAX = 365.0
TICKS_MAX = 1_000_000
SEED_MAX = 2**32 - 1
SPEED_MAX = 3600.0  # real seconds per tick, as /speed allows (town.service.SPEED_RANGE)
TOKEN_LENGTH = 16  # the shortest token of a web page


def positive(high: float) -> Callable[[str], float]:
    """An argparse type: a number above zero (`--hours 0` would otherwise mean a whole day) and
    at most `high`."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number; e.g. 2 or 0.5") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text} is not above zero; give e.g. 2 or 0.5")
        if value == float("inf"):
            raise argparse.ArgumentTypeError(f"{text} is not a finite number; give e.g. 2 or 0.5")
        if value > high:
            raise argparse.ArgumentTypeError(f"{text} is more than {high:g}; give 0.5 to {high:g}")
        return value
    return parse


def whole(low: int, high: int, example: str) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high`."""
    def parse(text: str) -> int:
        try:
            value = int(text.strip().replace("_", ""), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number; e.g. {example}") \
                from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is out of range; give {low} to {high}")
        return value
    return parse


seed = whole(0, SEED_MAX, "42")
ticks = whole(1, TICKS_MAX, "12")
game_hours = positive(HOURS_MAX)
game_days = positive(DAYS_MAX)


def seconds_per_tick(text: str) -> float:
    """An argparse type: real seconds per tick, 0 (back to back) to SPEED_MAX."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds; e.g. 2 or 0.5") \
            from None
    if not 0 <= value <= SPEED_MAX:
        raise argparse.ArgumentTypeError(f"{text} is out of range; give 0 to {SPEED_MAX:g} seconds")
    return value


def check_scenario(name: str | None) -> None:
    """Refuse an unknown or broken scenario before a town is founded or anything written."""
    if name is None:
        return
    from townbot.town.launch import PROJECT_ROOT
    from townbot.town.scenarios import load_scenario, scenario_names
    from townbot.town.service import TownError, closest_names

    names = scenario_names(PROJECT_ROOT / "scenarios")
    if name not in names:
        raise TownError(f"there is no scenario '{name}'{closest_names(name, names)}; "
                        f"available: {', '.join(names) or 'none'}")
    load_scenario(PROJECT_ROOT / "scenarios", name)


def add_sim_parser(commands: argparse._SubParsersAction) -> None:
    sim = commands.add_parser("sim", help="run the town headless and print the transcript")
    add_town_files(sim)
    length = sim.add_mutually_exclusive_group()
    length.add_argument("--hours", type=game_hours, help=f"game hours to run (up to {HOURS_MAX:g})")
    length.add_argument("--days", type=game_days,
                        help=f"game days to run (default 1, up to {DAYS_MAX:g})")
    sim.add_argument("--db", default="townbot.db", help="database file (default: townbot.db)")
    sim.add_argument("--seed", type=seed, default=0,
                     help=f"seed for a new town (default 0; 0 to {SEED_MAX})")
    sim.add_argument("--scenario", help="scenario from scenarios/ to load first")
    sim.add_argument("--residents", help=RESIDENTS_HELP)
    shown = sim.add_mutually_exclusive_group()
    shown.add_argument("--by-area", action="store_true",
                       help="group the transcript by area instead of time order")
    shown.add_argument("--quiet", "--no-transcript", dest="quiet", action="store_true",
                       help="print only the summary")


def add_play_parser(commands: argparse._SubParsersAction) -> None:
    play = commands.add_parser("play", help="the town in the terminal: watch it and join in")
    add_town_files(play)
    play.add_argument("--db", default="townbot.db", help="database file (default: townbot.db)")
    play.add_argument("--seed", type=seed, default=0,
                      help=f"seed for a new town (default 0; 0 to {SEED_MAX})")
    play.add_argument("--ticks", type=ticks,
                      help=f"stop after this many ticks (1 to {TICKS_MAX}); /wait stays within it")
    play.add_argument("--speed", type=seconds_per_tick, default=2.0,
                      help=f"real seconds per tick (default 2; 0 runs ticks back to back; at most "
                           f"{SPEED_MAX:g})")
    play.add_argument("--name", default=None,
                      help="your name in the audit log and as an interviewer (default: 'a visitor')")
    play.add_argument("--role", choices=["moderator", "everyone"], default="moderator",
                      help="play as a moderator (default) or as everyone else")
    play.add_argument("--scenario", help="scenario from scenarios/ to load first")
    play.add_argument("--residents", help=RESIDENTS_HELP)


def add_map_parser(commands: argparse._SubParsersAction) -> None:
    draw = commands.add_parser("map", help="draw the town at a moment (PNG) or over a span (GIF, or "
                               "MP4/WebM with ffmpeg)")
    draw.add_argument("--db", required=True, help="the town's database (read only)")
    draw.add_argument("--at", help='game time, e.g. "2023-02-14 17:30" (default: the last tick)')
    draw.add_argument("--from", dest="start", help="first game time of an animation")
    draw.add_argument("--to", dest="end", help="last game time of an animation")
    draw.add_argument("--every", type=int, default=1, help="ticks between animation frames "
                      "(default 1)")
    draw.add_argument("--area", help="draw one sector close up, e.g. 'Hobbs Cafe'")
    draw.add_argument("--out", required=True, help="picture to write: .png, or for a span .gif "
                      "(.mp4 or .webm when ffmpeg is installed)")
    draw.add_argument("--positions", help="also write where each person was drawn (pixels and "
                      "place) to this JSON file")
    add_town_files(draw)


def add_web_parser(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("web", help="serve a town's read-only web page: live map, "
                                "replay, events, residents")
    serve.add_argument("--db", required=True, help="the town's database (read only)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                       "127.0.0.1; 0.0.0.0 for every interface)")
    serve.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    serve.add_argument("--token", help="serve the page only under /TOKEN/ (at least "
                       f"{TOKEN_LENGTH} letters, digits, - or _); needed off localhost, where "
                       "one is made and printed when none is given")
    add_town_files(serve)
