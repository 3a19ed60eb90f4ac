"""The arguments of `townbot play` (argparse only: `townbot --help` stays light); the command
itself is townbot/platforms/console.py, imported once `play` is chosen."""

from __future__ import annotations

import argparse

from townbot.platforms.arguments import RESIDENTS_HELP, add_town_files


def add_play_parser(commands: argparse._SubParsersAction) -> None:
    play = commands.add_parser("play", help="the town in the terminal: watch it and join in")
    add_town_files(play)
    play.add_argument("--db", default="townbot.db", help="database file (default: townbot.db)")
    play.add_argument("--seed", type=int, default=0, help="seed for a new town (default 0)")
    play.add_argument("--ticks", type=int, help="stop after this many ticks")
    play.add_argument("--speed", type=float, default=2.0,
                      help="real seconds per tick (default 2; 0 runs ticks back to back)")
    play.add_argument("--name", default=None,
                      help="your name in the audit log and as an interviewer (default: 'a visitor')")
    play.add_argument("--role", choices=["moderator", "everyone"], default="moderator",
                      help="play as a moderator (default) or as everyone else")
    play.add_argument("--scenario", help="scenario from scenarios/ to load first")
    play.add_argument("--residents", help=RESIDENTS_HELP)
