"""The transcript people read: every event in game-time order tagged with its area (or grouped
by area), with the commonest activities of each game hour folded into one line."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from townbot.wording import plural
from townbot.world.events import TownEvent

FILLER_MIN_COUNT = 8  # an activity seen this often...
FILLER_MIN_ACTORS = 4  # ...by this many people is everyday filler
FOLD_AFTER = 3  # filler seen this often in one game hour is shown once there


@dataclass(frozen=True)
class Line:
    """One printed line; `channel` is the area it belongs to (None for headings and folds)."""

    text: str
    channel: str | None = None


def event_line(event: TownEvent, width: int) -> Line:
    """'HH:MM #area  what happened', the area tag padded to `width`."""
    clock, _, rest = event.line().partition(" ")
    return Line(f"{clock} {'#' + event.channel:<{width}} {rest}", event.channel)


def filler_activities(events: list[TownEvent]) -> set[str]:
    """Actions so common across residents that listing each one hides the day."""
    actors: dict[str, list[str]] = defaultdict(list)
    for event in events:
        if event.kind == "action":
            actors[event.text].append(event.actor)
    return {text for text, who in actors.items()
            if len(who) >= FILLER_MIN_COUNT and len(set(who)) >= FILLER_MIN_ACTORS}


def _fold_line(text: str, actors: list[str]) -> Line:
    names = sorted(set(actors))
    who = ", ".join(names[:3]) + (f" and {plural(len(names) - 3, 'other')}" if len(names) > 3 else "")
    activity = text.removeprefix("is ")
    return Line(f"      ... and {len(actors)} more {activity} this hour ({who})")


def in_time_order(events: list[TownEvent]) -> list[Line]:
    """Each event as 'HH:MM #area  line', a heading at each new day. Within a game hour, a
    filler activity seen FOLD_AFTER or more times there is shown the first time and the rest
    are counted in one line at the end of the hour."""
    ordered = sorted(events, key=lambda e: e.game_time)  # stable: a tick keeps its own order
    width = max((len(e.channel) for e in ordered), default=0) + 1
    filler = filler_activities(ordered)
    hours: dict[str, list[TownEvent]] = defaultdict(list)
    for event in ordered:
        hours[event.game_time[:13]].append(event)
    lines: list[Line] = []
    day = ""
    for hour, hour_events in hours.items():
        if hour[:10] != day:
            day = hour[:10]
            lines.append(Line(f"--- {day} ---"))
        counts = Counter(e.text for e in hour_events if e.kind == "action" and e.text in filler)
        folded: dict[str, list[str]] = {text: [] for text, n in counts.items() if n >= FOLD_AFTER}
        shown: set[str] = set()
        for event in hour_events:
            if event.kind == "action" and event.text in folded:
                if event.text in shown:
                    folded[event.text].append(event.actor)
                    continue
                shown.add(event.text)
            lines.append(event_line(event, width))
        lines += [_fold_line(text, actors) for text, actors in folded.items()]
    return lines


def by_area(events: list[TownEvent]) -> list[Line]:
    """Each area's events together, areas in name order, as on a platform with channels."""
    grouped: dict[str, list[TownEvent]] = defaultdict(list)
    for event in events:
        grouped[event.channel].append(event)
    lines: list[Line] = []
    for channel, channel_events in sorted(grouped.items()):
        lines.append(Line(f"#{channel} ({len(channel_events)} events)", channel))
        lines += [Line(f"  {e.game_time[:10]} {e.line()}", channel) for e in channel_events]
        lines.append(Line(""))
    return lines
