"""What a town costs per real day at its speed: the game days a real day holds (60 for one
10-minute tick every 10 real seconds) times its recorded usage per game day (for a status, of
the last RECENT_DAYS game days, so that a long-lived town's figure follows what it does now).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from townbot.llm.settings import ModelSettings
from townbot.store.database import Store
from townbot.town.usage import summarise
from townbot.wording import plural

RECENT_DAYS = 2  # game days of usage a status reads
MINUTES_A_DAY = 24 * 60
SECONDS_A_DAY = 24 * 3600


def game_days_per_real_day(tick_minutes: int, tick_seconds: float) -> float | None:
    """None when ticks follow one another as fast as they finish (no real-time pace)."""
    if tick_seconds <= 0:
        return None
    return tick_minutes * (SECONDS_A_DAY / tick_seconds) / MINUTES_A_DAY


@dataclass(frozen=True)
class RealDayCost:
    game_days: float  # game days the town lives in one real day
    calls: float
    prompt_tokens: float
    completion_tokens: float
    dollars: float | None  # None: no prices configured (and not the offline model)
    offline: bool
    measured_hours: float  # game hours of recorded usage the figures come from


def real_day_cost(summary: dict[str, Any], ticks: int, tick_minutes: int,
                  tick_seconds: float) -> RealDayCost | None:
    """From a usage summary (town.usage.summarise) of `ticks` ticks of the whole town: its
    figures for one real day; None without a real-time pace or without ticks. (The span is
    the ticks run, not the ticks that made calls: nights cost little, and count.)"""
    days = game_days_per_real_day(tick_minutes, tick_seconds)
    if days is None or ticks <= 0:
        return None
    measured = ticks * tick_minutes / MINUTES_A_DAY
    scale = days / measured  # recorded figures -> one real day
    dollars = None if summary["price"] is None else summary["price"] * scale
    return RealDayCost(days, summary["calls"] * scale, summary["prompt_tokens"] * scale,
                       summary["completion_tokens"] * scale,
                       0.0 if summary["offline"] else dollars, summary["offline"], measured * 24)


def _count(value: float) -> str:
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return f"{value:.0f}"


def real_day_line(cost: RealDayCost | None, tick_minutes: int, tick_seconds: float) -> str:
    """One line: calls, tokens and money per real day at this pace."""
    if tick_seconds <= 0:
        return ("per real day: no figure, as ticks follow one another as fast as they finish; "
                "set a speed (seconds per tick) to see one")
    if cost is None:
        return "per real day: no figure until the town has run a tick"
    if cost.offline:
        money = "nothing (the offline model runs locally)"
    elif cost.dollars is None:
        money = "price unknown (set TOWNBOT_PRICE_PROMPT and TOWNBOT_PRICE_COMPLETION)"
    else:
        money = f"about ${cost.dollars:,.2f}"
    line = (f"per real day at one tick ({tick_minutes} game minutes) every "
            f"{plural(tick_seconds, 'real second')}, {cost.game_days:.3g} game "
            f"days: {_count(cost.calls)} calls, {_count(cost.prompt_tokens)} prompt and "
            f"{_count(cost.completion_tokens)} completion tokens, {money}")
    if cost.measured_hours < 24:  # a few hours (a morning's planning) speak less for a day
        line += (f" (from {cost.measured_hours:.1f} game hours of usage; a whole game day's "
                 "figure is steadier)")
    return line


async def recent_cost(store: Store, town_id: int, tick: int, tick_minutes: int,
                      tick_seconds: float, settings: ModelSettings | None) -> RealDayCost | None:
    """The real day's cost from the usage of the last RECENT_DAYS game days before `tick`."""
    span = min(tick, RECENT_DAYS * MINUTES_A_DAY // tick_minutes)
    rows = await store.usage_rows_since(town_id, tick - span - 1)  # the founding's too at first
    return real_day_cost(summarise(rows, settings, tick_minutes), span, tick_minutes,
                         tick_seconds)
