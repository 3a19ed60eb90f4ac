"""The Discord tests' shared parts: a bot on the in-memory Discord (tests/fakediscord), and a
scripted outlet with a fake clock for the publisher's pacing and crash tests."""

from __future__ import annotations

import asyncio
import itertools
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import discord
import pytest
from fakediscord import FakeDiscord

from townbot.llm.settings import load_settings
from townbot.platforms.discord.bot import TownBot
from townbot.platforms.discord.config import DiscordConfig
from townbot.platforms.discord.hub import GuildTown, Hub
from townbot.platforms.discord.publisher import ChannelGone, Seen
from townbot.platforms.discord.scheduler import TownScheduler

SNOWFLAKES = itertools.count(10_000)


@dataclass
class Server:
    """A bot connected to the in-memory Discord with one server and two people in it."""

    fake: FakeDiscord
    bot: TownBot
    guild: int
    ada: int  # a member
    admin: int  # a member with Manage Server

    @property
    def town(self) -> GuildTown:
        return self.bot.hub.towns[self.guild]

    def channel(self, name: str) -> int:
        return self.fake.channel_id(self.guild, name)

    async def slash(self, command: str, user: int | None = None, **values: Any) -> Any:
        return await self.fake.slash(self.bot, self.guild, user or self.ada, command, **values)

    async def write(self, channel: str | int, text: str, user: int | None = None) -> Any:
        where = self.channel(channel) if isinstance(channel, str) else channel
        return await self.fake.write(self.bot, where, user or self.ada, text)


def make_bot(data_dir: Path, **config: Any) -> TownBot:
    settings = {"data_dir": data_dir, "tick_seconds": 3600.0, **config}
    return TownBot(Hub(DiscordConfig(**settings), TownScheduler(), settings=load_settings({})))


async def connect(fake: FakeDiscord, data_dir: Path, guild: int | None = None,
                  **config: Any) -> Server:
    guild = guild or fake.add_guild("Test server")
    ada = fake.add_member(guild, "Ada")
    admin = fake.add_member(guild, "Admin", manage_guild=True)
    bot = make_bot(data_dir, **config)
    await fake.connect(bot)
    return Server(fake, bot, guild, ada, admin)


@pytest.fixture(name="fake")
async def fake_fixture(monkeypatch):
    async with FakeDiscord.running(monkeypatch) as discord_fake:
        yield discord_fake


@pytest.fixture(name="server")
async def server_fixture(fake, tmp_path):
    connected = await connect(fake, tmp_path, moderator_role="Mayor")
    yield connected
    await connected.bot.close()


async def until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    """Wait on the loop for a condition, with a deadline generous for a loaded machine."""
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("waited in vain")


# --- a scripted Discord for the publisher's pacing and crash tests ----------------------------------

class Crash(BaseException):
    """The process dies here (not an Exception: nothing in the publisher may catch it)."""


class FakeTime:
    """A clock that moves only when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        start = self.now
        await asyncio.sleep(0)
        self.now = max(self.now, start + max(0.0, seconds))


def http_error(kind: type[discord.HTTPException], status: int, retry_after: float | None = None):
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    response = type("Response", (), {"status": status, "reason": "fake", "headers": headers})()
    return kind(response, "fake failure")


class ScriptedOutlet:
    """Channels as lists of webhook posts; `faults` says how the next posts fail.

    A fault is one of: "429", "500" (nothing posted), "500 after" (posted, then the error),
    "disconnect", "disconnect after", "crash before" (the process dies before Discord has the
    post), "crash after" (posted, then the process dies), "gone",
    "400" (Discord refuses this post for good), "history 500" (the next history read fails).
    Used where the publisher's timing is measured on a fake clock; everything else about
    posting is tested through the in-memory Discord.
    """

    def __init__(self, clock: FakeTime) -> None:
        self.clock = clock
        self.posts: dict[str, list[Seen]] = defaultdict(list)
        self.times: dict[str, list[float]] = defaultdict(list)
        self.faults: list[str] = []
        self.repairs = 0

    async def post(self, channel: str, content: str, username: str) -> int:
        fault = self.faults.pop(0) if self.faults else "ok"
        await asyncio.sleep(0)
        if fault == "429":
            raise http_error(discord.HTTPException, 429, retry_after=3.0)
        if fault == "500":
            raise http_error(discord.DiscordServerError, 503)
        if fault == "disconnect":
            raise aiohttp.ServerDisconnectedError()
        if fault == "gone":
            raise ChannelGone(channel)
        if fault == "crash before":
            raise Crash()
        if fault == "400":
            raise http_error(discord.HTTPException, 400)
        assert len(content) <= 2000
        seen = Seen(next(SNOWFLAKES), username, content)
        self.posts[channel].append(seen)
        self.times[channel].append(self.clock())
        if fault == "500 after":
            raise http_error(discord.DiscordServerError, 502)
        if fault == "disconnect after":
            raise aiohttp.ClientOSError()
        if fault == "crash after":
            raise Crash()
        return seen.id

    async def recent(self, channel: str, after: int | None) -> list[Seen]:
        if self.faults and self.faults[0] == "history 500":
            self.faults.pop(0)
            raise http_error(discord.DiscordServerError, 500)
        return [s for s in self.posts[channel] if after is None or s.id > after]

    async def repair(self, channel: str) -> None:
        self.repairs += 1

    def contents(self, channel: str) -> list[str]:
        return [s.content for s in self.posts[channel]]
