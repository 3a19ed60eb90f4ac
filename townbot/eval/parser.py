"""The arguments of `townbot eval` (argparse only: `townbot --help` stays light); the command
itself is townbot/eval/cli.py, imported once `eval` is chosen."""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path

from townbot.eval.conditions import CONDITION_SWITCHES, MATCH_ORDERS
from townbot.platforms.arguments import add_town_files

CONDITION_NAMES = tuple(CONDITION_SWITCHES)  # the names, in the report's order

JUDGE_ENV = "TOWNBOT_JUDGE_MODEL"
DEFAULT_OUT = "eval-report"


def _seeds(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of seeds; write e.g. 1,2,3") \
            from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"'{text}' needs distinct whole numbers, e.g. 1,2,3")
    return seeds


def _conditions(text: str) -> tuple[str, ...]:
    chosen = tuple(part.strip() for part in text.split(",") if part.strip())
    for name in chosen:
        if name not in CONDITION_NAMES:
            close = difflib.get_close_matches(name, list(CONDITION_NAMES), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise argparse.ArgumentTypeError(
                f"there is no condition '{name}'{hint}; choose from {', '.join(CONDITION_NAMES)}")
    if len(set(chosen)) != len(chosen) or not chosen:
        raise argparse.ArgumentTypeError(f"'{text}' needs distinct conditions from "
                                         f"{', '.join(CONDITION_NAMES)}")
    return chosen


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive whole number; e.g. 5000")
    return int(text)


def _add_options(parser: argparse.ArgumentParser, default_seeds: list[int] | None) -> None:
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help=f"folder for report.md, report.json and pictures ({DEFAULT_OUT})")
    parser.add_argument("--conditions", type=_conditions, default=CONDITION_NAMES,
                        help=f"comma-separated, of {', '.join(CONDITION_NAMES)} (default: all)")
    parser.add_argument("--judge-model", help=f"model that ranks and labels answers (default: "
                                              f"{JUDGE_ENV}, else the chat model)")
    parser.add_argument("--seeds", type=_seeds, default=default_seeds,
                        help="comma-separated seeds; each is one run, reported as mean and spread")
    parser.add_argument("--max-calls", type=_positive,
                        help="cap on the evaluation's model calls per run (then defaults answer)")
    parser.add_argument("--orders", type=_positive, default=MATCH_ORDERS,
                        help="random match orders each TrueSkill rating is the mean of, with "
                             f"its 95%% interval (default {MATCH_ORDERS})")
    parser.add_argument("--end-to-end-only", action="store_true",
                        help="skip the 25-question interviews and the judge's ranking")
    add_town_files(parser)


def add_eval_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "eval", help="the paper's evaluation of a town: interviews, ratings, spread, density",
        description="Evaluate a town the paper's way. `townbot eval --db TOWN.db` evaluates "
                    "a town; `townbot eval run` simulates first; `townbot eval compare A B` "
                    "compares two reports.")
    parser.add_argument("--db", help="the town's database (read only)")
    _add_options(parser, None)
    below = parser.add_subparsers(dest="eval_command")
    run = below.add_parser("run", help="simulate a fresh town per seed, then evaluate it")
    run.add_argument("--days", type=float, default=2.0, help="game days to simulate (default 2)")
    run.add_argument("--scenario", default="valentines-party",
                     help="scenario loaded before the first tick (default valentines-party; "
                          "'none' for none)")
    _add_options(run, [1])
    versus = below.add_parser("compare", help="two reports side by side")
    versus.add_argument("first", type=Path, help="report.json or its folder")
    versus.add_argument("second", type=Path, help="report.json or its folder")
