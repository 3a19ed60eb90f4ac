"""Perception: what each resident can see and hear in its arena this tick.

Others in the same arena and objects whose state is out of the ordinary, nearest first, capped
by an attention bandwidth (the original kept a handful of events per step).
"""

from __future__ import annotations

from townbot.town.body import Body
from townbot.world.model import World, split_path

ATTENTION_BANDWIDTH = 8


def perceive(name: str, bodies: dict[str, Body], objects: dict[str, str], world: World,
             defaults: dict[str, str], bandwidth: int = ATTENTION_BANDWIDTH) -> list[str]:
    me = bodies[name]
    if me.walking or me.sector is None:
        return []
    seen: list[str] = []
    for other in sorted(bodies):
        body = bodies[other]
        if other != name and body.sector == me.sector and body.arena == me.arena:
            seen.append(f"{other} is {body.action}")
    prefix = f"{me.sector}: {me.arena}: "
    for path in sorted(objects):
        if path.startswith(prefix) and objects[path] != defaults.get(path):
            obj = split_path(path)[2]
            seen.append(f"The {obj} in the {me.arena} is {objects[path]}")
    return seen[:bandwidth]
