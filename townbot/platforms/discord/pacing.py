"""Sliding-window pacing: never more than `count` sends in any `seconds`, on an injectable clock."""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Sequence

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]

WEBHOOK_WINDOWS = ((5, 2.0), (30, 60.0))  # per channel: Discord's webhook limits
GLOBAL_WINDOWS = ((40, 1.0),)  # the whole bot, under Discord's 50 requests per second


class Window:
    def __init__(self, count: int, seconds: float) -> None:
        self.count = count
        self.seconds = seconds
        self.times: deque[float] = deque()

    def wait(self, now: float) -> float:
        while self.times and now - self.times[0] >= self.seconds:
            self.times.popleft()
        if len(self.times) < self.count:
            return 0.0
        return self.times[0] + self.seconds - now


class Pacer:
    """Several windows at once: a send must fit in all of them."""

    def __init__(self, windows: Sequence[tuple[int, float]], clock: Clock) -> None:
        self.windows = [Window(count, seconds) for count, seconds in windows]
        self.clock = clock

    def wait(self) -> float:
        now = self.clock()
        return max(w.wait(now) for w in self.windows)

    def record(self) -> None:
        now = self.clock()
        for window in self.windows:
            window.times.append(now)


async def take_turn(pacers: Sequence[Pacer], sleep: Sleep) -> None:
    """Wait until every pacer allows a send, then count it in all of them.

    Checking and recording happen without an await between them, so concurrent senders on one
    event loop can never overrun a shared pacer.
    """
    while True:
        delay = max(pacer.wait() for pacer in pacers)
        if delay <= 0:
            for pacer in pacers:
                pacer.record()
            return
        await sleep(delay)
