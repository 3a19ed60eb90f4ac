"""Game time and walking: the clock the town lives by and the streets people walk along."""

from __future__ import annotations

import itertools
import shutil
from collections import deque
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from townbot.world.clock import GameClock, clock_face, parse_clock
from townbot.world.loading import load_world
from townbot.world.model import OpeningHours, World
from townbot.world.paths import Street, StreetMap

ROOT = Path(__file__).resolve().parents[1]
WORLD_YAML = ROOT / "world.yaml"

# ---------------------------------------------------------------- the clock


def test_clock_starts_at_the_given_time() -> None:
    clock = GameClock(datetime(2023, 2, 13, 7, 0), tick_minutes=10)
    assert clock.now == datetime(2023, 2, 13, 7, 0)
    assert clock.day_number == 1


def test_advance_moves_by_one_tick() -> None:
    clock = GameClock(datetime(2023, 2, 13, 7, 0), tick_minutes=10)
    assert clock.advance() == datetime(2023, 2, 13, 7, 10)
    assert clock.advance() == datetime(2023, 2, 13, 7, 20)
    assert clock.now == datetime(2023, 2, 13, 7, 20)

    slow = GameClock(datetime(2023, 2, 13, 7, 0), tick_minutes=25)
    slow.advance()
    assert slow.now == datetime(2023, 2, 13, 7, 25)


def test_day_number_changes_at_midnight() -> None:
    clock = GameClock(datetime(2023, 2, 13, 23, 40), tick_minutes=10)
    clock.advance()
    assert (clock.now, clock.day_number) == (datetime(2023, 2, 13, 23, 50), 1)
    clock.advance()
    assert (clock.now, clock.day_number) == (datetime(2023, 2, 14, 0, 0), 2)


def test_day_number_counts_calendar_days_not_24_hour_spans() -> None:
    clock = GameClock(datetime(2023, 2, 13, 7, 0), tick_minutes=10)
    for _ in range(clock.ticks_for(hours=17) - 1):
        clock.advance()
    assert clock.now == datetime(2023, 2, 13, 23, 50)
    assert clock.day_number == 1
    clock.advance()
    assert clock.day_number == 2
    for _ in range(clock.ticks_for(days=1)):
        clock.advance()
    assert (clock.now, clock.day_number) == (datetime(2023, 2, 15, 0, 0), 3)


def test_ticks_for_hours_and_days() -> None:
    clock = GameClock(datetime(2023, 2, 13, 7, 0), tick_minutes=10)
    assert clock.ticks_for(hours=3) == 18
    assert clock.ticks_for(days=1) == 144
    assert clock.ticks_for(hours=0.5) == 3
    assert GameClock(datetime(2023, 2, 13), tick_minutes=15).ticks_for(hours=3) == 12


@pytest.mark.parametrize("minutes", [0, -5, 61, 120])
def test_tick_length_out_of_range_is_refused(minutes: int) -> None:
    with pytest.raises(ValueError, match="out of range"):
        GameClock(datetime(2023, 2, 13, 7, 0), tick_minutes=minutes)


@pytest.mark.parametrize("minutes", [1, 60])
def test_tick_length_limits_are_allowed(minutes: int) -> None:
    assert GameClock(datetime(2023, 2, 13), tick_minutes=minutes).tick_minutes == minutes


@pytest.mark.parametrize(("text", "minute"), [
    ("00:00", 0), ("07:30", 450), ("12:00", 720), ("23:59", 1439), ("7:05", 425)])
def test_parse_clock_reads_valid_times(text: str, minute: int) -> None:
    assert parse_clock(text) == minute


@pytest.mark.parametrize("text", ["25:00", "7", "ab:cd", "12:60", "-1:00", "", "7:30:00"])
def test_parse_clock_rejects_bad_times_and_shows_a_good_one(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_clock(text)
    message = str(caught.value)
    assert f"'{text}'" in message
    assert "HH:MM" in message or ("00-23" in message and "00-59" in message)


def test_clock_face_reads_like_a_paper_plan() -> None:
    assert clock_face(13 * 60 + 5) == "1:05 pm"
    assert clock_face(7 * 60) == "7:00 am"
    assert clock_face(0) == "12:00 am"
    assert clock_face(12 * 60) == "12:00 pm"
    assert clock_face(23 * 60 + 59) == "11:59 pm"


# ---------------------------------------------------------------- opening hours


def test_opening_hours_within_a_day() -> None:
    hours = OpeningHours(parse_clock("08:00"), parse_clock("17:00"))
    assert not hours.contains(parse_clock("07:59"))
    assert hours.contains(parse_clock("08:00"))
    assert hours.contains(parse_clock("16:59"))
    assert not hours.contains(parse_clock("17:00"))
    assert not hours.contains(parse_clock("23:00"))


def test_opening_hours_across_midnight() -> None:
    hours = OpeningHours(parse_clock("22:00"), parse_clock("02:00"))
    assert hours.contains(parse_clock("22:00"))
    assert hours.contains(parse_clock("23:30"))
    assert hours.contains(parse_clock("00:00"))
    assert hours.contains(parse_clock("01:59"))
    assert not hours.contains(parse_clock("02:00"))
    assert not hours.contains(parse_clock("12:00"))
    assert not hours.contains(parse_clock("21:59"))


# ---------------------------------------------------------------- streets and walking


@pytest.fixture(scope="module")
def world() -> World:
    return load_world(WORLD_YAML)


@pytest.fixture(scope="module")
def street_graph() -> dict[tuple[int, int], set[tuple[int, int]]]:
    """An independent reading of world.yaml's streets: grid points joined along each street."""
    data = yaml.safe_load(WORLD_YAML.read_text(encoding="utf-8"))
    graph: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for street in data["streets"]:
        (x1, y1), (x2, y2) = street["from"], street["to"]
        xs = range(min(x1, x2), max(x1, x2) + 1)
        ys = range(min(y1, y2), max(y1, y2) + 1)
        points = [(x, y) for x in xs for y in ys]
        for point in points:
            graph.setdefault(point, set())
        for a, b in zip(points, points[1:], strict=False):
            graph[a].add(b)
            graph[b].add(a)
    return graph


def bfs_distances(graph, origin) -> dict[tuple[int, int], int]:
    seen = {origin: 0}
    queue = deque([origin])
    while queue:
        here = queue.popleft()
        for there in graph[here]:
            if there not in seen:
                seen[there] = seen[here] + 1
                queue.append(there)
    return seen


def test_route_runs_entrance_to_entrance_along_streets(world: World, street_graph) -> None:
    for origin, destination in itertools.permutations(world.sectors, 2):
        route = world.route(origin, destination)
        assert route[0] == world.sectors[origin].entrance
        assert route[-1] == world.sectors[destination].entrance
        for here, there in zip(route, route[1:], strict=False):
            assert abs(here[0] - there[0]) + abs(here[1] - there[1]) == 1
            assert there in street_graph[here], f"{here} -> {there} leaves the streets"
        assert len(set(route)) == len(route), "a shortest route never visits a point twice"


def test_routes_are_shortest_for_every_pair_of_sectors(world: World, street_graph) -> None:
    for origin in world.sectors.values():
        expected = bfs_distances(street_graph, origin.entrance)
        for destination in world.sectors.values():
            blocks = expected[destination.entrance]
            assert world.streets.distance(origin.entrance, destination.entrance) == blocks
            assert len(world.route(origin.name, destination.name)) - 1 == blocks


def test_walking_minutes_is_symmetric_and_zero_in_place(world: World) -> None:
    for origin, destination in itertools.combinations(world.sectors, 2):
        there = world.walking_minutes(origin, destination)
        assert there == world.walking_minutes(destination, origin)
        assert there >= 1
    for name in world.sectors:
        assert world.walking_minutes(name, name) == 0


def test_walking_minutes_is_blocks_times_minutes_per_block(tmp_path: Path, street_graph) -> None:
    path = tmp_path / "world.yaml"
    shutil.copy(WORLD_YAML, path)
    text = path.read_text(encoding="utf-8")
    assert text.count("minutes_per_block: 1\n") == 1
    path.write_text(text.replace("minutes_per_block: 1\n", "minutes_per_block: 3\n"),
                    encoding="utf-8")
    slow = load_world(path)
    assert slow.minutes_per_block == 3
    for origin, destination in itertools.combinations(slow.sectors.values(), 2):
        blocks = bfs_distances(street_graph, origin.entrance)[destination.entrance]
        assert slow.walking_minutes(origin.name, destination.name) == blocks * 3


def test_neighbours_live_closer_than_the_college(world: World) -> None:
    lin, moore, college = "Lin family's house", "Moore family's house", "Oak Hill College"
    assert world.walking_minutes(lin, moore) == 2
    assert world.walking_minutes(lin, moore) < world.walking_minutes(lin, college)
    assert world.walking_minutes(lin, college) == 19


def test_street_map_on_its_own() -> None:
    streets = StreetMap([Street("A", (0, 0), (4, 0)), Street("B", (4, 3), (4, 0)),
                         Street("C", (0, 0), (0, 3)), Street("D", (9, 9), (9, 9))])
    assert streets.on_street((2, 0)) and streets.on_street((4, 2)) and streets.on_street((9, 9))
    assert not streets.on_street((2, 2))
    assert streets.route((0, 3), (4, 3)) == [(0, 3), (0, 2), (0, 1), (0, 0), (1, 0), (2, 0),
                                              (3, 0), (4, 0), (4, 1), (4, 2), (4, 3)]
    assert streets.distance((4, 3), (0, 3)) == 10
    assert streets.distance((2, 0), (2, 0)) == 0
    assert not streets.reachable((0, 0), (9, 9))
    with pytest.raises(ValueError, match="no street connects"):
        streets.route((0, 0), (9, 9))
