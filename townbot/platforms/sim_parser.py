"""The arguments of `townbot sim` (argparse only: `townbot --help` stays light); the command
itself is townbot/platforms/sim.py, imported once `sim` is chosen."""

from __future__ import annotations

import argparse

from townbot.platforms.arguments import (
    DAYS_MAX,
    HOURS_MAX,
    RESIDENTS_HELP,
    SEED_MAX,
    add_town_files,
    game_days,
    game_hours,
    seed,
)


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
