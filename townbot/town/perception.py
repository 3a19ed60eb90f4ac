"""Perception: what each resident can see and hear in its arena this tick.

Others in the same arena and objects whose state is out of the ordinary, nearest first, capped
by an attention bandwidth (the original kept a handful of events per step). Each sighting says
whether a person could be talked to and whether an object's state is someone's doing.
"""

from __future__ import annotations

from townbot.mind.reacting import Sighting
from townbot.prompting import quoted, quoted_name
from townbot.town.body import Body
from townbot.world.model import World, split_path

ATTENTION_BANDWIDTH = 8


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
        return f"{shown(name, body)}, a visitor ({quoted(body.visitor, 120)}), is {body.action}"
    return f"{name} is {body.action}"


def perceive(name: str, bodies: dict[str, Body], objects: dict[str, str], world: World,
             defaults: dict[str, str], bandwidth: int = ATTENTION_BANDWIDTH) -> list[Sighting]:
    me = bodies[name]
    if me.walking or me.sector is None:
        return []
    here = [(other, body) for other, body in sorted(bodies.items())
            if body.sector == me.sector and body.arena == me.arena]
    seen = [Sighting(describe(other, body), "agent", shown(other, body), body.action,
                     available=is_free_to_talk(body)) for other, body in here if other != name]
    in_use = {(body.object_path, body.object_state) for _, body in here}
    prefix = f"{me.sector}: {me.arena}: "
    room = me.arena if "'s " in me.arena else f"the {me.arena}"
    for path in sorted(objects):
        mine = path == me.object_path and objects[path] == me.object_state
        if path.startswith(prefix) and objects[path] != defaults.get(path) and not mine:
            obj = split_path(path)[2]
            seen.append(Sighting(f"The {obj} in {room} is {objects[path]}", "object",
                                 path, objects[path], attended=(path, objects[path]) in in_use))
    return seen[:bandwidth]
