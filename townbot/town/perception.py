"""Perception: what each resident can see and hear in its arena this tick.

Others in the same arena and objects whose state is out of the ordinary, nearest first, capped
by an attention bandwidth (the original kept a handful of events per step). Each sighting says
whether a person could be talked to and whether an object's state is someone's doing.
"""

from __future__ import annotations

from bisect import bisect_left

from townbot.mind.reacting import Sighting
from townbot.prompting import PeopleText, quoted_name
from townbot.town.body import Body
from townbot.world.model import World, split_path

ATTENTION_BANDWIDTH = 8
STATE_LIMIT = 80  # characters of an object's state (the town service's limit)
SIGHTINGS_KEPT = 4096  # sightings made before, by what they are made of (see seen_person)


def is_free_to_talk(body: Body) -> bool:
    return not body.walking and body.action != "sleeping" and not body.action.startswith(
        "talking with")


def shown(name: str, body: Body) -> str:
    """How a person appears to minds: a resident by name; a visitor, whose name a person chose,
    only quoted and bounded, like all people's text. Minds keep that form (in memories, plans,
    whom they talked with); the engine maps it back when a mind asks to talk."""
    return quoted_name(name) if body.visitor is not None else name


def describe(name: str, body: Body) -> str:
    if body.visitor is not None:  # a person's own words reach prompts only quoted and bounded
        return f"{shown(name, body)}, a visitor ({PeopleText(body.visitor, 120)}), is {body.action}"
    return f"{name} is {body.action}"


# People are seen doing what they did at an earlier tick, and objects in the states they were
# in (at 100 residents about a third of the people in view and half the unusual objects): a
# sighting, frozen, is made once and shared. Each key holds everything its sighting is made
# of; a table is emptied when full.
_people_seen: dict[tuple[str, str, str | None, bool], Sighting] = {}
_things_seen: dict[tuple[str, str, str, bool], Sighting] = {}


def seen_person(name: str, body: Body) -> Sighting:
    """How a person appears to those in the same arena."""
    key = (name, body.action, body.visitor, body.travel_sector is None)
    sighting = _people_seen.get(key)
    if sighting is None:
        if len(_people_seen) >= SIGHTINGS_KEPT:
            _people_seen.clear()
        sighting = _people_seen[key] = Sighting(describe(name, body), "agent", shown(name, body),
                                                body.action, available=is_free_to_talk(body))
    return sighting


def seen_thing(path: str, state: str, room: str, attended: bool) -> Sighting:
    """How an object in an unusual state appears to those in its room ('the kitchen', or
    "Maria's room"); `attended`: someone there is using it in that state."""
    key = (path, state, room, attended)
    sighting = _things_seen.get(key)
    if sighting is None:
        if len(_things_seen) >= SIGHTINGS_KEPT:
            _things_seen.clear()
        # A state may be a person's words (/object set), so every state is shown quoted.
        text = f"The {split_path(path)[2]} in {room} is {PeopleText(state, STATE_LIMIT)}"
        sighting = _things_seen[key] = Sighting(text, "object", path, state, attended=attended)
    return sighting


def perceive(name: str, bodies: dict[str, Body], objects: dict[str, str], world: World,
             defaults: dict[str, str], bandwidth: int = ATTENTION_BANDWIDTH) -> list[Sighting]:
    """One resident's perception (the engine gathers a Scene once per tick instead)."""
    return Scene(bodies, objects, defaults).perceive(name, bandwidth)


class Scene:
    """Who and what is where this tick, gathered once for all perceivers: people by arena
    (by name) and the out-of-the-ordinary objects (by path). What an arena shows is worked out
    once, by the first of its perceivers; each perceiver then takes it minus itself."""

    def __init__(self, bodies: dict[str, Body], objects: dict[str, str],
                 defaults: dict[str, str]) -> None:
        self.bodies = bodies
        self.objects = objects
        self.people: dict[tuple[str | None, str | None], list[tuple[str, Body]]] = {}
        for other, body in sorted(bodies.items()):
            self.people.setdefault((body.sector, body.arena), []).append((other, body))
        self.unusual = sorted(path for path, state in objects.items()
                              if state != defaults.get(path))
        self._views: dict[tuple[str, str], ArenaView] = {}

    def _view(self, sector: str, arena: str) -> ArenaView:
        view = self._views.get((sector, arena))
        if view is None:
            view = self._views[sector, arena] = ArenaView(
                self.people.get((sector, arena), []), self.objects, self.unusual, sector, arena)
        return view

    def perceive(self, name: str, bandwidth: int = ATTENTION_BANDWIDTH) -> list[Sighting]:
        me = self.bodies[name]
        if me.walking or me.sector is None:
            return []
        view = self._view(me.sector, me.arena)
        seen = view.people_but(name, bandwidth)
        for path, state, sighting in view.things:
            if len(seen) == bandwidth:
                break
            if path == me.object_path and state == me.object_state:
                continue  # what we use ourselves is no news to us
            seen.append(sighting)
        return seen


def _starting_with(ordered: list[str], prefix: str) -> list[str]:
    """The texts of a sorted list that start with `prefix`, in order: they lie together, from
    where the prefix itself would be inserted (each arena's objects, found without reading
    every unusual object of the town)."""
    first = last = bisect_left(ordered, prefix)
    while last < len(ordered) and ordered[last].startswith(prefix):
        last += 1
    return ordered[first:last]


class ArenaView:
    """What everyone in one arena sees this tick: its people (by name) and its unusual
    objects, nearest first, as sightings shared by all who see them."""

    def __init__(self, here: list[tuple[str, Body]], objects: dict[str, str],
                 unusual: list[str], sector: str, arena: str) -> None:
        self.names = {other: index for index, (other, _) in enumerate(here)}
        self.people = [seen_person(other, body) for other, body in here]
        prefix = f"{sector}: {arena}: "
        in_use = {(body.object_path, body.object_state) for _, body in here}
        room = arena if "'s " in arena else f"the {arena}"
        self.things: list[tuple[str, str, Sighting]] = []
        for path in _starting_with(unusual, prefix):
            state = objects[path]
            self.things.append((path, state, seen_thing(path, state, room, (path, state) in in_use)))

    def people_but(self, name: str, bandwidth: int) -> list[Sighting]:
        """The people here other than `name`, at most `bandwidth` of them."""
        mine = self.names.get(name)
        if mine is None or mine >= bandwidth:
            return self.people[:bandwidth]
        return self.people[:mine] + self.people[mine + 1:bandwidth + 1]
