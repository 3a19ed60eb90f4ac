"""Faithful fakes of the few Discord parts the bot uses, and helpers for the Discord tests.

No network: a fake server keeps channels, webhooks and messages in memory and fails the way
Discord does (404 for what was deleted, 429/5xx/disconnects on request). Interactions are
spec'd mocks, so a call with a wrong argument name fails the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import MagicMock, create_autospec

import aiohttp
import discord

from townbot.llm.settings import load_settings
from townbot.platforms.discord.commands import all_commands
from townbot.platforms.discord.config import DiscordConfig
from townbot.platforms.discord.hub import Hub
from townbot.platforms.discord.publisher import ChannelGone, Seen
from townbot.platforms.discord.scheduler import TownScheduler
from townbot.platforms.discord.setup import NEEDED

GUILD = 4242
SNOWFLAKES = itertools.count(10_000)  # increasing, like Discord's ids


def response(status: int, retry_after: float | None = None) -> Any:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return SimpleNamespace(status=status, reason="fake", headers=headers)


def http_error(kind: type[discord.HTTPException], status: int, **extra: Any) -> Exception:
    return kind(response(status, **extra), "fake failure")


# --- a fake server ----------------------------------------------------------------------------------

@dataclass
class FakeMessage:
    id: int
    content: str
    author: Any
    channel: Any
    webhook_id: int | None = None
    guild: Any = None
    avatar_url: str | None = None
    replies: list[str] = field(default_factory=list)
    reactions: list[str] = field(default_factory=list)

    @property
    def clean_content(self) -> str:
        return self.content

    async def reply(self, content: str, **kwargs: Any) -> FakeMessage:
        assert kwargs.get("allowed_mentions") is not None, "replies never mention"
        self.replies.append(content)
        return FakeMessage(next(SNOWFLAKES), content, SimpleNamespace(name="townbot", bot=True),
                           self.channel)

    async def add_reaction(self, emoji: str) -> None:
        self.reactions.append(emoji)


class FakeChannel:
    """A text channel or a thread: messages in order, typing, history."""

    def __init__(self, guild: FakeGuild | None, name: str, category: Any = None, topic: str = "",
                 parent_id: int | None = None) -> None:
        self.id = next(SNOWFLAKES)
        self.guild = guild
        self.name = name
        self.category = category
        self.topic = topic
        self.parent_id = parent_id
        self.messages: list[FakeMessage] = []
        self.deleted = False

    @contextlib.asynccontextmanager
    async def typing(self) -> Any:
        yield

    async def send(self, content: str, **kwargs: Any) -> FakeMessage:
        assert kwargs.get("allowed_mentions") is not None
        message = FakeMessage(next(SNOWFLAKES), content, SimpleNamespace(name="townbot", bot=True),
                              self)
        self.messages.append(message)
        return message

    async def create_webhook(self, *, name: str, reason: str | None = None) -> FakeWebhook:
        assert self.guild is not None
        hook = FakeWebhook(self, name)
        self.guild.hooks.append(hook)
        self.guild.calls.append(("create_webhook", self.name))
        return hook

    async def history(self, *, limit: int = 100, after: Any = None) -> Any:
        if self.deleted:
            raise http_error(discord.NotFound, 404)
        if after is None:
            chosen = list(reversed(self.messages))[:limit]  # newest first, like Discord
        else:
            chosen = [m for m in self.messages if m.id > after.id][:limit]
        for message in chosen:
            yield message

    def said(self) -> list[tuple[str, str]]:
        return [(m.author.name, m.content) for m in self.messages]


class FakeWebhook:
    def __init__(self, channel: FakeChannel, name: str) -> None:
        self.id = next(SNOWFLAKES)
        self.channel = channel
        self.channel_id = channel.id
        self.name = name
        self.token = f"token-{self.id}"
        self.deleted = False

    async def send(self, content: str, *, username: str, wait: bool,
                   allowed_mentions: discord.AllowedMentions, avatar_url: str | None = None,
                   thread: Any = None) -> FakeMessage:
        assert wait, "the id of the post is needed to know it landed"
        assert allowed_mentions.everyone is False and allowed_mentions.users is False \
            and allowed_mentions.roles is False, "posts never mention anyone"
        assert len(content) <= 2000 and 1 <= len(username) <= 80
        if self.deleted or self.channel.deleted:
            raise http_error(discord.NotFound, 404)
        place = thread or self.channel
        message = FakeMessage(next(SNOWFLAKES), content, SimpleNamespace(name=username, bot=True),
                              place, webhook_id=self.id, avatar_url=avatar_url)
        place.messages.append(message)
        return message


class FakeGuild:
    """The parts of discord.Guild that setup uses, plus the server's own channels."""

    def __init__(self, guild_id: int = GUILD, permissions: discord.Permissions = NEEDED) -> None:
        self.id = guild_id
        self.name = "Test server"
        self.me = SimpleNamespace(guild_permissions=permissions)
        self.channels: dict[int, Any] = {}
        self.hooks: list[FakeWebhook] = []
        self.calls: list[tuple[str, str]] = []  # every change made to the server
        own = self._add(SimpleNamespace(id=next(SNOWFLAKES), name="Text Channels"))
        self.general = self._add(FakeChannel(self, "general", own))

    def _add(self, channel: Any) -> Any:
        self.channels[channel.id] = channel
        return channel

    def get_channel(self, channel_id: int, /) -> Any:
        return self.channels.get(channel_id)

    async def create_category(self, name: str, *, reason: str | None = None) -> Any:
        self.calls.append(("create_category", name))
        return self._add(SimpleNamespace(id=next(SNOWFLAKES), name=name))

    async def create_text_channel(self, name: str, *, reason: str | None = None,
                                  category: Any = None, topic: str = "") -> FakeChannel:
        assert category is not None and category.id in self.channels
        self.calls.append(("create_text_channel", name))
        return self._add(FakeChannel(self, name, category, topic))

    async def webhooks(self) -> list[FakeWebhook]:
        return [h for h in self.hooks if not h.deleted]

    def delete_channel(self, channel: Any) -> None:
        """What a server admin's delete does: the channel and its webhooks go."""
        channel.deleted = True
        del self.channels[channel.id]
        for hook in self.hooks:
            if hook.channel_id == channel.id:
                hook.deleted = True

    def named(self, name: str) -> list[Any]:
        return [c for c in self.channels.values() if c.name == name]


# --- a scripted Discord for the publisher -------------------------------------------------------------

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


class ScriptedOutlet:
    """Channels as lists of webhook posts; `faults` says how the next posts fail.

    A fault is one of: "429", "500" (nothing posted), "500 after" (posted, then the error),
    "disconnect", "disconnect after", "crash after" (posted, then the process dies), "gone",
    "400" (Discord refuses this post for good), "history 500" (the next history read fails).
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


# --- interactions and members -------------------------------------------------------------------------

def member(user_id: int = 7, name: str = "Ada", *, manage_guild: bool = False,
           roles: tuple[str, ...] = ()) -> Any:
    person = MagicMock(spec=discord.Member)
    person.id = user_id
    person.display_name = name
    person.bot = False
    person.guild_permissions = discord.Permissions(manage_guild=manage_guild)
    person.roles = [SimpleNamespace(id=900 + i, name=role) for i, role in enumerate(roles)]
    return person


def interaction(hub: Hub, user: Any, *, guild_id: int | None = GUILD) -> Any:
    """A spec'd Interaction: response and followup check their calls' arguments."""
    fake = MagicMock(spec=discord.Interaction)
    fake.client = SimpleNamespace(hub=hub)
    fake.guild_id = guild_id
    fake.user = user
    fake.response = create_autospec(discord.InteractionResponse, instance=True)
    fake.followup = create_autospec(discord.Webhook, instance=True)
    sent = create_autospec(discord.WebhookMessage, instance=True)
    sent.create_thread.return_value = SimpleNamespace(id=next(SNOWFLAKES))
    fake.followup.send.return_value = sent
    return fake


def answers(fake: Any) -> list[tuple[str, bool]]:
    """(text, ephemeral) of every follow-up and direct response, in order."""
    said = [(c.args[0], c.kwargs.get("ephemeral", False)) for c in fake.followup.send.call_args_list]
    said += [(c.args[0], c.kwargs.get("ephemeral", False))
             for c in fake.response.send_message.call_args_list]
    return said


def answer(fake: Any) -> str:
    return "\n".join(text for text, _ in answers(fake))


def commands() -> dict[str, Any]:
    """Every slash command by its full name, e.g. "town join"."""
    found = {}
    for command in all_commands():
        for sub in getattr(command, "commands", [command]):
            found[sub.qualified_name] = sub
    return found


async def invoke(command_name: str, fake: Any, **arguments: Any) -> None:
    """Run a command's callback as discord.py would after parsing the options."""
    command = commands()[command_name]
    if command.binding is not None:
        await command.callback(command.binding, fake, **arguments)
    else:
        await command.callback(fake, **arguments)


async def open_hub(tmp_path: Path, guild: FakeGuild, **config: Any) -> Hub:
    """A hub with the real town of `guild` on the offline model; ticks only when a test asks."""
    settings = {"data_dir": tmp_path, "tick_seconds": 3600.0, **config}
    hub = Hub(DiscordConfig(**settings), TownScheduler(), settings=load_settings({}))
    hub.scheduler.start()
    await hub.open_town(guild)
    return hub
