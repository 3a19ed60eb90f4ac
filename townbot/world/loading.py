"""Load world.yaml and personas/ into the world model, or stop with one precise DataError."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from townbot.text import clean_tree
from townbot.world.clock import parse_clock, parse_game_time
from townbot.world.errors import DataError, format_location
from townbot.world.model import (
    Arena,
    GameObject,
    OpeningHours,
    Persona,
    RoutineStep,
    Sector,
    SectorLayout,
    World,
    split_path,
)
from townbot.world.paths import Street, StreetMap
from townbot.world.specs import PersonaSpec, SectorSpec, WorldSpec

SpecT = TypeVar("SpecT", bound=BaseModel)


def closest(name: str, options: list[str]) -> str:
    """' (did you mean X?)' when a close name exists, for error messages."""
    matches = difflib.get_close_matches(name, options, n=2, cutoff=0.5)
    return f" (did you mean {' or '.join(repr(m) for m in matches)}?)" if matches else ""


class MarkedProblem(yaml.YAMLError):
    """A document that parses but cannot be read as written; the message says why in full."""

    def __init__(self, problem: str, mark: yaml.Mark) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


# The shipped world is 29 KB. PyYAML's own parser (used for a text with a tab, '?' or a carriage
# return) reads about 150 KB a second on a loaded machine, libyaml ten times as much.
MAX_DATA_FILE_BYTES = 256_000


def refuse_sharing(event: yaml.Event) -> None:
    """Anchors (`&name`) and aliases (`*name`) are refused where the parser meets them: seven
    nested aliases in 300 bytes expand to a billion values, and no town file needs them."""
    if isinstance(event, yaml.AliasEvent):
        shared = f"alias '*{event.anchor}'"
    elif getattr(event, "anchor", None):
        shared = f"anchor '&{event.anchor}'"
    else:
        return
    raise MarkedProblem(f"uses the YAML {shared}; anchors and aliases are not allowed in town "
                        "files, write the value out in full", event.start_mark)


class StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, except that a key written twice in one mapping is an error (plain
    PyYAML lets the last one win silently: `age: 36` then `age: 99` gives 99), and anchors and
    aliases are refused as they are composed."""

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        refuse_sharing(self.peek_event())
        return super().compose_node(parent, index)


class FastStrictLoader(getattr(yaml, "CSafeLoader", StrictLoader)):  # type: ignore[misc]
    """StrictLoader over libyaml's parser, when PyYAML was built with it: the town loads in a
    tenth of the time (half a second less at every start). libyaml composes in C, so
    `parse_yaml` looks at its events first when the text could hold an anchor or an alias."""


# Where libyaml and PyYAML's own parser disagree, libyaml reads documents that PyYAML refuses: a
# tab between tokens, '?' inside a flow collection (found by comparing the two on thousands of
# mutated world and persona files). A document with either, or with a carriage return to be
# safe, is read by PyYAML alone, so the answer stays PyYAML's.
PYYAML_ONLY = ("\t", "?", "\r")


def _mapping_without_duplicates(loader: StrictLoader, node: yaml.Node,
                                deep: bool = False) -> dict:
    if not isinstance(node, yaml.MappingNode):  # `!!map text`: flatten_mapping would crash
        raise MarkedProblem(f"tagged !!map but is a {node.id}; write a mapping or remove the "
                            "tag", node.start_mark)
    loader.flatten_mapping(node)
    seen: dict[object, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        line = key_node.start_mark.line + 1
        try:
            first = seen.setdefault(key, line)
        except TypeError:  # an unhashable key: construct_mapping says so itself
            continue
        if first != line:
            raise MarkedProblem(f"key '{key}' is written twice in one mapping, on line {first} "
                                f"and on line {line}; keep one", key_node.start_mark)
    return loader.construct_mapping(node, deep=deep)


# What a scalar of each kind must be; PyYAML's constructors fail on anything else with a bare
# ValueError, KeyError, IndexError or AttributeError (`!!int twelve`, `!!bool maybe`, 2023-02-30).
SCALAR_KINDS = {"int": "an integer", "float": "a number", "bool": "true or false",
                "timestamp": "a date (YYYY-MM-DD) or a date and time"}


def _checked_scalar(kind: str, construct: Callable) -> Callable:
    """The loader's constructor for `kind`, turning its failure into a MarkedProblem at the
    value's place."""
    def construct_or_explain(loader: StrictLoader, node: yaml.ScalarNode) -> object:
        try:
            return construct(loader, node)
        except (ValueError, KeyError, IndexError, AttributeError) as error:
            implicit = node.style is None and \
                loader.resolve(yaml.ScalarNode, node.value, (True, False)) == node.tag
            fix = "quote it to keep it as text" if implicit else "write one or remove the tag"
            tagged = "" if implicit else f" (tagged !!{kind})"
            raise MarkedProblem(f"'{node.value}'{tagged} is not {SCALAR_KINDS[kind]}; {fix}",
                                node.start_mark) from error
    return construct_or_explain


for _loader in (StrictLoader, FastStrictLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                            _mapping_without_duplicates)
    for _kind in SCALAR_KINDS:
        _tag = f"tag:yaml.org,2002:{_kind}"
        _loader.add_constructor(_tag, _checked_scalar(_kind, yaml.SafeLoader.yaml_constructors[_tag]))


def parse_yaml(text: str) -> object:
    """The document in `text`, read safely (no Python objects) and strictly (no key twice), as
    PyYAML's own parser reads it: by libyaml when the text has none of the characters where the
    two differ; anything libyaml refuses is read again by PyYAML, whose answer or error counts.
    Anchors and aliases are refused before anything is composed."""
    if "&" in text or "*" in text:
        try:
            for event in yaml.parse(text, Loader=FastStrictLoader):
                refuse_sharing(event)
        except MarkedProblem:
            raise
        except yaml.YAMLError:
            pass  # PyYAML's own composer refuses what libyaml could not read this far
    if not any(character in text for character in PYYAML_ONLY):
        try:
            return yaml.load(text, Loader=FastStrictLoader)
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=StrictLoader)


def read_text(path: Path) -> str:
    """A data file's text, or one DataError line when it is missing, unreadable, too large,
    binary or not UTF-8."""
    try:
        with path.open("rb") as file:  # never more than the limit and one byte, however big
            data = file.read(MAX_DATA_FILE_BYTES + 1)
    except FileNotFoundError as error:
        raise DataError(str(path), "", "file not found") from error
    except IsADirectoryError as error:
        raise DataError(str(path), "", "is a folder, not a file") from error
    except OSError as error:
        raise DataError(str(path), "", f"cannot be read ({error.strerror})") from error
    if len(data) > MAX_DATA_FILE_BYTES:
        raise DataError(str(path), "", f"is larger than a town file may be ({MAX_DATA_FILE_BYTES:,} "
                        "bytes); trim it")
    if b"\x00" in data:
        raise DataError(str(path), "", "is a binary file, not YAML text; give a text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise DataError(str(path), f"line {line}", "is not UTF-8 text (byte "
                        f"0x{data[error.start]:02x}); save the file as UTF-8") from error


def read_yaml(path: Path, spec: type[SpecT]) -> SpecT:
    text = read_text(path)
    try:
        raw = parse_yaml(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        place = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or "invalid YAML"
        prefix = "" if isinstance(error, MarkedProblem) else "YAML syntax error: "
        raise DataError(str(path), place, prefix + problem) from error
    if not isinstance(raw, dict):
        raise DataError(str(path), "(top level)", "expected a mapping of keys to values")
    raw = clean_tree(raw)  # text from files is people's text too
    try:
        return spec.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        place = format_location(first["loc"])
        named = _name_at(raw, first["loc"])
        message = first["msg"].replace("Field required", "missing field")
        if first["type"] == "extra_forbidden":
            message = f"unknown field; allowed fields are {', '.join(_allowed(spec, first['loc']))}"
        raise DataError(str(path), place + named, message) from error


def _name_at(raw: object, loc: tuple) -> str:
    """Name the sector/arena an error sits in, so a person can find it without counting."""
    names = []
    node = raw
    for part in loc:
        try:
            node = node[part]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict) and isinstance(node.get("name"), str):
            names.append(node["name"])
    return f" ({' > '.join(names)})" if names else ""


def _allowed(spec: type[BaseModel], loc: tuple) -> list[str]:
    model: type[BaseModel] = spec
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        annotation = model.model_fields[part].annotation
        inner = getattr(annotation, "__args__", (annotation,))[0]
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            model = inner
    return [field.alias or name for name, field in model.model_fields.items()]


def load_world(world_path: Path | str, personas_dir: Path | str | None = None) -> World:
    """Read and cross-check the town and (optionally) its residents."""
    world_path = Path(world_path)
    spec = read_yaml(world_path, WorldSpec)
    file = str(world_path)
    try:
        parse_game_time(spec.start)
    except ValueError as error:
        raise DataError(file, "start", f"'{spec.start}' is not a date and time; write "
                                      "'YYYY-MM-DD HH:MM'") from error
    streets = StreetMap([Street(s.name, s.start, s.end) for s in spec.streets])
    for index, street in enumerate(spec.streets):
        (x1, y1), (x2, y2) = street.start, street.end
        if x1 != x2 and y1 != y2:
            raise DataError(file, f"streets[{index}] ({street.name})",
                            "a street must be straight: keep x or y the same at both ends")
    sectors = _build_sectors(file, spec, streets)
    world = World(town=spec.town, start=spec.start, tick_minutes=spec.tick_minutes,
                  minutes_per_block=spec.minutes_per_block,
                  town_hall_channel=spec.town_hall_channel, sectors=sectors, streets=streets)
    if personas_dir is not None:
        world.personas = load_personas(Path(personas_dir), world)
        _check_staff(file, spec, world)
    return world


def _build_sectors(file: str, spec: WorldSpec, streets: StreetMap) -> dict[str, Sector]:
    sectors: dict[str, Sector] = {}
    channels: dict[str, str] = {spec.town_hall_channel: "the town hall"}
    entrances: dict[tuple[int, int], str] = {}
    names = [sector.name for sector in spec.sectors]
    for index, sector in enumerate(spec.sectors):
        place = f"sectors[{index}] ({sector.name})"
        if sector.name in sectors:
            raise DataError(file, place, f"duplicate sector name '{sector.name}', first at "
                                         f"sectors[{names.index(sector.name)}]; rename one")
        if sector.channel in channels:
            raise DataError(file, place + ".channel",
                            f"channel '{sector.channel}' is already used by {channels[sector.channel]}")
        if not streets.on_street(sector.entrance):
            raise DataError(file, place + ".entrance",
                            f"{list(sector.entrance)} is not on any street; put the entrance on a "
                            "grid point of one of the streets")
        if sector.entrance in entrances:
            raise DataError(file, place + ".entrance",
                            f"{list(sector.entrance)} is already the entrance of "
                            f"{entrances[sector.entrance]}")
        channels[sector.channel] = sector.name
        entrances[sector.entrance] = sector.name
        sectors[sector.name] = _build_sector(file, place, sector)
    first = spec.sectors[0].entrance
    for index, sector in enumerate(spec.sectors):
        if not streets.reachable(first, sector.entrance):
            raise DataError(file, f"sectors[{index}] ({sector.name}).entrance",
                            f"no street connects it to {spec.sectors[0].name}; join the streets")
    return sectors


def _build_sector(file: str, place: str, spec: SectorSpec) -> Sector:
    arenas: dict[str, Arena] = {}
    arena_names = [arena.name for arena in spec.arenas]
    for a_index, arena in enumerate(spec.arenas):
        arena_place = f"{place}.arenas[{a_index}] ({arena.name})"
        if arena.name in arenas:
            raise DataError(file, arena_place, f"duplicate arena name '{arena.name}', first at "
                                               f"{place}.arenas[{arena_names.index(arena.name)}]; "
                                               "rename one")
        objects: dict[str, GameObject] = {}
        object_names = [obj.name for obj in arena.objects]
        for o_index, obj in enumerate(arena.objects):
            if obj.name in objects:
                raise DataError(file, f"{arena_place}.objects[{o_index}]",
                                f"duplicate object name '{obj.name}' in this arena, first at "
                                f"objects[{object_names.index(obj.name)}]; rename one")
            objects[obj.name] = GameObject(obj.name, obj.state)
        arenas[arena.name] = Arena(arena.name, objects, arena.capacity)
    hours = None
    if spec.hours:
        opens, _, closes = spec.hours.partition("-")
        hours = OpeningHours(parse_clock(opens), parse_clock(closes))
        if hours.opens == hours.closes:
            raise DataError(file, place + ".hours", "opening and closing times are the same")
    return Sector(name=spec.name, kind=spec.kind, channel=spec.channel, entrance=spec.entrance,
                  arenas=arenas, description=spec.description, norms=tuple(spec.norms),
                  hours=hours, staff=frozenset(spec.staff),
                  layout=SectorLayout(**spec.layout.model_dump()) if spec.layout else SectorLayout())


def _check_staff(file: str, spec: WorldSpec, world: World) -> None:
    for index, sector in enumerate(spec.sectors):
        for person in sector.staff:
            if person not in world.personas:
                raise DataError(file, f"sectors[{index}] ({sector.name}).staff",
                                f"'{person}' is not a resident{closest(person, list(world.personas))}")


def load_personas(directory: Path, world: World) -> dict[str, Persona]:
    if not directory.is_dir():
        raise DataError(str(directory), "", "persona folder not found")
    personas: dict[str, Persona] = {}
    for path in sorted(directory.glob("*.yaml")):
        persona = load_persona(path, world)
        if persona.name in personas:
            raise DataError(str(path), "name", f"duplicate resident name '{persona.name}', "
                                               f"also in {personas[persona.name].source}")
        personas[persona.name] = persona
    if not personas:
        raise DataError(str(directory), "", "no persona files (*.yaml) found")
    return personas


def _resolve_arena(file: str, place: str, path: str, world: World) -> tuple[str, str]:
    parts = split_path(path)
    if len(parts) != 2:
        raise DataError(file, place, f"'{path}' is not a place; write 'Sector: arena'")
    sector, arena = parts
    if sector not in world.sectors:
        raise DataError(file, place, f"unknown sector '{sector}'{closest(sector, list(world.sectors))}")
    arenas = list(world.sectors[sector].arenas)
    if arena not in arenas:
        raise DataError(file, place, f"'{sector}' has no arena '{arena}'{closest(arena, arenas)}; "
                                     f"its arenas are {', '.join(arenas)}")
    return sector, arena


def load_persona(path: Path, world: World) -> Persona:
    spec = read_yaml(path, PersonaSpec)
    file = str(path)
    home_sector, home_arena = _resolve_arena(file, "home", spec.home, world)
    if "bed" not in world.arena(home_sector, home_arena).objects:
        raise DataError(file, "home", f"'{spec.home}' has no bed; a home must be where the "
                                      "resident sleeps")
    work = _resolve_arena(file, "work", spec.work, world) if spec.work else (None, None)
    for index, sector in enumerate(spec.knows_places):
        if sector not in world.sectors:
            raise DataError(file, f"knows_places[{index}]",
                            f"unknown sector '{sector}'{closest(sector, list(world.sectors))}")
    wakes, sleeps = parse_clock(spec.lifestyle.wakes), parse_clock(spec.lifestyle.sleeps)
    if sleeps <= wakes:
        raise DataError(file, "lifestyle.sleeps", f"bedtime {spec.lifestyle.sleeps} is not after "
                                                   f"waking time {spec.lifestyle.wakes}; bedtime "
                                                   "must be later the same day (up to 23:59)")
    routine = _build_routine(file, spec, world, wakes, sleeps)
    return Persona(name=spec.name, age=spec.age, traits=tuple(spec.traits),
                   background=" ".join(spec.background.split()),
                   currently=" ".join(spec.currently.split()), wakes=wakes, sleeps=sleeps,
                   home_sector=home_sector, home_arena=home_arena, routine=routine,
                   seed_memories=tuple(" ".join(m.split()) for m in spec.memories),
                   work_sector=work[0], work_arena=work[1],
                   known_places=tuple(spec.knows_places), source=file, avatar=spec.avatar)


def _build_routine(file: str, spec: PersonaSpec, world: World, wakes: int,
                   sleeps: int) -> tuple[RoutineStep, ...]:
    steps: list[RoutineStep] = []
    for index, entry in enumerate(spec.routine):
        minute = parse_clock(entry.at)
        place = f"routine[{index}]"
        if steps and minute <= steps[-1].minute:
            raise DataError(file, place + ".at", f"{entry.at} is not after the previous step; "
                                                 "routine times must go strictly forward")
        if steps and minute - steps[-1].minute < 5:
            raise DataError(file, place + ".at", f"{entry.at} is less than 5 minutes after the "
                                                 "previous step; steps need at least 5 minutes")
        if not wakes <= minute <= sleeps:
            raise DataError(file, place + ".at", f"{entry.at} is outside the waking day "
                                                 f"({spec.lifestyle.wakes} to {spec.lifestyle.sleeps})")
        sector, arena = _resolve_arena(file, place + ".where", entry.where, world)
        steps.append(RoutineStep(minute, " ".join(entry.do.split()), sector, arena))
    if steps[0].minute != wakes:
        raise DataError(file, "routine[0].at", f"the routine must start when the resident wakes "
                                               f"({spec.lifestyle.wakes})")
    return tuple(steps)


# --- a smaller town -------------------------------------------------------------------------


def select_residents(world: World, choice: str) -> World:
    """The world with only some residents, for a cheap trial: `choice` is a number (that many
    residents who know each other best) or names separated by commas (full or first names).
    Staff lists keep only residents in the town; seed memories about absent people stay, as
    memories of neighbours who happen to be away."""
    everyone = world.personas
    text = choice.strip()
    if text.isdigit():
        count = int(text)
        if not 1 <= count <= len(everyone):
            raise DataError("--residents", text, f"choose between 1 and {len(everyone)} residents")
        names = closest_knit(everyone, count)
    else:
        names = [_resident_named(part, everyone) for part in text.split(",") if part.strip()]
        if not names:
            raise DataError("--residents", text, "name at least one resident, e.g. "
                                                 "--residents 'Isabella Rodriguez, Klaus Mueller'")
    chosen = {name: everyone[name] for name in sorted(set(names))}
    sectors = {name: replace(sector, staff=frozenset(p for p in sector.staff if p in chosen))
               for name, sector in world.sectors.items()}
    return replace(world, personas=chosen, sectors=sectors)


def _resident_named(text: str, everyone: dict[str, Persona]) -> str:
    wanted = " ".join(text.split()).lower()
    for name in everyone:
        if name.lower() == wanted:
            return name
    firsts = [name for name in everyone if name.split()[0].lower() == wanted]
    if len(firsts) == 1:
        return firsts[0]
    raise DataError("--residents", text.strip(), f"no such resident{closest(text.strip(), list(everyone))}")


def closest_knit(everyone: dict[str, Persona], count: int) -> list[str]:
    """`count` residents who know each other: start from the one whose name the others' seed
    memories mention most, then add whoever is linked most to those already chosen."""
    links = {name: {other for other in everyone if other != name and _mentions(everyone[name], other)}
             for name in everyone}

    def ties(name: str, group: set[str]) -> int:
        return sum((other in links[name]) + (name in links[other]) for other in group)

    start = max(sorted(everyone), key=lambda n: sum(n in links[o] for o in everyone))
    group = {start}
    while len(group) < count:
        group.add(max(sorted(set(everyone) - group), key=lambda n: ties(n, group)))
    return sorted(group)


def _mentions(persona: Persona, other: str) -> bool:
    first = other.split()[0]
    return any(other in memory or first in memory for memory in persona.seed_memories)
