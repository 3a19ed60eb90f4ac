"""Perception: what each resident sees in its arena this tick (`Scene.perceive`), capped by an
attention bandwidth (the original kept a handful of events per step). Trouble (something
burning or leaking) reaches the whole building: a kitchen fire is smelled from the common room.
"""

from __future__ import annotations

from townbot.mind.reacting import Sighting
from townbot.prompting import PeopleText, quoted_name
from townbot.town.body import Body
from townbot.town.mishaps import is_alarming

ATTENTION_BANDWIDTH = 8
STATE_LIMIT = 80  # characters of an object's state (the town service's limit)


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


class Scene:
    """Who and what is where this tick, gathered once for all perceivers: people by arena
    (in order of name) and the objects whose state is out of the ordinary (in order of path)."""

    def __init__(self, bodies: dict[str, Body], objects: dict[str, str],
                 defaults: dict[str, str]) -> None:
        self.bodies = bodies
        self.objects = objects
        self.people: dict[tuple[str | None, str | None], list[tuple[str, Body]]] = {}
        for other, body in sorted(bodies.items()):
            self.people.setdefault((body.sector, body.arena), []).append((other, body))
        self.unusual = sorted(path for path, state in objects.items()
                              if state != defaults.get(path))

    def perceive(self, name: str, bandwidth: int = ATTENTION_BANDWIDTH) -> list[Sighting]:
        """What `name` sees: the others in its arena, then the arena's unusual objects and
        trouble anywhere in its building (but not the object it uses itself, in the state it
        put it in), at most `bandwidth` in all."""
        me = self.bodies[name]
        if me.walking or me.sector is None:
            return []
        here = self.people.get((me.sector, me.arena), [])
        seen = [Sighting(describe(other, body), "agent", shown(other, body), body.action,
                         available=is_free_to_talk(body))
                for other, body in here if other != name][:bandwidth]
        in_use = {(body.object_path, body.object_state) for body in self.bodies.values()}
        building = f"{me.sector}: "
        for path in self.unusual:
            state = self.objects[path]
            if len(seen) == bandwidth:
                break
            if not path.startswith(building) or (path == me.object_path and state == me.object_state):
                continue  # elsewhere, or what we use ourselves: no news to us
            arena, _, thing = path[len(building):].rpartition(": ")
            in_room = path.startswith(f"{building}{me.arena}: ")
            if not in_room and not is_alarming(state):
                continue  # another room's ordinary state is out of sight
            if in_room:
                arena = me.arena
            room = arena if "'s " in arena else f"the {arena}"
            # A state may be a person's words (/object set), so every state is shown quoted.
            text = f"The {thing} in {room} is {PeopleText(state, STATE_LIMIT)}"
            seen.append(Sighting(text, "object", path, state, attended=(path, state) in in_use))
        return seen
