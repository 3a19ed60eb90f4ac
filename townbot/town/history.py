"""Any moment of a town's past, a pure read: the outbox's events replayed up to a game time,
from the residents' homes on, give where everyone was, what they did, and what was in trouble.

Object trouble ends when an event says so (a person setting the object to a calm state) or
when someone next uses the object (the engine only lets a resident use it by setting a new
state); calm changes made in passing are not events, so that is the closest the record allows.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from townbot.store.database import Store, StoreError, TownRow
from townbot.town.mishaps import is_alarming
from townbot.world.clock import format_game_time, parse_game_time
from townbot.world.events import TownEvent
from townbot.world.model import World, join_path

WALK_MINUTES = re.compile(r"\((\d+) min\)\s*$")


@dataclass(frozen=True)
class Walk:
    origin: str
    sector: str
    arena: str
    departed: datetime
    arrives: datetime

    def progress(self, moment: datetime) -> float:
        """How far along the route at `moment`, from 0 (leaving) to 1 (arriving)."""
        total = (self.arrives - self.departed).total_seconds()
        if total <= 0:
            return 1.0
        return min(1.0, max(0.0, (moment - self.departed).total_seconds() / total))


@dataclass(frozen=True)
class Whereabouts:
    name: str
    visitor: bool
    sector: str | None  # None while walking
    arena: str | None
    action: str = "sleeping"
    emoji: str = "😴"
    walk: Walk | None = None

    @property
    def place(self) -> str:
        if self.walk is not None:
            return f"walking to {self.walk.sector}"
        return f"{self.sector}: {self.arena}"


@dataclass(frozen=True)
class Moment:
    """The town at one game time: where everyone is and which objects are in trouble."""

    time: datetime
    people: dict[str, Whereabouts]
    troubles: dict[str, str] = field(default_factory=dict)  # object path -> its alarming state


@dataclass
class _Replay:
    world: World
    channels: dict[str, str]  # channel slug -> sector
    people: dict[str, Whereabouts]
    visitors: set[str]
    troubles: dict[str, str] = field(default_factory=dict)

    def apply(self, event: TownEvent, when: datetime) -> None:
        sector = self.channels.get(event.channel)
        match event.kind:
            case "action":
                self._act(event, sector)
            case "speech":
                where = self._place(event.place, sector)
                if where is not None and event.actor in self.people:
                    self._settle(event.actor, *where)
            case "arrival":
                where = self._place(event.place, sector)
                if where is not None:
                    self.visitors.add(event.actor)
                    self.people[event.actor] = Whereabouts(event.actor, True, *where,
                                                           "looking around", "👋")
            case "departure" if event.actor in self.visitors:
                self.people.pop(event.actor, None)
            case "move":
                self._walk(event, when, sector)
            case "object":
                self._trouble(event, sector)

    def _place(self, place: str, sector: str | None) -> tuple[str, str] | None:
        """(sector, arena) from an event's place: 'Sector: arena' or 'arena[: object]'."""
        parts = place.split(": ")
        if parts[0] in self.world.sectors and len(parts) > 1 and \
                self.world.has_arena(parts[0], parts[1]):
            return parts[0], parts[1]
        if sector is not None and self.world.has_arena(sector, parts[0]):
            return sector, parts[0]
        return None

    def _settle(self, name: str, sector: str, arena: str, **changes: str) -> None:
        person = self.people.get(name) or Whereabouts(name, name in self.visitors, sector, arena)
        self.people[name] = replace(person, sector=sector, arena=arena, walk=None, **changes)

    def _act(self, event: TownEvent, sector: str | None) -> None:
        where = self._place(event.place, sector)
        if where is None:
            return
        self._settle(event.actor, *where, action=event.text.removeprefix("is "), emoji=event.emoji)
        parts = event.place.split(": ")
        if len(parts) == 2:
            self.troubles.pop(join_path(where[0], *parts), None)  # someone is using it again

    def _walk(self, event: TownEvent, when: datetime, sector: str | None) -> None:
        person = self.people.get(event.actor)
        destination = self._place(event.place, None)
        if person is None or destination is None:
            return
        origin = sector or person.sector or destination[0]
        minutes = WALK_MINUTES.search(event.text)
        length = int(minutes.group(1)) if minutes else self.world.walking_minutes(origin,
                                                                                  destination[0])
        walk = Walk(origin, *destination, when, when + timedelta(minutes=length))
        self.people[event.actor] = replace(person, sector=None, arena=None, walk=walk,
                                           action=f"walking to {destination[0]}", emoji="🚶")

    def _trouble(self, event: TownEvent, sector: str | None) -> None:
        parts = event.place.split(": ")
        if sector is None or len(parts) != 2:
            return
        path = join_path(sector, *parts)
        state = event.text.removeprefix("is now ").removeprefix("is ").rstrip("!").strip()
        if is_alarming(state):
            self.troubles[path] = state
        else:
            self.troubles.pop(path, None)

    def arrivals(self, moment: datetime) -> dict[str, Whereabouts]:
        """Everyone at `moment`: a walk whose time is up has arrived."""
        people = {}
        for name, person in self.people.items():
            walk = person.walk
            if walk is not None and walk.arrives <= moment:
                # arrived: the walk's words end with it (a visitor has no next action to say so)
                person = replace(person, sector=walk.sector, arena=walk.arena, walk=None,
                                 action=f"just arrived at {walk.sector}", emoji="📍")
            people[name] = person
        return people


@dataclass
class History:
    """A town's events in order, ready to be replayed to any game time."""

    world: World
    town: TownRow
    events: list[TownEvent]
    visitors: set[str] = field(default_factory=set)
    last_id: int = 0  # the newest outbox row read, for reading on from there

    def __post_init__(self) -> None:
        self._times = [parse_game_time(e.game_time) for e in self.events]

    @property
    def start(self) -> datetime:
        return parse_game_time(self.town.start)

    @property
    def latest(self) -> datetime:
        """The game time of the last tick played (what the stored residents reflect)."""
        ticks = max(0, self.town.tick - 1)
        return self.start + timedelta(minutes=ticks * self.town.tick_minutes)

    def tick_times(self) -> list[datetime]:
        step = timedelta(minutes=self.town.tick_minutes)
        return [self.start + i * step for i in range(max(1, self.town.tick))]

    def add(self, events: list[TownEvent], last_id: int, town: TownRow) -> None:
        self.events += events
        self._times += [parse_game_time(e.game_time) for e in events]
        self.last_id, self.town = last_id, town

    def at(self, moment: datetime) -> Moment:
        replay = _Replay(self.world, {s.channel: n for n, s in self.world.sectors.items()},
                         {name: Whereabouts(name, False, p.home_sector, p.home_arena)
                          for name, p in self.world.personas.items()}, set(self.visitors))
        for event, when in zip(self.events[:bisect_right(self._times, moment)], self._times,
                               strict=False):
            replay.apply(event, when)
        return Moment(moment, dict(sorted(replay.arrivals(moment).items())), replay.troubles)

    def events_between(self, start: datetime, end: datetime) -> list[TownEvent]:
        """Events from `start` up to and including `end`."""
        first = bisect_right(self._times, start - timedelta(microseconds=1))
        return self.events[first:bisect_right(self._times, end)]


def parse_moment(text: str, history: History) -> datetime:
    """A game time from the command line or a URL, checked against the town's span."""
    try:
        moment = parse_game_time(text.strip())
    except ValueError as error:
        raise StoreError(f"'{text}' is not a game time; write 'YYYY-MM-DD HH:MM', e.g. "
                         f"'{format_game_time(history.latest)}'") from error
    if not history.start <= moment <= history.latest + timedelta(minutes=history.town.tick_minutes):
        raise StoreError(f"{text} is outside this town's history, which runs from "
                         f"{format_game_time(history.start)} to {format_game_time(history.latest)}")
    return moment


async def load_history(store: Store, world: World) -> History:
    """Every event of the store's town, with who came as a visitor."""
    town = await store.town()
    if town is None:
        raise StoreError(f"{store.path} holds no town yet; run `townbot sim --db {store.path}` first")
    missing = sorted(set(world.personas) - set(await store.agents(town.id)))
    if missing:
        raise StoreError(f"residents {', '.join(missing)} are not in this town's database; use "
                         "the persona folder the town was founded with")
    history = History(world, town, [], await store.visitor_names(town.id))
    await read_on(store, history)
    return history


async def read_on(store: Store, history: History) -> bool:
    """Add the events written since the history was last read; True when there were any."""
    town = await store.town(history.town.id)
    assert town is not None
    rows = await store.events_after(town.id, history.last_id)
    if not rows and town.tick == history.town.tick:
        return False
    history.visitors |= await store.visitor_names(town.id)
    history.add([event for _, event in rows], rows[-1][0] if rows else history.last_id, town)
    return True
