"""The street grid and shortest walking paths between sector entrances."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

Point = tuple[int, int]


@dataclass(frozen=True)
class Street:
    name: str
    start: Point
    end: Point

    def points(self) -> list[Point]:
        (x1, y1), (x2, y2) = self.start, self.end
        if x1 == x2:
            step = 1 if y2 >= y1 else -1
            return [(x1, y) for y in range(y1, y2 + step, step)]
        step = 1 if x2 >= x1 else -1
        return [(x, y1) for x in range(x1, x2 + step, step)]


@dataclass
class StreetMap:
    """Walkable grid points joined along streets; distances come from breadth-first search."""

    streets: list[Street]
    _neighbours: dict[Point, set[Point]] = field(default_factory=dict, init=False)
    _routes: dict[Point, dict[Point, Point | None]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        for street in self.streets:
            points = street.points()
            for here, there in zip(points, points[1:], strict=False):
                self._neighbours.setdefault(here, set()).add(there)
                self._neighbours.setdefault(there, set()).add(here)
            if len(points) == 1:
                self._neighbours.setdefault(points[0], set())

    def on_street(self, point: Point) -> bool:
        return point in self._neighbours

    def _parents_from(self, origin: Point) -> dict[Point, Point | None]:
        if origin not in self._routes:
            parents: dict[Point, Point | None] = {origin: None}
            queue = deque([origin])
            while queue:
                here = queue.popleft()
                for there in sorted(self._neighbours[here]):
                    if there not in parents:
                        parents[there] = here
                        queue.append(there)
            self._routes[origin] = parents
        return self._routes[origin]

    def reachable(self, origin: Point, destination: Point) -> bool:
        return destination in self._parents_from(origin)

    def route(self, origin: Point, destination: Point) -> list[Point]:
        """The grid points walked from origin to destination, both included."""
        parents = self._parents_from(destination)
        if origin not in parents:
            raise ValueError(f"no street connects {origin} and {destination}")
        path = [origin]
        while path[-1] != destination:
            path.append(parents[path[-1]])  # type: ignore[arg-type]
        return path

    def distance(self, origin: Point, destination: Point) -> int:
        return len(self.route(origin, destination)) - 1
