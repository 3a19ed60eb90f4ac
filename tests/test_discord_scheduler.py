"""Ticks on APScheduler: one at a time, overruns skipped and logged, pause/speed, clean stop."""

from __future__ import annotations

import asyncio
import logging

import pytest
from discord_harness import connect, fake_fixture, server_fixture  # noqa: F401  (fixtures)

from townbot.platforms.discord.hosting import tick_town
from townbot.platforms.discord.scheduler import TownScheduler


class SlowTicks:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.running = 0
        self.most = 0
        self.done = 0

    async def __call__(self) -> None:
        self.running += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(self.seconds)
        self.running -= 1
        self.done += 1


async def until(condition, seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("waited in vain")


def test_the_scheduler_starts_only_inside_a_running_loop():
    with pytest.raises(RuntimeError):
        TownScheduler().start()


async def test_a_tick_still_running_when_the_next_is_due_is_skipped_and_logged(caplog):
    scheduler = TownScheduler(min_interval=0.05)
    scheduler.start()
    ticks = SlowTicks(0.3)
    with caplog.at_level(logging.WARNING):
        scheduler.add("guild-1", ticks, 0.05)
        await until(lambda: ticks.done >= 2)
    await scheduler.shutdown()
    assert ticks.most == 1, "never two ticks of one town at once"
    assert scheduler.skipped["guild-1"] >= 2
    assert "guild-1 skipped a tick: the previous tick is still running" in caplog.text


async def test_pause_resume_and_a_new_interval_change_the_job():
    scheduler = TownScheduler(min_interval=0.01)
    scheduler.start()
    ticks = SlowTicks(0)
    scheduler.add("guild-1", ticks, 0.02, paused=True)
    await asyncio.sleep(0.15)
    assert ticks.done == 0, "a town paused before the start stays paused"

    scheduler.set_interval("guild-1", 0.03)
    assert scheduler.is_paused("guild-1") and scheduler.interval("guild-1") == 0.03
    scheduler.resume("guild-1")
    await until(lambda: ticks.done >= 2)
    scheduler.pause("guild-1")
    await asyncio.sleep(0.2)  # a tick already handed to the loop may still finish
    stopped_at = ticks.done
    await asyncio.sleep(0.15)
    assert ticks.done == stopped_at
    scheduler.set_interval("guild-1", 0)
    assert scheduler.interval("guild-1") == 0.01, "as fast as allowed, never a zero interval"
    await scheduler.shutdown()


async def test_shutdown_lets_the_tick_under_way_finish():
    scheduler = TownScheduler(min_interval=0.01)
    scheduler.start()
    ticks = SlowTicks(0.2)
    scheduler.add("guild-1", ticks, 0.01)
    await until(lambda: ticks.running == 1)
    await scheduler.shutdown()
    assert ticks.done == 1 and ticks.running == 0
    assert not scheduler.scheduler.running


async def test_the_town_job_ticks_and_posts_what_happened(server):
    town = server.town
    await tick_town(town)
    await town.publisher.drain()
    posted = [m for c in town.outlet.layout.channels.values()
              for m in server.fake.messages(c.id) if m.get("webhook_id")]
    assert town.engine.clock.tick == 1
    assert posted and {m["author"]["username"] for m in posted} >= {"Smallville"}


async def test_a_paused_town_comes_back_paused_after_a_restart(fake, tmp_path):
    first = await connect(fake, tmp_path)
    await first.slash("mod pause", first.admin)
    await first.bot.close()

    again = await connect(fake, tmp_path, guild=first.guild)
    town, scheduler = again.town, again.bot.hub.scheduler
    assert town.service.paused and scheduler.is_paused(town.key)
    assert scheduler.interval(town.key) == 3600.0
    await again.bot.close()


async def test_stopping_one_town_cancels_its_tick_after_the_grace_and_leaves_others():
    scheduler = TownScheduler(min_interval=0.01)
    scheduler.start()
    stuck, other = SlowTicks(3600), SlowTicks(0)
    scheduler.add("guild-1", stuck, 0.01)
    scheduler.add("guild-2", other, 0.01)
    await until(lambda: stuck.running == 1)
    await scheduler.stop("guild-1", grace=0.1)
    assert scheduler.scheduler.get_job("guild-1") is None and stuck.done == 0
    done = other.done
    await until(lambda: other.done > done)
    await scheduler.shutdown()
