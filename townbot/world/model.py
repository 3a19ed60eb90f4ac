"""The sandbox as plain data: sectors > arenas > objects, and the residents' personas."""

from __future__ import annotations

from dataclasses import dataclass, field

from townbot.world.clock import clock_face
from townbot.world.paths import StreetMap

Point = tuple[int, int]


def join_path(*parts: str) -> str:
    """The paper's place notation: 'Sector: arena: object'."""
    return ": ".join(parts)


def split_path(path: str) -> list[str]:
    return [part.strip() for part in path.strip().strip("<>").split(":")]


@dataclass(frozen=True)
class GameObject:
    name: str
    default_state: str


@dataclass(frozen=True)
class Arena:
    name: str
    objects: dict[str, GameObject]
    capacity: int | None = None


@dataclass(frozen=True)
class OpeningHours:
    opens: int  # minutes after midnight
    closes: int

    def contains(self, minute: int) -> bool:
        if self.opens <= self.closes:
            return self.opens <= minute < self.closes
        return minute >= self.opens or minute < self.closes

    def describe(self) -> str:
        return f"{clock_face(self.opens)} to {clock_face(self.closes)}"


@dataclass(frozen=True)
class SectorLayout:
    """The map's hint for a sector: which side of its street, size (along, away) in blocks,
    and a shift along the street."""

    side: str | None = None
    size: tuple[float, float] | None = None
    shift: float = 0


@dataclass(frozen=True)
class Sector:
    name: str
    kind: str
    channel: str
    entrance: Point
    arenas: dict[str, Arena]
    description: str = ""
    norms: tuple[str, ...] = ()
    hours: OpeningHours | None = None
    staff: frozenset[str] = frozenset()
    layout: SectorLayout = SectorLayout()

    def admits(self, person: str, minute: int) -> bool:
        """Whether the sector lets this person in at this minute of the day (closing-time norm)."""
        return self.hours is None or person in self.staff or self.hours.contains(minute)


@dataclass(frozen=True)
class RoutineStep:
    minute: int
    activity: str
    sector: str
    arena: str


@dataclass(frozen=True)
class Persona:
    name: str
    age: int
    traits: tuple[str, ...]
    background: str
    currently: str
    wakes: int
    sleeps: int
    home_sector: str
    home_arena: str
    routine: tuple[RoutineStep, ...]
    seed_memories: tuple[str, ...]
    work_sector: str | None = None
    work_arena: str | None = None
    known_places: tuple[str, ...] = ()
    source: str = ""
    avatar: str | None = None  # picture URL for posts under the resident's name (Discord)

    @property
    def first_name(self) -> str:
        return self.name.split()[0]

    def starting_sectors(self) -> list[str]:
        """Home, work and frequented places: what the resident knows on day one."""
        names = [self.home_sector, *([self.work_sector] if self.work_sector else []),
                 *self.known_places, *(step.sector for step in self.routine)]
        return list(dict.fromkeys(names))

    def identity(self) -> str:
        """The short description every prompt about this resident starts from."""
        return (f"{self.name} (age {self.age}; {', '.join(self.traits)}). {self.background} "
                f"Currently: {self.currently}")

    def is_awake_at(self, minute: int) -> bool:
        return self.wakes <= minute < self.sleeps


@dataclass
class World:
    town: str
    start: str
    tick_minutes: int
    minutes_per_block: int
    town_hall_channel: str
    sectors: dict[str, Sector]
    streets: StreetMap
    personas: dict[str, Persona] = field(default_factory=dict)

    def arena(self, sector: str, arena: str) -> Arena:
        return self.sectors[sector].arenas[arena]

    def has_arena(self, sector: str, arena: str) -> bool:
        return sector in self.sectors and arena in self.sectors[sector].arenas

    def object_paths(self) -> list[str]:
        return list(self.default_object_states())

    def default_object_states(self) -> dict[str, str]:
        return {join_path(s.name, a.name, o.name): o.default_state
                for s in self.sectors.values() for a in s.arenas.values() for o in a.objects.values()}

    def walking_minutes(self, origin: str, destination: str) -> int:
        """Game minutes to walk between two sectors' entrances along the streets."""
        if origin == destination:
            return 0
        blocks = self.streets.distance(self.sectors[origin].entrance,
                                       self.sectors[destination].entrance)
        return max(1, blocks * self.minutes_per_block)

    def route(self, origin: str, destination: str) -> list[Point]:
        return self.streets.route(self.sectors[origin].entrance, self.sectors[destination].entrance)
