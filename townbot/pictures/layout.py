"""Where each sector and arena sits on the map, in street-grid units.

Each sector's building stands beside its entrance, on the side of its street that is free of
other streets and buildings; world.yaml's optional `layout` hint fixes the side, the size or a
shift along the street where that choice alone would not do. Walking routes run along the
streets, so a walker drawn on the grid is on the way they really take.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from townbot.world.model import Sector, World
from townbot.world.paths import Street

CLEARANCE = 0.3  # from a street's centre line to the buildings beside it
GAP = 0.1  # between two buildings
TITLE = 0.34  # the band with the sector's name at the top of its building
SIDES = {"north": (0, -1), "south": (0, 1), "west": (-1, 0), "east": (1, 0)}


@dataclass(frozen=True)
class Box:
    left: float
    top: float
    right: float
    bottom: float

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.bottom - self.top

    def overlaps(self, other: Box, margin: float = 0.0) -> bool:
        return (self.left < other.right + margin and other.left < self.right + margin
                and self.top < other.bottom + margin and other.top < self.bottom + margin)

    def contains(self, x: float, y: float) -> bool:
        return self.left <= x <= self.right and self.top <= y <= self.bottom

    def grown(self, by: float) -> Box:
        return Box(self.left - by, self.top - by, self.right + by, self.bottom + by)


@dataclass(frozen=True)
class SectorPlan:
    name: str
    kind: str
    box: Box
    side: str
    entrance: tuple[int, int]
    arenas: dict[str, Box]


@dataclass(frozen=True)
class TownLayout:
    sectors: dict[str, SectorPlan]
    streets: list[Street]
    bounds: Box


def default_size(sector: Sector) -> tuple[float, float]:
    """(along the street, away from it) in blocks, from how many arenas it has."""
    sizes = ((2, (1.7, 1.5)), (4, (1.8, 1.9)), (6, (1.8, 2.4)))
    return next((size for most, size in sizes if len(sector.arenas) <= most), (3.2, 3.2))


def candidate_sides(world: World, point: tuple[int, int]) -> list[str]:
    """Sides of the street(s) through an entrance: across a street, never along it."""
    x, y = point
    on = world.streets.on_street
    sides = []
    if on((x - 1, y)) or on((x + 1, y)):
        sides += ["north", "south"]
    if on((x, y - 1)) or on((x, y + 1)):
        sides += ["west", "east"]
    return sides or list(SIDES)


def building(point: tuple[int, int], side: str, size: tuple[float, float], shift: float) -> Box:
    """The box standing on `side` of the street at `point`, its near edge facing the entrance."""
    x, y = point
    along, away = size
    if side in ("north", "south"):
        left = x - along / 2 + shift
        top = y - CLEARANCE - away if side == "north" else y + CLEARANCE
        return Box(left, top, left + along, top + away)
    top = y - along / 2 + shift
    left = x - CLEARANCE - away if side == "west" else x + CLEARANCE
    return Box(left, top, left + away, top + along)


def street_boxes(streets: list[Street]) -> list[Box]:
    """The band along each street that no building may cover."""
    half = CLEARANCE - 0.05
    return [Box(min(s.start[0], s.end[0]) - half, min(s.start[1], s.end[1]) - half,
                max(s.start[0], s.end[0]) + half, max(s.start[1], s.end[1]) + half)
            for s in streets]


def plan_town(world: World) -> TownLayout:
    """Place every sector: hinted ones first, then the rest in world.yaml's order, each on the
    first side of its street where it clashes with the fewest buildings and streets."""
    streets = world.streets.streets
    blocked = street_boxes(streets)
    placed: dict[str, Box] = {}
    sides: dict[str, str] = {}

    def clashes(box: Box) -> int:
        return (sum(box.overlaps(other, GAP) for other in placed.values())
                + sum(box.overlaps(street) for street in blocked))

    for sector in sorted(world.sectors.values(), key=lambda s: s.layout.side is None):
        size = sector.layout.size or default_size(sector)
        options = [sector.layout.side] if sector.layout.side else \
            candidate_sides(world, sector.entrance)
        boxes = {side: building(sector.entrance, side, size, sector.layout.shift) for side in options}
        sides[sector.name], placed[sector.name] = min(boxes.items(), key=lambda box: clashes(box[1]))
    plans = {name: SectorPlan(name, s.kind, placed[name], sides[name], s.entrance,
                              arena_cells(placed[name], list(s.arenas)))
             for name, s in world.sectors.items()}
    return TownLayout(plans, streets, _bounds(list(placed.values()), streets))


def arena_cells(box: Box, arenas: list[str]) -> dict[str, Box]:
    """Arenas as a grid of cells under the sector's title band, roughly square."""
    pad = 0.06
    inner = Box(box.left + pad, box.top + TITLE, box.right - pad, box.bottom - pad)
    count = len(arenas)
    columns = max(1, min(count, round(math.sqrt(count * inner.width / inner.height))))
    rows = math.ceil(count / columns)
    height = inner.height / rows
    cells = {}
    short = count - (rows - 1) * columns  # the first row holds the rest: the main arena is first
    for index, arena in enumerate(arenas):
        row, column = (0, index) if index < short else divmod(index - short + columns, columns)
        cell_width = inner.width / (short if row == 0 else columns)
        left = inner.left + column * cell_width
        top = inner.top + row * height
        cells[arena] = Box(left + pad / 2, top + pad / 2, left + cell_width - pad / 2,
                           top + height - pad / 2)
    return cells


def _bounds(boxes: list[Box], streets: list[Street]) -> Box:
    ends = [end for street in streets for end in (street.start, street.end)]
    xs = [b.left for b in boxes] + [b.right for b in boxes] + [x for x, _ in ends]
    ys = [b.top for b in boxes] + [b.bottom for b in boxes] + [y for _, y in ends]
    return Box(min(xs) - 0.5, min(ys) - 0.5, max(xs) + 0.5, max(ys) + 0.5)
