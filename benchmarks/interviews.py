"""Whether interviews stop the town's clock: 50 `/interview`s at once over the in-memory Discord
(tests/fakediscord: discord.py's own command tree, interactions and webhooks, only HTTP
replaced), on the offline model behind 1 s per call, while the town ticks every 10 s on its
scheduler and a bystander asks `/town status` every second.

Printed: the longest gap between the starts of two ticks (goal: the interval, within 1 s), the
slowest answer to the bystander's `/town status` (goal: within 3 s), and the slowest interview.
With the town lock held through each interview's model call, no tick ran for 53-55 s and the
bystander waited 49.7 s (issue 31).

Usage: python benchmarks/interviews.py [--interviews 50] [--latency 1] [--interval 10]
       [--seconds 40]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout; the in-memory Discord is a
# test fixture package

from fakediscord import FakeDiscord  # noqa: E402
from pytest import MonkeyPatch  # noqa: E402

from townbot.llm.faults import FaultRates, FaultyModel  # noqa: E402
from townbot.llm.offline import OfflineModel  # noqa: E402
from townbot.llm.settings import load_settings  # noqa: E402
from townbot.llm.stack import build_model_stack  # noqa: E402
from townbot.platforms.discord import hosting  # noqa: E402
from townbot.platforms.discord.bot import TownBot  # noqa: E402
from townbot.platforms.discord.config import DiscordConfig  # noqa: E402
from townbot.platforms.discord.hub import Hub  # noqa: E402
from townbot.platforms.discord.scheduler import TownScheduler  # noqa: E402

RESIDENTS = ("Isabella Rodriguez", "Klaus Mueller", "Maria Lopez", "Sam Moore", "John Lin")


def slow_engines(patch: MonkeyPatch, latency: float) -> None:
    """Every town the hub opens answers on the offline model after `latency` s a call."""
    opened = hosting.open_engine

    async def open_slow(files, db, **kwargs):
        model = build_model_stack(FaultyModel(OfflineModel(), FaultRates(latency=latency)))
        return await opened(files, db, model=model)
    patch.setattr(hosting, "open_engine", open_slow)


async def command(fake: FakeDiscord, *args, **values) -> tuple[asyncio.Task, asyncio.Task]:
    """A person's slash command under way, and a task giving the seconds until it shows the
    person something other than 'thinking'."""
    began = time.perf_counter()
    invoked = asyncio.create_task(fake.slash(*args, **values))
    await asyncio.sleep(0)  # the command's interaction now exists: the newest
    exchange = list(fake.exchanges.values())[-1]

    async def answered() -> float:
        while not exchange.visible and not invoked.done():
            await asyncio.sleep(0.02)
        return time.perf_counter() - began
    return invoked, asyncio.create_task(answered())


async def measure(interviews: int, latency: float, interval: float, seconds: float) -> None:
    patch = MonkeyPatch()
    slow_engines(patch, latency)
    async with FakeDiscord.running(patch) as fake:
        guild = fake.add_guild("Benchmark")
        askers = [fake.add_member(guild, f"Asker {n}") for n in range(interviews)]
        bystander = fake.add_member(guild, "Bystander")
        with tempfile.TemporaryDirectory() as folder:
            bot = TownBot(Hub(DiscordConfig(data_dir=Path(folder), tick_seconds=interval),
                              TownScheduler(), settings=load_settings({})))
            await fake.connect(bot)
            town = bot.hub.towns[guild]
            starts: list[float] = []
            engine_tick = town.engine.tick

            async def timed_tick(**pacing):
                starts.append(time.perf_counter())
                return await engine_tick(**pacing)
            patch.setattr(town.engine, "tick", timed_tick)
            began = time.perf_counter()
            await asyncio.sleep(interval / 2)  # the clock is running
            asked, waits = [], []
            for n, user in enumerate(askers):
                invoked, answered = await command(fake, bot, guild, user, "interview",
                                                  resident=RESIDENTS[n % len(RESIDENTS)],
                                                  question="What are you doing today?")
                asked.append(invoked)
                waits.append(answered)
            status_waits = []
            while time.perf_counter() - began < seconds:
                invoked, answered = await command(fake, bot, guild, bystander, "town status")
                status_waits.append(await answered)
                await invoked
                await asyncio.sleep(1.0)
            interview_waits = await asyncio.gather(*waits)
            await asyncio.gather(*asked)
            await bot.close()
    patch.undo()
    gaps = [later - earlier for earlier, later in zip(starts, starts[1:], strict=False)]
    print(f"{interviews} interviews at once, {latency:g} s a model call, a tick every "
          f"{interval:g} s, {len(starts)} ticks in {seconds:g} s")
    print(f"longest gap between tick starts: {max(gaps, default=float('nan')):.2f} s "
          f"(goal: {interval:g} s within 1 s)")
    print(f"slowest answer to /town status: {max(status_waits):.2f} s of {len(status_waits)} "
          "(goal: within 3 s)")
    print(f"slowest interview answered: {max(interview_waits):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interviews", type=int, default=50)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--interval", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=40.0)
    args = parser.parse_args()
    asyncio.run(measure(args.interviews, args.latency, args.interval, args.seconds))


if __name__ == "__main__":
    main()
