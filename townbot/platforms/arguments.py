"""Checks of command-line arguments shared by the `townbot` subcommands, made before a town
is opened so a bad command line writes nothing."""

from __future__ import annotations

import argparse

from townbot.town.launch import PROJECT_ROOT
from townbot.town.scenarios import load_scenario, scenario_names
from townbot.town.service import TownError, closest_names


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
    names = scenario_names(PROJECT_ROOT / "scenarios")
    if name not in names:
        raise TownError(f"there is no scenario '{name}'{closest_names(name, names)}; "
                        f"available: {', '.join(names) or 'none'}")
    load_scenario(PROJECT_ROOT / "scenarios", name)
