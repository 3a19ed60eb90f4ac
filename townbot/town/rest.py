"""A town rests when nobody is there: after a while without anyone's activity (a command, a
message in its channels, its web page open) it ticks slowly or not at all, and the first sign
of someone wakes it. Time is passed in (`now`), so the rule is tested on a fake clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

IDLE_AFTER = "TOWNBOT_IDLE_AFTER"
IDLE_SPEED = "TOWNBOT_IDLE_SPEED"
DEFAULT_IDLE_AFTER = 15 * 60.0  # real seconds without activity before the town rests
FELL_ASLEEP = ("Nobody has been here for {minutes}; the town rests ({how}) to save model calls. "
               "Any command, message or visit to its page wakes it.")
WOKE = "Someone is here: the town wakes and goes on at its usual pace."


class RestSettingError(ValueError):
    """A rest setting that cannot work; the message names it and a value that would."""


@dataclass(frozen=True)
class RestSettings:
    after: float = DEFAULT_IDLE_AFTER  # 0: the town never rests
    seconds: float | None = None  # real seconds per tick while resting; None: paused

    def describe(self) -> str:
        return "paused" if self.seconds is None else \
            f"one tick every {self.seconds:g} real seconds"


def rest_settings(env: dict[str, str]) -> RestSettings:
    """TOWNBOT_IDLE_AFTER (seconds, 0 for never) and TOWNBOT_IDLE_SPEED ('pause', or seconds
    per tick while resting)."""
    after_text = env.get(IDLE_AFTER, "").strip()
    speed_text = env.get(IDLE_SPEED, "").strip().lower()
    try:
        after = float(after_text) if after_text else DEFAULT_IDLE_AFTER
    except ValueError:
        after = -1.0
    if after < 0:
        raise RestSettingError(f"{IDLE_AFTER}={after_text!r} is not usable; give real seconds "
                               f"without activity before the town rests (0: never), e.g. "
                               f"{IDLE_AFTER}=900")
    if speed_text in ("", "pause", "paused"):
        return RestSettings(after, None)
    try:
        seconds = float(speed_text)
    except ValueError:
        seconds = 0.0
    if not 1 <= seconds <= 86400:
        raise RestSettingError(f"{IDLE_SPEED}={speed_text!r} is not usable; give 'pause' or the "
                               f"real seconds per tick while resting (1 to 86400), e.g. "
                               f"{IDLE_SPEED}=600")
    return RestSettings(after, seconds)


class Rest:
    """One town's rest: when it last saw someone, and whether it rests now."""

    def __init__(self, settings: RestSettings, now: Callable[[], float]) -> None:
        self.settings = settings
        self._now = now
        self.last_seen = now()
        self.resting = False

    def seen(self) -> bool:
        """Someone is here; True when this wakes the town."""
        self.last_seen = self._now()
        woke, self.resting = self.resting, False
        return woke

    def due(self) -> bool:
        """True once, when the town has been alone long enough to start resting."""
        if self.resting or not self.settings.after:
            return False
        self.resting = self._now() - self.last_seen >= self.settings.after
        return self.resting

    def interval(self, active_seconds: float) -> float | None:
        """Real seconds between ticks now; None when the town does not tick."""
        return self.settings.seconds if self.resting else active_seconds

    def fell_asleep_notice(self) -> str:
        minutes = round(self.settings.after / 60)
        span = f"{minutes} minutes" if minutes != 1 else "a minute"
        return FELL_ASLEEP.format(minutes=span, how=self.settings.describe())
