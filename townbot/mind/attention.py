"""What of a perception becomes memory (paper 4.1; the original code's retention): a sight is
stored when it is new or has changed; a sight seen recently only refreshes the last access of
the memory already made of it. Watching a lamp stay on all afternoon, or a friend taking
short breaks between songs, leaves one memory of each sight, kept fresh for retrieval.

A sight out of view for longer than a gap (the setting `sight_gap_hours`, six game hours:
morning and evening are separate encounters) is a new event when it is seen again.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta

from townbot.mind.reacting import Sighting

# what was seen -> when it was last seen
Sights = dict[str, datetime]


class SightIndex:
    """One sight table's stamps in the order they were made, and its texts in the table's
    order: forgetting then looks only at the stamps older than the gap, not at the whole
    table (a hundred or more sights at every tick in a crowded town), and deletes in the
    table's order as a scan would. It follows the table it was last given, changed only
    through `note` and `sort_sightings`; another table, another size or time going back makes
    it read the table again whole."""

    def __init__(self) -> None:
        self._table: Sights | None = None
        self._size = 0
        self._order: dict[str, int] = {}  # text -> its place in the table's order
        self._next = 0
        self._stamps: deque[tuple[datetime, list[str]]] = deque()  # oldest first

    def follow(self, sights: Sights, now: datetime) -> None:
        """Be ready to stamp `sights` at `now`."""
        if (sights is not self._table or len(sights) != self._size
                or (self._stamps and now < self._stamps[-1][0])):
            self._read(sights)

    def _read(self, sights: Sights) -> None:
        self._table, self._size = sights, len(sights)
        self._order = {text: place for place, text in enumerate(sights)}
        self._next = len(sights)
        by_time: dict[datetime, list[str]] = {}
        for text, seen in sights.items():
            by_time.setdefault(seen, []).append(text)
        self._stamps = deque(sorted(by_time.items()))

    def stamped(self, texts: list[str], new: list[str], now: datetime) -> None:
        """`texts` were just set to `now` in the table, `new` of them not in it before."""
        if self._stamps and now < self._stamps[-1][0]:
            self._table = None  # out of order: read the table again before forgetting
            return
        for text in new:
            self._order[text] = self._next
            self._next += 1
        self._size += len(new)
        if self._stamps and self._stamps[-1][0] == now:
            self._stamps[-1][1].extend(texts)
        else:
            self._stamps.append((now, texts))

    def forget(self, sights: Sights, cutoff: datetime) -> None:
        """Delete the sights last seen before `cutoff`, in the table's order."""
        if not self._stamps or self._stamps[0][0] >= cutoff:
            return  # nothing that old (most steps)
        expired: list[str] = []
        stamps, last_seen = self._stamps, sights.get
        while stamps and stamps[0][0] < cutoff:
            seen, texts = stamps.popleft()
            expired += [text for text in texts if last_seen(text) == seen]
        if not expired:  # all seen again since (most steps that reach here)
            return
        if len(expired) > 1:
            expired = sorted(dict.fromkeys(expired), key=self._order.__getitem__)
        for text in expired:
            del sights[text]
            del self._order[text]
        self._size -= len(expired)


def note(sights: Sights, text: str, now: datetime, gap: timedelta,
         index: SightIndex | None = None) -> bool:
    """Stamp a sight as seen now; True when it is new (not seen within the gap). `index`: the
    table's SightIndex, told of the stamp (see sort_sightings)."""
    if index is not None:
        index.follow(sights, now)
    last = sights.get(text)
    sights[text] = now
    if index is not None:
        index.stamped([text], [text] if last is None else [], now)
    return last is None or now - last > gap


def sort_sightings(sights: Sights, sightings: list[Sighting], now: datetime,
                   gap: timedelta, index: SightIndex | None = None
                   ) -> tuple[list[Sighting], list[Sighting]]:
    """Split a perception into (new or changed, seen lately) and note what was seen now.
    Sights unseen for longer than the gap are forgotten, which bounds the table. `index`: a
    SightIndex kept with the table, so that forgetting does not scan it."""
    if index is None:
        cutoff = now - gap  # seen before it <=> now - seen > gap
        fresh, same, _ = _stamp(sights, sightings, now, cutoff)
        for text in [t for t, seen in sights.items() if seen < cutoff]:
            del sights[text]
        return fresh, same
    index.follow(sights, now)
    cutoff = now - gap
    fresh, same, added = _stamp(sights, sightings, now, cutoff)
    index.stamped([s.text for s in sightings], added, now)
    index.forget(sights, cutoff)
    return fresh, same


def _stamp(sights: Sights, sightings: list[Sighting], now: datetime, cutoff: datetime
           ) -> tuple[list[Sighting], list[Sighting], list[str]]:
    """Stamp each sight as seen now (as `note` does): (new or changed, seen lately, the texts
    the table did not hold). A sight seen before `cutoff` (now - gap) is changed: one
    subtraction, not one a sight."""
    fresh: list[Sighting] = []
    same: list[Sighting] = []
    added: list[str] = []
    for sighting in sightings:
        text = sighting.text
        last = sights.get(text)
        sights[text] = now
        if last is None:
            added.append(text)
            fresh.append(sighting)
        elif last < cutoff:
            fresh.append(sighting)
        else:
            same.append(sighting)
    return fresh, same, added
