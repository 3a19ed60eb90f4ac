"""The shipped town data loads and is sane; broken files stop with one precise DataError."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from townbot.world.errors import DataError
from townbot.world.loading import load_world
from townbot.world.model import World

ROOT = Path(__file__).resolve().parents[1]
WORLD_YAML = ROOT / "world.yaml"
PERSONAS = ROOT / "personas"


@pytest.fixture(scope="module")
def world() -> World:
    return load_world(WORLD_YAML, PERSONAS)


# ---------------------------------------------------------------- the shipped data


def test_shipped_town_has_19_sectors_and_25_residents(world: World) -> None:
    assert world.town == "Smallville"
    assert len(world.sectors) == 19
    assert len(world.personas) == 25
    assert "Isabella Rodriguez" in world.personas
    assert "Sam Moore" in world.personas


def test_every_sector_has_its_own_channel_slug(world: World) -> None:
    channels = [sector.channel for sector in world.sectors.values()]
    assert len(set(channels)) == len(channels) == 19
    assert world.town_hall_channel not in channels
    for slug in channels:
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", slug), slug


def test_every_home_has_a_bed(world: World) -> None:
    for persona in world.personas.values():
        home = world.arena(persona.home_sector, persona.home_arena)
        assert "bed" in home.objects, f"{persona.name} sleeps in {home.name}, which has no bed"
    for sector in world.sectors.values():
        if sector.kind == "home":
            assert any("bed" in arena.objects for arena in sector.arenas.values()), sector.name


def test_every_kitchen_has_stove_and_refrigerator(world: World) -> None:
    kitchens = [(s.name, a) for s in world.sectors.values() for a in s.arenas.values()
                if a.name == "kitchen"]
    assert len(kitchens) >= 10
    for sector, arena in kitchens:
        assert {"stove", "refrigerator"} <= set(arena.objects), sector


def test_every_bathroom_is_for_one_person(world: World) -> None:
    bathrooms = [(s.name, a) for s in world.sectors.values() for a in s.arenas.values()
                 if "bathroom" in a.name]
    assert len(bathrooms) >= 10
    for sector, arena in bathrooms:
        assert arena.capacity == 1, sector


@pytest.mark.parametrize("sector_name", ["The Willows Market and Pharmacy",
                                         "Harvey Oak Supply Store"])
def test_shops_close_at_five_except_for_staff(world: World, sector_name: str) -> None:
    sector = world.sectors[sector_name]
    staff = sorted(sector.staff)
    assert staff and all(name in world.personas for name in staff)
    customer = "Klaus Mueller"
    assert customer not in sector.staff
    at = {"10:00": 10 * 60, "16:59": 16 * 60 + 59, "17:00": 17 * 60, "17:30": 17 * 60 + 30}
    assert sector.admits(customer, at["10:00"])
    assert sector.admits(customer, at["16:59"])
    assert not sector.admits(customer, at["17:00"])
    assert not sector.admits(customer, at["17:30"])
    for person in staff:
        assert sector.admits(person, at["17:30"])


def test_a_sector_without_hours_always_admits(world: World) -> None:
    park = world.sectors["Johnson Park"]
    assert park.hours is None
    assert park.admits("Klaus Mueller", 3 * 60)


def _persona_text(world: World, name: str) -> str:
    persona = world.personas[name]
    return " ".join([persona.background, persona.currently, *persona.seed_memories,
                     *(step.activity for step in persona.routine)]).lower()


def test_only_isabella_knows_about_the_party(world: World) -> None:
    mentions = {name for name in world.personas
                if "party" in _persona_text(world, name)
                or "valentine" in _persona_text(world, name)}
    assert mentions == {"Isabella Rodriguez"}


def test_only_sam_is_running_for_mayor(world: World) -> None:
    running = {name for name in world.personas
               if re.search(r"\brun(s|ning)? for mayor", _persona_text(world, name))}
    assert running == {"Sam Moore"}


# ---------------------------------------------------------------- broken files


@pytest.fixture()
def town(tmp_path: Path) -> tuple[Path, Path]:
    """A private copy of world.yaml and personas/ to break one thing in."""
    world_path = tmp_path / "world.yaml"
    personas_dir = tmp_path / "personas"
    shutil.copy(WORLD_YAML, world_path)
    shutil.copytree(PERSONAS, personas_dir)
    return world_path, personas_dir


class WithoutAnchors(yaml.SafeDumper):
    """Writes a value used twice out twice: town files may not hold anchors."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def edit_yaml(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.dump(data, Dumper=WithoutAnchors, sort_keys=False, allow_unicode=True),
                    encoding="utf-8")


def replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"test setup: {old!r} is not in {path.name} exactly once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def sector(data: dict, name: str) -> dict:
    return next(s for s in data["sectors"] if s["name"] == name)


def load_error(world_path: Path, personas_dir: Path) -> DataError:
    with pytest.raises(DataError) as caught:
        load_world(world_path, personas_dir)
    return caught.value


def test_copied_town_loads_before_anything_is_broken(town) -> None:
    world_path, personas_dir = town
    assert len(load_world(world_path, personas_dir).personas) == 25


def test_yaml_syntax_error_names_file_and_line(town) -> None:
    world_path, personas_dir = town
    lines = world_path.read_text(encoding="utf-8").splitlines()
    number = lines.index("town: Smallville") + 1
    replace_once(world_path, "town: Smallville\n", "town: Smallville: the town\n")
    error = load_error(world_path, personas_dir)
    assert error.file == str(world_path)
    assert str(world_path) in str(error)
    assert "YAML syntax error" in str(error)
    assert f"line {number}" in error.place
    assert "line" in str(error)


def test_missing_field_names_field_sector_and_arena(town) -> None:
    world_path, personas_dir = town

    def drop_state(data: dict) -> None:
        kitchen = next(a for a in sector(data, "Hobbs Cafe")["arenas"] if a["name"] == "kitchen")
        stove = next(o for o in kitchen["objects"] if o["name"] == "stove")
        del stove["state"]

    edit_yaml(world_path, drop_state)
    error = load_error(world_path, personas_dir)
    assert error.file == str(world_path)
    assert "missing field" in error.problem
    assert error.place.startswith("sectors[0].arenas[1].objects[0].state")
    assert "state" in error.place
    assert "Hobbs Cafe" in error.place and "kitchen" in error.place
    assert str(world_path) in str(error) and "state" in str(error)


def test_unknown_field_lists_the_allowed_ones(town) -> None:
    world_path, personas_dir = town

    def add_colour(data: dict) -> None:
        sector(data, "Johnson Park")["arenas"][0]["colour"] = "green"

    edit_yaml(world_path, add_colour)
    error = load_error(world_path, personas_dir)
    assert error.file == str(world_path)
    assert "colour" in error.place
    assert "Johnson Park" in error.place
    assert "unknown field" in error.problem
    for allowed in ("name", "capacity", "objects"):
        assert allowed in error.problem


def test_unknown_field_in_a_persona(town) -> None:
    world_path, personas_dir = town
    path = personas_dir / "klaus_mueller.yaml"
    edit_yaml(path, lambda data: data.__setitem__("hobby", "chess"))
    error = load_error(world_path, personas_dir)
    assert error.file == str(path)
    assert error.place.startswith("hobby")
    assert "unknown field" in error.problem and "routine" in error.problem


def test_unknown_home_sector_suggests_the_close_name(town) -> None:
    world_path, personas_dir = town
    path = personas_dir / "isabella_rodriguez.yaml"
    replace_once(path, "home: \"Isabella Rodriguez's apartment: main room\"",
                 "home: \"Isabela Rodriguez's apartment: main room\"")
    error = load_error(world_path, personas_dir)
    assert error.file == str(path)
    assert error.place == "home"
    assert "unknown sector 'Isabela Rodriguez's apartment'" in error.problem
    suggestion = error.problem.split("did you mean", 1)[1]
    assert suggestion.lstrip().startswith(('"Isabella Rodriguez\'s apartment"',
                                           "'Isabella Rodriguez\'s apartment'"))
    assert str(error).startswith(str(path))


def test_home_without_a_bed_is_refused(town) -> None:
    world_path, personas_dir = town
    path = personas_dir / "isabella_rodriguez.yaml"
    replace_once(path, "home: \"Isabella Rodriguez's apartment: main room\"",
                 "home: \"Isabella Rodriguez's apartment: kitchen\"")
    error = load_error(world_path, personas_dir)
    assert (error.file, error.place) == (str(path), "home")
    assert "no bed" in error.problem


def test_duplicate_resident_names_both_files(town) -> None:
    world_path, personas_dir = town
    copy = personas_dir / "zz_isabella_again.yaml"
    shutil.copy(personas_dir / "isabella_rodriguez.yaml", copy)
    error = load_error(world_path, personas_dir)
    assert error.file == str(copy)
    assert error.place == "name"
    assert "duplicate resident name 'Isabella Rodriguez'" in error.problem
    assert str(personas_dir / "isabella_rodriguez.yaml") in error.problem


@pytest.mark.parametrize(("old", "new", "place"), [
    ('wakes: "06:00"', 'wakes: "25:00"', "lifestyle.wakes"),
    ('- at: "12:00"', '- at: "25:00"', "routine[4].at"),
    ('- at: "12:30"', '- at: "12:75"', "routine[5].at"),
])
def test_impossible_time_is_refused(town, old: str, new: str, place: str) -> None:
    world_path, personas_dir = town
    path = personas_dir / "isabella_rodriguez.yaml"
    replace_once(path, old, new)
    error = load_error(world_path, personas_dir)
    assert error.file == str(path)
    assert error.place == place
    bad = new.split('"')[1]
    assert f"'{bad}'" in error.problem
    assert "00-23" in error.problem and "00-59" in error.problem


def test_time_that_is_not_a_clock_says_how_to_write_one(town) -> None:
    world_path, personas_dir = town
    path = personas_dir / "isabella_rodriguez.yaml"
    replace_once(path, 'sleeps: "22:30"', 'sleeps: "late"')
    error = load_error(world_path, personas_dir)
    assert (error.file, error.place) == (str(path), "lifestyle.sleeps")
    assert "HH:MM" in error.problem


def test_routine_going_backwards_is_refused(town) -> None:
    world_path, personas_dir = town
    path = personas_dir / "isabella_rodriguez.yaml"
    replace_once(path, '- at: "12:30"', '- at: "11:30"')
    error = load_error(world_path, personas_dir)
    assert error.file == str(path)
    assert error.place == "routine[5].at"
    assert "11:30 is not after the previous step" in error.problem


def test_routine_at_an_unknown_arena_lists_the_real_ones(town) -> None:
    world_path, personas_dir = town
    path = personas_dir / "isabella_rodriguez.yaml"
    replace_once(path, 'do: eat a fast lunch in the back\n    where: "Hobbs Cafe: kitchen"',
                 'do: eat a fast lunch in the back\n    where: "Hobbs Cafe: kitchn"')
    error = load_error(world_path, personas_dir)
    assert error.file == str(path)
    assert error.place == "routine[4].where"
    assert "'Hobbs Cafe' has no arena 'kitchn'" in error.problem
    assert "did you mean 'kitchen'" in error.problem
    assert "cafe, kitchen, bathroom" in error.problem


def test_routine_step_outside_the_waking_day_is_refused(town) -> None:
    world_path, personas_dir = town
    path = personas_dir / "isabella_rodriguez.yaml"
    replace_once(path, '- at: "22:30"', '- at: "23:15"')
    error = load_error(world_path, personas_dir)
    assert (error.file, error.place) == (str(path), "routine[11].at")
    assert "outside the waking day" in error.problem


def test_routine_must_start_at_waking_time(town) -> None:
    world_path, personas_dir = town
    path = personas_dir / "isabella_rodriguez.yaml"
    replace_once(path, 'wakes: "06:00"', 'wakes: "05:30"')
    error = load_error(world_path, personas_dir)
    assert (error.file, error.place) == (str(path), "routine[0].at")
    assert "05:30" in error.problem


def test_bedtime_before_waking_is_refused(town) -> None:
    world_path, personas_dir = town
    path = personas_dir / "isabella_rodriguez.yaml"
    replace_once(path, 'sleeps: "22:30"', 'sleeps: "05:00"')
    error = load_error(world_path, personas_dir)
    assert error.file == str(path)
    assert error.place == "lifestyle.sleeps"
    assert "bedtime 05:00 is not after waking time 06:00" in error.problem


def test_entrance_off_the_streets_is_refused(town) -> None:
    world_path, personas_dir = town
    replace_once(world_path, "entrance: [9, 6]", "entrance: [9, 7]")
    error = load_error(world_path, personas_dir)
    assert error.file == str(world_path)
    assert error.place == "sectors[0] (Hobbs Cafe).entrance"
    assert "[9, 7] is not on any street" in error.problem


def test_two_sectors_at_one_entrance_is_refused(town) -> None:
    world_path, personas_dir = town
    replace_once(world_path, "entrance: [14, 6]", "entrance: [9, 6]")
    error = load_error(world_path, personas_dir)
    assert error.place == "sectors[1] (The Willows Market and Pharmacy).entrance"
    assert "already the entrance of Hobbs Cafe" in error.problem


def test_duplicate_channel_is_refused(town) -> None:
    world_path, personas_dir = town
    replace_once(world_path, "channel: harvey-oak-supply", "channel: hobbs-cafe")
    error = load_error(world_path, personas_dir)
    assert error.file == str(world_path)
    assert error.place == "sectors[2] (Harvey Oak Supply Store).channel"
    assert "channel 'hobbs-cafe' is already used by Hobbs Cafe" in error.problem


def test_sector_channel_cannot_take_the_town_hall(town) -> None:
    world_path, personas_dir = town
    replace_once(world_path, "channel: johnson-park", "channel: town-hall")
    error = load_error(world_path, personas_dir)
    assert error.place == "sectors[4] (Johnson Park).channel"
    assert "town hall" in error.problem


def test_staff_who_is_not_a_resident_is_refused(town) -> None:
    world_path, personas_dir = town
    replace_once(world_path, "staff: [John Lin, Tom Moreno]", "staff: [John Lin, Tom Morano]")
    error = load_error(world_path, personas_dir)
    assert error.file == str(world_path)
    assert error.place == "sectors[1] (The Willows Market and Pharmacy).staff"
    assert "'Tom Morano' is not a resident" in error.problem
    assert "did you mean 'Tom Moreno'" in error.problem


def test_crooked_street_is_refused(town) -> None:
    world_path, personas_dir = town
    replace_once(world_path, "from: [10, 2]\n    to: [10, 6]", "from: [10, 2]\n    to: [11, 6]")
    error = load_error(world_path, personas_dir)
    assert error.place == "streets[6] (Artists Alley)"
    assert "straight" in error.problem


def test_sector_cut_off_from_the_town_is_refused(town) -> None:
    world_path, personas_dir = town

    def island(data: dict) -> None:
        data["streets"].append({"name": "Lonely Lane", "from": [30, 30], "to": [32, 30]})
        sector(data, "Johnson Park")["entrance"] = [31, 30]

    edit_yaml(world_path, island)
    error = load_error(world_path, personas_dir)
    assert error.place == "sectors[4] (Johnson Park).entrance"
    assert "no street connects it to Hobbs Cafe" in error.problem


def test_bad_start_time_is_refused(town) -> None:
    world_path, personas_dir = town
    replace_once(world_path, 'start: "2023-02-13 07:00"', 'start: "2023-02-30 07:00"')
    error = load_error(world_path, personas_dir)
    assert (error.file, error.place) == (str(world_path), "start")
    assert "YYYY-MM-DD HH:MM" in error.problem


def test_missing_persona_folder_is_named(town) -> None:
    world_path, personas_dir = town
    shutil.rmtree(personas_dir)
    error = load_error(world_path, personas_dir)
    assert error.file == str(personas_dir)
    assert "not found" in error.problem


def test_missing_world_file_is_named(tmp_path: Path) -> None:
    error = load_error(tmp_path / "nowhere.yaml", PERSONAS)
    assert error.file == str(tmp_path / "nowhere.yaml")
    assert "file not found" in str(error)


# ---------------------------------------------------------------- the `townbot check` command


def test_check_command_summarises_the_shipped_town(capsys) -> None:
    from townbot.cli import main

    code = main(["check", "--world", str(WORLD_YAML), "--personas", str(PERSONAS)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "19 sectors" in out
    assert "25 residents" in out
    assert "#hobbs-cafe" in out and "open 8:00 am to 8:00 pm" in out
    assert err == ""


def test_check_command_reports_a_broken_file_on_stderr(town, capsys) -> None:
    from townbot.cli import main

    world_path, personas_dir = town
    path = personas_dir / "isabella_rodriguez.yaml"
    replace_once(path, 'sleeps: "22:30"', 'sleeps: "05:00"')
    code = main(["check", "--world", str(world_path), "--personas", str(personas_dir)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "residents" not in out
    assert str(path) in err
    assert "lifestyle.sleeps" in err and "bedtime" in err


# ---------------------------------------------------------------- keys and places twice, bad bytes


def test_a_key_written_twice_in_a_persona_names_both_lines(town) -> None:
    world_path, personas_dir = town
    persona = personas_dir / "isabella_rodriguez.yaml"
    replace_once(persona, "age: 34\n", "age: 34\nage: 99\n")
    error = load_error(world_path, personas_dir)
    assert error.file == str(persona)
    assert error.place == "line 3, column 1"
    assert error.problem == "key 'age' is written twice in one mapping, on line 2 and on line 3; " \
                            "keep one"


def test_a_key_written_twice_deep_in_the_world_is_refused(town) -> None:
    world_path, personas_dir = town
    replace_once(world_path, "    channel: hobbs-cafe\n",
                 "    channel: hobbs-cafe\n    channel: hobbs-coffee\n")
    error = load_error(world_path, personas_dir)
    assert "key 'channel' is written twice" in error.problem


def laughs(levels: int) -> str:
    """A persona whose name is `levels` nested aliases of ten: 10**levels strings from ~300
    bytes (7 levels took 13 s and 1.2 GB before anchors were refused)."""
    lines = ['a: &a ["lol"]']
    for level in range(1, levels + 1):
        name, inner = chr(ord("a") + level), chr(ord("a") + level - 1)
        lines.append(f"{name}: &{name} [{', '.join(['*' + inner] * 10)}]")
    return "\n".join(lines) + f"\nname: *{chr(ord('a') + levels)}\n"


@pytest.mark.parametrize("levels", [7, 8])
@pytest.mark.parametrize("ending", ["\n", "\r\n"])  # libyaml's path and PyYAML's own
def test_nested_aliases_are_refused_at_the_first_anchor(town, levels, ending) -> None:
    world_path, personas_dir = town
    persona = personas_dir / "isabella_rodriguez.yaml"
    persona.write_bytes(laughs(levels).replace("\n", ending).encode())
    error = load_error(world_path, personas_dir)
    assert str(error) == f"{persona}: line 1, column 4: uses the YAML anchor '&a'; anchors and " \
                         "aliases are not allowed in town files, write the value out in full"


@pytest.mark.parametrize(("text", "place", "problem"), [
    ("base: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\n", "line 1, column 7", "anchor '&b'"),
    ("name: *nowhere\n", "line 1, column 7", "alias '*nowhere'"),
    ("name: Isabella\ntraits: [kind*, R&D]\nnote: 5 * 3 & more\n", None, None),
])
def test_anchors_and_aliases_are_refused_and_stars_and_ampersands_in_text_are_not(
        tmp_path, text, place, problem) -> None:
    from townbot.town.scenarios import ScenarioSpec
    from townbot.world.loading import read_yaml
    path = tmp_path / "party.yaml"
    path.write_text(text.replace("traits", "description").replace("note", "announcement")
                    .replace("[kind*, R&D]", "kind* R&D"), encoding="utf-8")
    if problem is None:
        assert read_yaml(path, ScenarioSpec).announcement == "5 * 3 & more"
        return
    with pytest.raises(DataError) as caught:
        read_yaml(path, ScenarioSpec)
    assert (caught.value.place, caught.value.problem.split(";")[0]) == \
        (place, f"uses the YAML {problem}")


def test_a_file_over_the_size_limit_is_refused_unread(town) -> None:
    from townbot.world.loading import MAX_DATA_FILE_BYTES
    world_path, personas_dir = town
    persona = personas_dir / "isabella_rodriguez.yaml"
    with persona.open("a", encoding="utf-8") as file:
        file.write("# " + "x" * MAX_DATA_FILE_BYTES + "\n")
    error = load_error(world_path, personas_dir)
    assert str(error) == f"{persona}: is larger than a town file may be (256,000 bytes); trim it"


def test_libyaml_reads_every_shipped_file_as_pyyaml_does() -> None:
    from townbot.world.loading import FastStrictLoader, StrictLoader, parse_yaml
    files = [WORLD_YAML, *sorted(PERSONAS.glob("*.yaml")), *sorted((ROOT / "scenarios").glob("*.yaml"))]
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert parse_yaml(text) == yaml.load(text, Loader=FastStrictLoader) \
            == yaml.load(text, Loader=StrictLoader), path


@pytest.mark.parametrize("text", ["name: a\tb\n", "x: y\t\n", "traits: [kind, res?urceful]\n"])
def test_where_libyaml_is_laxer_pyyaml_decides(text) -> None:
    """libyaml reads these; PyYAML refuses them, and so does townbot, as it always has."""
    from townbot.world.loading import parse_yaml
    with pytest.raises(yaml.YAMLError):
        yaml.load(text, Loader=yaml.SafeLoader)
    with pytest.raises(yaml.YAMLError):
        parse_yaml(text)


@pytest.mark.parametrize(("where", "kind", "first"), [
    (lambda d: d["sectors"].append(dict(sector(d, "Hobbs Cafe"))), "sector", "sectors[0]"),
    (lambda d: sector(d, "Hobbs Cafe")["arenas"].append(sector(d, "Hobbs Cafe")["arenas"][0]),
     "arena", "sectors[0] (Hobbs Cafe).arenas[0]"),
    (lambda d: sector(d, "Hobbs Cafe")["arenas"][0]["objects"].append(
        sector(d, "Hobbs Cafe")["arenas"][0]["objects"][0]), "object", "objects[0]"),
])
def test_duplicate_sectors_arenas_and_objects_name_both_places(town, where, kind, first) -> None:
    world_path, personas_dir = town
    edit_yaml(world_path, where)
    error = load_error(world_path, personas_dir)
    assert f"duplicate {kind} name" in error.problem
    assert f"first at {first}; rename one" in error.problem


@pytest.mark.parametrize(("content", "problem"), [
    (b"name: Isabella\x00\x01\x02", "is a binary file, not YAML text; give a text file"),
    (b"name: Isabella Rodr\xedguez\n", "is not UTF-8 text (byte 0xed); save the file as UTF-8"),
])
def test_binary_and_non_utf8_files_get_one_line(town, content, problem) -> None:
    world_path, personas_dir = town
    persona = personas_dir / "isabella_rodriguez.yaml"
    persona.write_bytes(content)
    error = load_error(world_path, personas_dir)
    assert str(error) == f"{persona}: {'line 1: ' if 'UTF' in problem else ''}{problem}"


def test_a_folder_where_a_file_should_be_gets_one_line(town) -> None:
    world_path, personas_dir = town
    (personas_dir / "extra.yaml").mkdir()
    assert load_error(world_path, personas_dir).problem == "is a folder, not a file"


def test_check_prints_one_line_for_a_broken_file(town, capsys) -> None:
    from townbot.cli import main
    world_path, personas_dir = town
    (personas_dir / "isabella_rodriguez.yaml").write_bytes(b"\xff\xfe\x00n\x00a")
    assert main(["check", "--world", str(world_path), "--personas", str(personas_dir)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


# ---------------------------------------------------------------- values their tag cannot make


@pytest.mark.parametrize(("value", "problem"), [
    ("!!int twelve", "'twelve' (tagged !!int) is not an integer; write one or remove the tag"),
    ("!!int ''", "'' (tagged !!int) is not an integer; write one or remove the tag"),
    ("!!float tall", "'tall' (tagged !!float) is not a number; write one or remove the tag"),
    ("!!bool maybe", "'maybe' (tagged !!bool) is not true or false; write one or remove the tag"),
    ("2023-02-30", "'2023-02-30' is not a date (YYYY-MM-DD) or a date and time; quote it to "
                   "keep it as text"),
    ("!!map twelve", "tagged !!map but is a scalar; write a mapping or remove the tag"),
])
@pytest.mark.parametrize("ending", ["\n", "\r\n"])  # libyaml's path and PyYAML's own
def test_a_value_its_tag_cannot_make_is_one_clear_error(town, value, problem, ending) -> None:
    world_path, personas_dir = town
    persona = personas_dir / "isabella_rodriguez.yaml"
    replace_once(persona, "age: 34\n", f"age: {value}\n")
    persona.write_bytes(persona.read_bytes().replace(b"\n", ending.encode()))
    error = load_error(world_path, personas_dir)
    assert (error.file, error.place, error.problem) == (str(persona), "line 2, column 6", problem)


@pytest.mark.parametrize("command", [["check"], ["sim", "--hours", "0.1", "--quiet"]])
def test_the_cli_reports_a_wrongly_tagged_value_in_one_line(town, tmp_path, capsys,
                                                            command) -> None:
    from townbot.cli import main
    world_path, personas_dir = town
    persona = personas_dir / "isabella_rodriguez.yaml"
    replace_once(persona, "age: 34\n", "age: !!int twelve\n")
    before = persona.read_bytes()
    db = tmp_path / "town.db"
    extra = ["--db", str(db)] if command[0] == "sim" else []
    code = main([*command, "--world", str(world_path), "--personas", str(personas_dir), *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{persona}: line 2, column 6: 'twelve' (tagged !!int) is not an integer" in err
    assert "Traceback" not in err and "ValueError" not in err
    assert persona.read_bytes() == before and not db.exists()
