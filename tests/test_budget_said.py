"""Budgets are said: saving from the soft fraction on, a reached cap, and a new game day lifting
a daily cap each give one line in #town-hall (an event of the tick, so `play` shows it too), and
`/town status` and play's `/status` show what is used and left of each cap."""

from __future__ import annotations

import io
import re

from discord_harness import until
from fakediscord import FakeDiscord

from townbot.llm.budget import Budget
from townbot.llm.offline import OfflineModel
from townbot.llm.settings import Caps, load_settings
from townbot.llm.stack import build_model_stack
from townbot.platforms.console import Console
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.town.launch import TownFiles
from townbot.town.service import Person, TownService

BYSTANDER = Person("test:bo", "Bo")


async def small_budgeted_town(tmp_path) -> TownService:
    model = build_model_stack(OfflineModel(), budget=Budget(Caps(calls_per_day=30,
                                                                 soft_fraction=0.5)))
    store = await Store.open(tmp_path / "town.db")
    return TownService(await Engine.open(TownFiles(residents="2").load(), store, model))


async def test_saving_a_reached_cap_and_a_new_day_each_say_one_line_in_the_town_hall(tmp_path):
    town = await small_budgeted_town(tmp_path)
    try:
        notices, status = [], None
        for tick in range(110):  # past midnight
            notices += [e for e in await town.tick() if e.kind == "notice"]
            if tick == 20:
                status = await town.status(BYSTANDER)
        assert [e.channel for e in notices] == ["town-hall"] * 3
        saving, spent, lifted = (e.text for e in notices)
        assert re.fullmatch(r"Budget: 1[5-9] of 30 calls on game day 1 \(\d+%\): optional calls "
                            r"are skipped\.", saving)
        assert spent == ("Budget: cap reached, 30 of 30 calls on game day 1: the model is not "
                         "asked until the next game day; residents follow their plans.")
        assert lifted == ("Budget: a new game day opens the daily cap again; the model is asked "
                          "as usual (0 of 30 calls on game day 2 (0%)).")
        assert notices[2].game_time.endswith("00:00")
        assert re.search(r"\ncalls on game day 1: (\d+) used, (\d+) left of 30\n", status.text)
        used, left = (int(n) for n in re.search(r"(\d+) used, (\d+) left", status.text).groups())
        assert used + left == 30 and status.data["budget"][-1].startswith("budget: ")
    finally:
        await town.engine.store.close()


async def test_play_shows_the_budget_lines_and_its_status_shows_each_cap(tmp_path):
    town = await small_budgeted_town(tmp_path)
    out = io.StringIO()
    console = Console(town, Person("console:me", "me", moderator=True), out=out,
                      seconds_per_tick=0)
    try:
        await console.handle("/wait 60")
        await console.handle("/status")
    finally:
        await town.engine.store.close()
    text = out.getvalue()
    assert "💰 Town hall Budget: " in text and "optional calls are skipped." in text
    assert "Budget: cap reached, 30 of 30 calls on game day 1" in text
    assert re.search(r"budget +calls on game day 1: 30 used, 0 left of 30", text), text


async def test_discord_posts_the_budget_in_the_town_hall_and_status_shows_the_caps(monkeypatch,
                                                                                  tmp_path):
    from townbot.platforms.discord import hosting
    from townbot.platforms.discord.bot import TownBot
    from townbot.platforms.discord.config import DiscordConfig
    from townbot.platforms.discord.hub import Hub
    from townbot.platforms.discord.scheduler import TownScheduler

    async with FakeDiscord.running(monkeypatch) as fake:
        guild = fake.add_guild("Test server")
        ada = fake.add_member(guild, "Ada")
        settings = load_settings({"TOWNBOT_MAX_CALLS_PER_DAY": "60"})
        bot = TownBot(Hub(DiscordConfig(data_dir=tmp_path, tick_seconds=3600.0), TownScheduler(),
                          settings=settings))
        await fake.connect(bot)
        try:
            town = bot.hub.towns[guild]
            for _ in range(6):
                await hosting.tick_town(town)
            hall = fake.channel_id(guild, "town-hall")
            await until(lambda: any("Budget: " in said for _, said in fake.said(hall)))
            lines = [said for _, said in fake.said(hall) if "Budget: " in said]
            assert lines[0].startswith("`07:") and "💰 **Town hall** Budget: " in lines[0]
            exchange = await fake.slash(bot, guild, ada, "town status")
            budget = next(f for e in exchange.embeds for f in e.get("fields", [])
                          if f["name"] == "Budget")
            assert re.search(r"calls on game day 1: \d+ used, \d+ left of 60", budget["value"])
        finally:
            await bot.close()
