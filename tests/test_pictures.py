"""The town map (issue 14): layout from world.yaml, any moment rebuilt from the database, and
`townbot map` drawing everyone where the export says (positions are compared, not pixels)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from PIL import Image, ImageSequence, ImageStat
from towns import STOVE, busy_morning

from townbot.cli import main
from townbot.pictures.layout import CLEARANCE, plan_town, street_boxes
from townbot.pictures.markers import identities
from townbot.pictures.townmap import MapPainter, abbreviate, drawable
from townbot.store.database import Store
from townbot.town.history import Moment, Walk, Whereabouts, load_history
from townbot.world.errors import DataError
from townbot.world.loading import load_world

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue() + err.getvalue()


@pytest.fixture(scope="module")
def day_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("day") / "day.db"
    code, output = run_cli("sim", "--days", "1", "--db", str(db), "--no-transcript")
    assert code == 0, output
    return db


@pytest.fixture(scope="module")
def morning_db(world, tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("morning") / "morning.db"
    asyncio.run(busy_morning(world, db))
    return db


async def history_of(world, db: Path):
    store = await Store.open(db, read_only=True)
    try:
        return await load_history(store, world)
    finally:
        await store.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- layout ----------------------------------------------------------------------------------

def test_smallville_buildings_stand_beside_their_entrances_without_overlapping(world):
    layout = plan_town(world)
    boxes = [plan.box for plan in layout.sectors.values()]
    assert not any(a.overlaps(b) for index, a in enumerate(boxes) for b in boxes[index + 1:])
    assert not any(box.overlaps(street) for box in boxes for street in street_boxes(layout.streets))
    for name, plan in layout.sectors.items():
        x, y = world.sectors[name].entrance
        box = plan.box
        gap = max(box.left - x, x - box.right, box.top - y, y - box.bottom)
        assert gap == pytest.approx(CLEARANCE), name  # the door faces its street
        assert set(plan.arenas) == set(world.sectors[name].arenas)
        for cell in plan.arenas.values():
            assert box.contains(cell.left, cell.top) and box.contains(cell.right, cell.bottom)


def test_a_layout_hint_moves_a_sector_to_the_side_it_names(tmp_path):
    spec = yaml.safe_load((ROOT / "world.yaml").read_text(encoding="utf-8"))
    cafe = next(s for s in spec["sectors"] if s["name"] == "Hobbs Cafe")
    cafe["layout"] = {"side": "north", "size": [1.2, 1.0]}
    (tmp_path / "world.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    plan = plan_town(load_world(tmp_path / "world.yaml")).sectors["Hobbs Cafe"]
    assert plan.side == "north" and plan.box.bottom < 6 and plan.box.width == pytest.approx(1.2)


def test_a_bad_layout_hint_is_refused_with_the_place_and_the_choices(tmp_path):
    spec = yaml.safe_load((ROOT / "world.yaml").read_text(encoding="utf-8"))
    spec["sectors"][0]["layout"] = {"side": "up"}
    (tmp_path / "world.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    with pytest.raises(DataError, match=r"sectors\[0\]\.layout\.side \(Hobbs Cafe\).*north"):
        load_world(tmp_path / "world.yaml")


# --- the map of a one-day town -----------------------------------------------------------------

def test_townbot_map_draws_every_resident_where_the_export_says(world, day_db, tmp_path):
    before = digest(day_db)
    out, positions = tmp_path / "map.png", tmp_path / "where.json"
    code, output = run_cli("map", "--db", str(day_db), "--out", str(out), "--positions",
                           str(positions))
    assert code == 0, output
    code, exported = run_cli("export", "--db", str(day_db))
    agents = json.loads(exported)["agents"]
    drawn = json.loads(positions.read_text(encoding="utf-8"))["people"]
    with Image.open(out) as image:
        assert image.format == "PNG"
        width, height = image.size
    layout = plan_town(world)
    assert set(drawn) == {a["name"] for a in agents} and len(agents) == 25
    for agent in agents:
        where, marker = agent["location"], drawn[agent["name"]]
        assert 0 <= marker["x"] < width and 0 <= marker["y"] < height
        if where["walking_to"]:
            assert marker["walking_to"] == where["walking_to"]
            continue
        assert (marker["sector"], marker["arena"]) == (where["sector"], where["arena"])
        cell = layout.sectors[where["sector"]].arenas[where["arena"]]
        scale, left, top = 64, layout.bounds.left, layout.bounds.top
        assert cell.left <= marker["x"] / scale + left <= cell.right, agent["name"]
        assert cell.top <= (marker["y"] - 30) / scale + top <= cell.bottom, agent["name"]
    assert digest(day_db) == before  # drawing never changes the town


def test_the_replayed_moment_of_every_hour_matches_the_engine(world, day_db):
    """At the last tick the replay agrees with the stored residents; mid-day people move."""
    history = asyncio.run(history_of(world, day_db))
    noon, night = history.at(datetime(2023, 2, 13, 12, 0)), history.at(datetime(2023, 2, 13, 2, 0)
                                                                            .replace(day=14))
    at_home = [p for p in night.people.values()
               if p.sector == world.personas[p.name].home_sector]
    assert len(at_home) >= 23
    assert sum(p.sector != world.personas[p.name].home_sector for p in noon.people.values()) >= 10


def test_the_same_moment_draws_the_same_picture(world, day_db):
    history = asyncio.run(history_of(world, day_db))
    moment = history.at(datetime(2023, 2, 13, 17, 30))
    first = MapPainter(world).draw(moment).png()
    assert MapPainter(world).draw(moment).png() == first


def test_an_animation_moves_walkers_between_the_ticks_of_the_span(day_db, tmp_path):
    out = tmp_path / "party.gif"
    code, output = run_cli("map", "--db", str(day_db), "--from", "2023-02-13 17:00", "--to",
                           "2023-02-13 18:00", "--out", str(out))
    assert code == 0, output
    with Image.open(out) as image:  # six ticks of four frames, and the last tick
        assert image.format == "GIF" and image.n_frames == 25
        assert sum(image.info["duration"] for _ in ImageSequence.Iterator(image)) >= 2400


def test_each_person_has_their_own_colour_and_initials(world):
    marks = identities(list(world.personas), ["Ada", "Ava 🎉"])
    residents = [marks[name] for name in world.personas]
    assert len({m.colour for m in residents}) == len(residents) == 25
    assert len({m.initials for m in marks.values()}) == 27
    assert (marks["Maria Lopez"].initials, marks["Mei Lin"].initials) == ("MLo", "MLi")
    assert drawable("Ava 🎉 the 👩‍🍳 cook") == "Ava the cook"
    assert identities([], ["🎉Bo Lee", "🎉"])["🎉Bo Lee"].initials == "BL"
    assert identities([], ["🎉"])["🎉"].initials == "?"


def test_a_crowded_room_lists_names_in_a_key_and_a_close_up_says_what_people_do(world):
    cafe = {name: Whereabouts(name, False, "Hobbs Cafe", "cafe", "dancing at the party", "💃")
            for name in list(world.personas)[:14]}
    moment = Moment(datetime(2023, 2, 14, 17, 30), cafe)
    painter = MapPainter(world)
    whole = painter.draw(moment)
    assert sorted(whole.unnamed) == sorted(cafe)  # no name cut: all of them in the key
    assert whole.image.height > painter.draw(Moment(moment.time, {})).image.height
    close = painter.draw(moment, "Hobbs Cafe")
    assert close.unnamed == [] and len(close.positions) == 14
    assert len({round(m.y) for m in close.positions.values()}) >= 7  # a line each, in columns


def test_the_map_is_darker_at_night(world):
    def brightness(hour: int) -> float:
        image = MapPainter(world).draw(Moment(datetime(2023, 2, 13, hour, 0), {})).image
        return sum(ImageStat.Stat(image.convert("L")).mean)
    assert brightness(23) < 0.75 * brightness(12)


# --- visitors, walkers, trouble ----------------------------------------------------------------

def test_visitors_walkers_and_trouble_are_marked(world, morning_db):
    history = asyncio.run(history_of(world, morning_db))
    joined = next(e for e in history.events if e.kind == "arrival")
    moved = next(e for e in history.events if e.kind == "move" and e.actor == "Ada")
    at_park = history.at(datetime.fromisoformat(joined.game_time))
    assert at_park.people["Ada"].visitor and at_park.people["Ada"].sector == "Johnson Park"
    assert STOVE in at_park.troubles or STOVE in history.at(history.latest).troubles
    walking = history.at(datetime.fromisoformat(moved.game_time))
    assert walking.people["Ada"].walk is not None
    picture = MapPainter(world).draw(walking)
    assert picture.positions["Ada"].visitor and picture.positions["Ada"].walking_to == "Hobbs Cafe"
    troubled = history.at(datetime.fromisoformat(moved.game_time))
    if STOVE in troubled.troubles:
        assert STOVE in MapPainter(world).draw(troubled).highlighted
    assert not picture.positions["Isabella Rodriguez"].visitor


def test_a_walker_is_drawn_along_the_streets_of_the_route(world):
    walk = Walk("Johnson Park", "Hobbs Cafe", "cafe", datetime(2023, 2, 13, 9, 0),
                datetime(2023, 2, 13, 9, 6))
    painter = MapPainter(world)
    points = []
    for minute in (0, 3, 6):
        moment = Moment(datetime(2023, 2, 13, 9, minute), {
            "Ada": Whereabouts("Ada", True, None, None, "walking", "🚶", walk)})
        marker = painter.draw(moment).positions.get("Ada")
        points.append(marker)
    route = world.route("Johnson Park", "Hobbs Cafe")
    start, end = painter.draw(Moment(walk.departed, {})).to_pixels(*route[0]), None
    assert (points[0].x, points[0].y) == pytest.approx(start)
    assert points[1].x != points[0].x or points[1].y != points[0].y
    end = painter.draw(Moment(walk.arrives, {})).to_pixels(*route[-1])
    assert (points[2].x, points[2].y) == pytest.approx(end)


def test_a_close_up_shows_only_that_sector(world, day_db, tmp_path):
    out, positions = tmp_path / "cafe.png", tmp_path / "cafe.json"
    code, output = run_cli("map", "--db", str(day_db), "--at", "2023-02-13 12:30", "--area",
                           "hobbs cafe", "--out", str(out), "--positions", str(positions))
    assert code == 0, output
    drawn = json.loads(positions.read_text(encoding="utf-8"))["people"]
    settled = {m["sector"] for m in drawn.values() if not m["walking_to"]}
    assert settled == {"Hobbs Cafe"}  # and walkers passing in the street


@pytest.mark.parametrize(("argv", "message"), [
    (["--at", "yesterday"], "not a game time; write 'YYYY-MM-DD HH:MM'"),
    (["--at", "2024-01-01 10:00"], "outside this town's history"),
    (["--from", "2023-02-13 08:00"], "needs both --from and --to"),
    (["--area", "Hobs Cafe"], "did you mean 'Hobbs Cafe'"),
])
def test_bad_map_requests_say_what_would_work(day_db, tmp_path, argv, message):
    out = tmp_path / ("x.gif" if "--from" in argv else "x.png")
    code, output = run_cli("map", "--db", str(day_db), "--out", str(out), *argv)
    assert code == 2 and message in output and not out.exists()


def test_map_never_creates_a_database(tmp_path):
    code, output = run_cli("map", "--db", str(tmp_path / "none.db"), "--out",
                           str(tmp_path / "x.png"))
    assert code == 2 and "does not exist" in output
    assert list(tmp_path.iterdir()) == []


def test_a_png_name_is_asked_for_one_moment(day_db, tmp_path):
    code, output = run_cli("map", "--db", str(day_db), "--out", str(tmp_path / "x.gif"))
    assert code == 2 and "*.png" in output


def test_a_video_needs_ffmpeg_and_says_so_without_it(day_db, tmp_path, monkeypatch):
    from townbot.platforms import map_command

    monkeypatch.setattr(map_command.shutil, "which", lambda name: None)
    out = tmp_path / "party.mp4"
    code, output = run_cli("map", "--db", str(day_db), "--from", "2023-02-13 17:00", "--to",
                           "2023-02-13 17:20", "--out", str(out))
    assert code == 2 and "needs ffmpeg, which is not installed here" in output
    assert "name the file *.gif" in output and not out.exists()


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not installed")
@pytest.mark.parametrize("suffix", ["mp4", "webm"])
def test_with_ffmpeg_an_animation_can_be_a_video(day_db, tmp_path, suffix):
    out = tmp_path / f"party.{suffix}"
    code, output = run_cli("map", "--db", str(day_db), "--from", "2023-02-13 17:00", "--to",
                           "2023-02-13 17:20", "--out", str(out))
    assert code == 0, output
    head = out.read_bytes()[:64]
    assert b"ftyp" in head if suffix == "mp4" else head.startswith(b"\x1a\x45\xdf\xa3")


def test_a_long_place_name_is_shortened_the_same_way_everywhere():
    from PIL import ImageFont

    face = ImageFont.load_default(size=9)
    given = frozenset({"Isabella", "Maria"})
    whole = "Isabella Rodriguez's apartment"
    assert abbreviate(whole, face, 500, given) == whole  # room enough: untouched
    assert abbreviate(whole, face, face.getlength("Isabella Rodriguez's apt."), given) == \
        "Isabella Rodriguez's apt."
    assert abbreviate(whole, face, face.getlength("I. Rodriguez's apt."), given) == \
        "I. Rodriguez's apt."
    assert abbreviate("Maria Lopez's room", face, face.getlength("M. Lopez's rm"), given) == \
        "M. Lopez's rm"
