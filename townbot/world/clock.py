"""Game time: a start instant, a tick length, and helpers for the clock faces people read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

TIME_FORMAT = "%Y-%m-%d %H:%M"


def parse_game_time(text: str) -> datetime:
    """Parse 'YYYY-MM-DD HH:MM' (the format stored everywhere); by hand, as strptime is slow
    for the thousands of times a resumed town reads."""
    if len(text) != 16 or text[10] != " ":
        return datetime.strptime(text, TIME_FORMAT)  # raises with the usual message
    return datetime(int(text[:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]),
                    int(text[14:16]))


@lru_cache(maxsize=4096)  # a town's stored times are a few hundred moments, written again every tick
def format_game_time(moment: datetime) -> str:
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d} "
            f"{moment.hour:02d}:{moment.minute:02d}")


def parse_clock(text: str) -> int:
    """Minutes after midnight for 'HH:MM'; ValueError names what a valid time looks like."""
    hours_text, colon, minutes_text = text.partition(":")
    if not (colon and hours_text.isdigit() and minutes_text.isdigit()):  # one colon, digits
        raise ValueError(f"'{text}' is not a time; write HH:MM, e.g. 07:30")
    hours, minutes = int(hours_text), int(minutes_text)
    if not (0 <= hours <= 23 and 0 <= minutes <= 59):
        raise ValueError(f"'{text}' is not a time of day; hours 00-23 and minutes 00-59")
    return hours * 60 + minutes


def clock_face(minute_of_day: int) -> str:
    """'7:05 am' style, as the paper writes plans."""
    hours, minutes = divmod(minute_of_day % (24 * 60), 60)
    suffix = "am" if hours < 12 else "pm"
    return f"{(hours % 12) or 12}:{minutes:02d} {suffix}"


def minute_of_day(moment: datetime) -> int:
    return moment.hour * 60 + moment.minute


def span_of_hours(hours: float) -> timedelta:
    return timedelta(hours=hours)


def span_of_minutes(minutes: float) -> timedelta:
    return timedelta(minutes=minutes)


@dataclass
class GameClock:
    """The town's clock: it only moves forward, one tick at a time."""

    start: datetime
    tick_minutes: int = 10
    tick: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.tick_minutes <= 60:
            raise ValueError(f"tick length {self.tick_minutes} min is out of range; use 1 to 60")

    @property
    def now(self) -> datetime:
        return self.start + timedelta(minutes=self.tick * self.tick_minutes)

    @property
    def day_number(self) -> int:
        """1 on the first game day of the town, 2 on the next calendar day, and so on."""
        return (self.now.date() - self.start.date()).days + 1

    def advance(self) -> datetime:
        self.tick += 1
        return self.now

    def ticks_for(self, *, hours: float = 0, days: float = 0) -> int:
        total_minutes = hours * 60 + days * 24 * 60
        return max(0, round(total_minutes / self.tick_minutes))
