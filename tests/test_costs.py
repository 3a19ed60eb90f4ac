"""What a town costs per real day at its speed, from its recorded usage: in `usage`, at the end
of `sim`, and in the status every platform shows (through TownService)."""

from __future__ import annotations

import pytest
from conftest import open_engine

from townbot.cli import main
from townbot.llm.settings import ModelSettings, Prices
from townbot.town.costs import game_days_per_real_day, real_day_cost, real_day_line
from townbot.town.service import Person, TownService
from townbot.town.usage import summarise

ROW = {"agent": "Ada", "game_day": 1, "estimated": 0, "model": "small", "latency_ms": 1.0}


def rows(calls: int, prompt: int, completion: int) -> list[dict]:
    return [{**ROW, "id": i, "tick": i, "purpose": "react", "outcome": "ok",
             "prompt_tokens": prompt, "completion_tokens": completion} for i in range(calls)]


@pytest.mark.parametrize(("seconds", "days"), [(10, 60.0), (60, 10.0), (600, 1.0), (0, None)])
def test_game_days_a_real_day_follow_the_pace(seconds, days):
    assert game_days_per_real_day(10, seconds) == days


def test_a_real_day_multiplies_what_a_game_day_recorded_and_prices_it():
    settings = ModelSettings(chat_model="small", prices=Prices(prompt=0.15, completion=0.6))
    summary = summarise(rows(100, 1000, 100), settings, 10)
    cost = real_day_cost(summary, 144, 10, 60)  # 144 ticks of 10 min: one game day recorded
    assert cost is not None and cost.game_days == 10
    assert (cost.calls, cost.prompt_tokens, cost.completion_tokens) == (1000, 1e6, 1e5)
    assert cost.dollars == pytest.approx(10 * (100_000 * 0.15 + 10_000 * 0.6) / 1e6)
    line = real_day_line(cost, 10, 60)
    assert line == ("per real day at one tick (10 game minutes) every 60 real seconds, 10 game "
                    "days: 1.0k calls, 1.0M prompt and 100.0k completion tokens, about $0.21")
    unpriced = real_day_cost(summarise(rows(1, 1, 1), ModelSettings(chat_model="small"), 10),
                             144, 10, 60)
    assert "price unknown (set TOWNBOT_PRICE_PROMPT" in real_day_line(unpriced, 10, 60)
    assert "as fast as they finish" in real_day_line(None, 10, 0)
    assert real_day_cost(summary, 0, 10, 60) is None


async def test_the_status_says_what_a_real_day_costs_at_the_towns_speed(world, tmp_path):
    engine = await open_engine(world, tmp_path / "town.db")
    try:
        service = TownService(engine)
        first = await service.status(Person("test:a", "Ada"))
        for _ in range(6):
            await service.tick()
        later = await service.status(Person("test:a", "Ada"))
    finally:
        await engine.store.close()
    assert first.data["per_real_day"] is None
    assert first.text.endswith("per real day: no figure until the town has run a tick")
    cost = later.data["per_real_day"]
    assert cost["game_days"] == 60 and cost["calls"] > 0 and cost["offline"]
    assert later.text.endswith(later.data["per_real_day_line"])
    assert "per real day at one tick (10 game minutes) every 10 real seconds" in later.text
    assert later.text.endswith("(from 1.0 game hours of usage; a whole game day's figure is "
                               "steadier)")


def test_usage_and_sim_print_the_real_day(tmp_path, capsys):
    db = str(tmp_path / "town.db")
    assert main(["sim", "--db", db, "--hours", "2", "--residents", "3", "--quiet"]) == 0
    assert "per real day at one tick (10 game minutes) every 10 real seconds, 60 game days" \
        in capsys.readouterr().out
    assert main(["usage", "--db", db]) == 0
    assert "per real day at one tick" in capsys.readouterr().out
