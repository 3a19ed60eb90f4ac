"""What of a perception becomes memory (paper 4.1; the original code's retention): a sight is
stored when it is new or has changed; a sight seen recently only refreshes the last access of
the memory already made of it. Watching a lamp stay on all afternoon, or a friend taking
short breaks between songs, leaves one memory of each sight, kept fresh for retrieval.

A sight out of view for longer than a gap (the setting `sight_gap_hours`, six game hours:
morning and evening are separate encounters) is a new event when it is seen again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from townbot.mind.reacting import Sighting


def note(sights: dict[str, datetime], text: str, now: datetime, gap: timedelta) -> bool:
    """Stamp a sight as seen now; True when it is new (not seen within the gap)."""
    last = sights.get(text)
    sights[text] = now
    return last is None or now - last > gap


def sort_sightings(sights: dict[str, datetime], sightings: list[Sighting], now: datetime,
                   gap: timedelta) -> tuple[list[Sighting], list[Sighting]]:
    """Split a perception into (new or changed, seen lately) and note what was seen now.
    Sights unseen for longer than the gap are forgotten, which bounds the table."""
    fresh: list[Sighting] = []
    same: list[Sighting] = []
    for sighting in sightings:
        (fresh if note(sights, sighting.text, now, gap) else same).append(sighting)
    for text in [t for t, seen in sights.items() if now - seen > gap]:
        del sights[text]
    return fresh, same
