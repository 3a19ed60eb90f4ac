"""The publisher: drains the outbox to Discord, per channel, in order, paced, exactly once.

Each channel has its own worker, so a channel held back by Discord never delays the others. A
send that may have landed (`in_flight`) is looked for in the channel before it is repeated; the
failure table and what remains are in docs/discord.md ("Exactly once").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import aiohttp
import discord

from townbot.platforms.discord.posts import Post, next_post
from townbot.platforms.discord.store import Delivery, DiscordStore

log = logging.getLogger(__name__)

RATE, UNCERTAIN, GONE, FORBIDDEN, REJECTED = "rate", "uncertain", "gone", "forbidden", "rejected"
BACKOFF = (1.0, 60.0)  # first and longest wait after a failure, doubling in between
BACKOFF_DOUBLINGS = 6  # 2 ** 6 s is past the longest: no need to count further (nor overflow)
ROWS_PER_READ = 50

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]

WEBHOOK_WINDOWS = ((5, 2.0), (30, 60.0))  # per channel: Discord's webhook limits
GLOBAL_WINDOWS = ((40, 1.0),)  # the whole bot, under Discord's 50 requests per second


class Pacer:
    """Sliding windows: never more than `count` sends in any `seconds`, for each window."""

    def __init__(self, windows: Sequence[tuple[int, float]], clock: Clock) -> None:
        self.windows = [(count, seconds, deque[float]()) for count, seconds in windows]
        self.clock = clock

    def wait(self) -> float:
        now, longest = self.clock(), 0.0
        for count, seconds, times in self.windows:
            while times and now - times[0] >= seconds:
                times.popleft()
            if len(times) >= count:
                longest = max(longest, times[0] + seconds - now)
        return longest

    def record(self) -> None:
        now = self.clock()
        for _, _, times in self.windows:
            times.append(now)


async def take_turn(pacers: Sequence[Pacer], sleep: Sleep) -> None:
    """Wait until every pacer allows a send, then count it in all of them. Checking and
    recording happen without an await between them, so concurrent senders on one event loop
    can never overrun a shared pacer."""
    while True:
        delay = max(pacer.wait() for pacer in pacers)
        if delay <= 0:
            for pacer in pacers:
                pacer.record()
            return
        await sleep(delay)


@dataclass(frozen=True)
class Seen:
    id: int
    username: str
    content: str


class ChannelGone(Exception):
    """The channel or its webhook was deleted; the outlet can make it again."""


class Refused(Exception):
    """Discord will never take this post as it is (a 4xx other than 429, 403 or 404)."""


class Outlet(Protocol):
    """What the publisher needs of Discord (the real one is setup.WebhookOutlet)."""

    async def post(self, channel: str, content: str, username: str) -> int: ...

    async def recent(self, channel: str, after: int | None) -> list[Seen]: ...

    async def repair(self, channel: str) -> None: ...


def classify(error: BaseException) -> tuple[str, float] | None:
    """(what kind of failure, seconds Discord asked to wait), or None for a bug."""
    if isinstance(error, discord.RateLimited):
        return RATE, error.retry_after
    if isinstance(error, ChannelGone | discord.NotFound):
        return GONE, 0.0
    if isinstance(error, discord.Forbidden):
        return FORBIDDEN, 0.0
    if isinstance(error, discord.HTTPException):
        if error.status == 429:
            return RATE, _retry_after(error)
        return (UNCERTAIN, 0.0) if error.status >= 500 else (REJECTED, 0.0)
    if isinstance(error, aiohttp.ClientError | TimeoutError | OSError):
        return UNCERTAIN, 0.0
    return None


def _retry_after(error: discord.HTTPException) -> float:
    headers = getattr(error.response, "headers", None) or {}
    try:
        return float(headers.get("Retry-After", 5.0))
    except (TypeError, ValueError):
        return 5.0


class Publisher:
    def __init__(self, store: DiscordStore, outlet: Outlet, town: str, *,
                 clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep,
                 channel_windows: Sequence[tuple[int, float]] = WEBHOOK_WINDOWS,
                 global_pacer: Pacer | None = None, poll: float = 5.0,
                 residents: frozenset[str] = frozenset()) -> None:
        self.store = store
        self.outlet = outlet
        self.town = town
        self.residents = residents  # whose speech goes out under their own names
        self.clock = clock
        self.sleep = sleep
        self.poll = poll
        self._channel_windows = channel_windows
        self._pacers: dict[str, Pacer] = {}
        # The bot's limit is shared by every town it hosts: the hub passes one pacer to all.
        self._global = global_pacer or Pacer(GLOBAL_WINDOWS, clock)
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self.counts: Counter[str] = Counter()  # posts, and failures by kind, for status lines

    # --- running ------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"publisher {self.town}")

    def wake(self) -> None:
        """New rows may be waiting (after a tick or a use case): look now, not at the next poll."""
        self._wake.set()

    async def stop(self, grace: float = 5.0) -> None:
        """Let posts under way finish for up to `grace` seconds, then cancel what is left."""
        self._stopping = True
        tasks = [t for t in (self._task, *self._workers.values()) if t is not None]
        if self._task is not None:
            self._task.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self._workers.values(), return_exceptions=True),
                                   grace)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def drain(self) -> None:
        """Post everything unsent now, then return (tests, and a final flush)."""
        while await self.store.pending_channels():
            await self._dispatch()
            await asyncio.gather(*self._workers.values())

    async def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                await self._dispatch()
            except Exception:  # the database is busy or gone: try again at the next poll
                log.exception("publisher for %s cannot read the outbox", self.town)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll)

    async def _dispatch(self) -> None:
        for channel in await self.store.pending_channels():
            task = self._workers.get(channel)
            if task is not None and not task.done():
                continue
            if task is not None and not task.cancelled() and task.exception() is not None:
                log.error("posting to #%s stopped: %r; starting again", channel, task.exception())
            self._workers[channel] = asyncio.create_task(self._work(channel),
                                                         name=f"post #{channel}")

    # --- one channel ----------------------------------------------------------------------------

    async def _work(self, channel: str) -> None:
        while not self._stopping:
            post, state = await self._next(channel)
            if post is None:
                return
            await self._deliver(channel, post, state)

    async def _next(self, channel: str) -> tuple[Post | None, Delivery]:
        """The post under way (rebuilt from its rows after a restart), else the next one."""
        state = await self.store.delivery(channel)
        if state.post_first is not None:
            rows = await self.store.unsent(channel, ROWS_PER_READ, state.post_first, state.post_last)
            post = next_post(rows, self.town, self.residents)
            if post is not None and (post.rows[0], post.rows[-1]) == (state.post_first, state.post_last):
                return post, state
        while rows := await self.store.unsent(channel, ROWS_PER_READ):
            if rows[0].kind == "speech" and await self.store.consume_echo(rows[0]):
                continue
            post = next_post(rows, self.town, self.residents)
            assert post is not None
            return post, replace(state, post_first=post.rows[0], post_last=post.rows[-1], parts_done=0,
                                 in_flight=False)
        return None, state

    async def _deliver(self, channel: str, post: Post, state: Delivery) -> None:
        for index in range(state.parts_done, len(post.parts)):
            try:
                message_id = await self._send(channel, post, index, state)
            except Refused as refusal:
                await self.store.landed(channel, Delivery(state.last_message_id), post.rows,
                                        error=str(refusal))
                return
            finished = index + 1 == len(post.parts)
            state = Delivery(message_id) if finished else Delivery(
                message_id, post.rows[0], post.rows[-1], index + 1, in_flight=False)
            await self.store.landed(channel, state, post.rows if finished else ())
            self.counts["posts"] += 1

    async def _send(self, channel: str, post: Post, index: int, state: Delivery) -> int:
        """Post one part until Discord has it and return its message id (Refused if it never
        will). Before a send that may already have landed, look for it instead."""
        content, attempt, broken = post.parts[index], 0, False
        while True:
            posting = False
            try:
                if broken:
                    await self.outlet.repair(channel)
                    broken = False
                if state.in_flight:  # it may have landed: look after the last confirmed post
                    for seen in await self.outlet.recent(channel, state.last_message_id):
                        if seen.username == post.username and seen.content.strip() == content.strip():
                            return seen.id
                    state = replace(state, in_flight=False)
                pacer = self._pacers.setdefault(channel, Pacer(self._channel_windows, self.clock))
                await take_turn([pacer, self._global], self.sleep)
                state = replace(state, post_first=post.rows[0], post_last=post.rows[-1],
                                parts_done=index, in_flight=True)
                await self.store.sending(channel, state)
                posting = True
                return await self.outlet.post(channel, content, post.username)
            except Exception as error:
                kind = await self._failed(channel, error, attempt, posting, repeated=broken)
                if posting and kind in (RATE, GONE, FORBIDDEN):
                    state = replace(state, in_flight=False)  # these answers mean nothing landed
                broken = broken or kind == GONE
                attempt += 1

    async def _failed(self, channel: str, error: Exception, attempt: int, posting: bool, *,
                      repeated: bool = False) -> str:
        """Count and log a failure, wait as long as it deserves, and say what kind it was.
        `repeated`: the channel was already found gone and making it again failed, so a
        second "gone" waits like any failure instead of asking Discord again at once."""
        verdict = classify(error)
        if verdict is None:
            raise error  # a bug, not Discord: let the worker die loudly (it is restarted)
        kind, retry_after = verdict
        self.counts[kind] += 1
        if posting and kind == REJECTED:
            raise Refused(f"Discord refused the post: {error}") from error
        first, longest = BACKOFF
        backoff = min(longest, first * 2 ** min(attempt, BACKOFF_DOUBLINGS))
        if kind == RATE:
            wait = retry_after
        elif kind == FORBIDDEN:
            wait = longest
        else:
            wait = 0.0 if kind == GONE and not repeated else backoff
        log.warning("#%s: %s (%s); trying again in %.0f s", channel, kind, error, wait)
        await self.sleep(wait)
        return kind
