"""Argument types, checks and exit codes shared by the `townbot` subcommands.

Light on purpose: the parser modules import this while building `townbot --help`, so the town's
own modules load only inside `check_scenario`, which runs once a command was chosen (and before
a town is opened, so a bad command line writes nothing)."""

from __future__ import annotations

import argparse

INTERRUPTED = 130  # the shell's code for a program ended by Ctrl-C
RESIDENTS_HELP = ("a smaller town: a number of residents who know each other, or names "
                  "separated by commas (e.g. 4, or 'Isabella Rodriguez, Klaus Mueller')")


def add_town_files(parser: argparse.ArgumentParser) -> None:
    """--world and --personas, which every command that loads the town's files takes."""
    parser.add_argument("--world", help="world file (default: ./world.yaml)")
    parser.add_argument("--personas", help="persona folder (default: ./personas)")


def positive(text: str) -> float:
    """An argparse type: a number above zero (`--hours 0` would otherwise mean a whole day)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number; e.g. 2 or 0.5") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not above zero; give e.g. 2 or 0.5")
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
