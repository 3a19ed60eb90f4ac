"""The arguments of `townbot play` (argparse only: `townbot --help` stays light); the command
itself is townbot/platforms/console.py, imported once `play` is chosen."""

from __future__ import annotations

import argparse

from townbot.platforms.arguments import (
    RESIDENTS_HELP,
    SEED_MAX,
    SPEED_MAX,
    TICKS_MAX,
    add_town_files,
    seconds_per_tick,
    seed,
    ticks,
)


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
