"""The transcript people read: events grouped by channel, in game-time order."""

from __future__ import annotations

from collections import defaultdict

from townbot.world.events import TownEvent


def by_channel(events: list[TownEvent]) -> dict[str, list[TownEvent]]:
    grouped: dict[str, list[TownEvent]] = defaultdict(list)
    for event in events:
        grouped[event.channel].append(event)
    return dict(sorted(grouped.items()))


def render_transcript(events: list[TownEvent]) -> str:
    parts = []
    for channel, channel_events in by_channel(events).items():
        parts.append(f"#{channel} ({len(channel_events)} events)")
        parts += [f"  {event.game_time[:10]} {event.line()}" for event in channel_events]
        parts.append("")
    return "\n".join(parts)
