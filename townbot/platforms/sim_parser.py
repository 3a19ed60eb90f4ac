"""The arguments of `townbot sim` (argparse only: `townbot --help` stays light); the command
itself is townbot/platforms/sim.py, imported once `sim` is chosen."""

from __future__ import annotations

import argparse

from townbot.platforms.arguments import RESIDENTS_HELP, add_town_files, positive


def add_sim_parser(commands: argparse._SubParsersAction) -> None:
    sim = commands.add_parser("sim", help="run the town headless and print the transcript")
    add_town_files(sim)
    length = sim.add_mutually_exclusive_group()
    length.add_argument("--hours", type=positive, help="game hours to run")
    length.add_argument("--days", type=positive, help="game days to run (default 1)")
    sim.add_argument("--db", default="townbot.db", help="database file (default: townbot.db)")
    sim.add_argument("--seed", type=int, default=0, help="seed for a new town (default 0)")
    sim.add_argument("--scenario", help="scenario from scenarios/ to load first")
    sim.add_argument("--residents", help=RESIDENTS_HELP)
    shown = sim.add_mutually_exclusive_group()
    shown.add_argument("--by-area", action="store_true",
                       help="group the transcript by area instead of time order")
    shown.add_argument("--quiet", "--no-transcript", dest="quiet", action="store_true",
                       help="print only the summary")
