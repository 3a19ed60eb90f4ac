"""Acting in the world (paper 4.3 / 5.1): choose where an action happens from the agent's own
known tree of places; the object comes with each planned step.

The paper descends the tree one level per prompt (sector, then arena). Here one prompt offers
every known place with its areas and the answer names both: the same choice from the same
tree for half the calls (docs/architecture.md, deviations). A choice the world cannot take (a
closed shop, an occupied one-person bathroom) is refused by the availability check and the
agent chooses again; after that the safe default is taken.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from townbot.llm.port import Ask, LanguageModel
from townbot.llm.purposes import PlaceAndArea, place_and_area_among
from townbot.prompting import render
from townbot.world.clock import clock_face
from townbot.world.model import Persona

# (sector, arena or None) -> why it cannot be entered now, or None when it can.
Availability = Callable[[str, str | None], str | None]
Spot = tuple[str, str]  # (sector, arena)


def _problem(answer: PlaceAndArea, known: dict[str, list[str]],
             available: Availability) -> str | None:
    if answer.place not in known:
        return f"'{answer.place}' is not one of the places: {', '.join(sorted(known))}"
    areas = known[answer.place]
    if answer.area not in areas:
        return f"'{answer.area}' is not an area of {answer.place}: {', '.join(areas)}"
    return available(answer.place, answer.area)


def _fallback(preferred: list[Spot | None], known: dict[str, list[str]],
              available: Availability) -> PlaceAndArea:
    """The first preferred spot that is open, else any open spot, else the first preferred."""
    spots = [(sector, arena) for sector in sorted(known) for arena in known[sector]]
    wanted = [s for s in preferred if s is not None and s[0] in known and s[1] in known[s[0]]]
    for sector, arena in [*wanted, *spots]:
        if available(sector, arena) is None:
            return PlaceAndArea(place=sector, area=arena)
    sector, arena = (wanted or spots)[0]
    return PlaceAndArea(place=sector, area=arena)


def places_text(known: dict[str, list[str]]) -> str:
    """'Hobbs Cafe (areas: cafe, kitchen); Johnson Park (areas: park)'."""
    return "; ".join(f"{sector} (areas: {', '.join(known[sector])})" for sector in sorted(known))


async def choose_place(model: LanguageModel, persona: Persona, activity: str, now: datetime,
                       known: dict[str, list[str]], current: Spot, hint: Spot,
                       norms: dict[str, str], availability: Availability) -> Spot:
    """Where an activity happens: a known place and one of its areas, in one call (none when
    only one area is known). `current` is where the agent is, `hint` its routine's place."""
    known = {sector: arenas for sector, arenas in known.items() if arenas}
    spots = [(sector, arena) for sector in sorted(known) for arena in known[sector]]
    if len(spots) == 1:
        return spots[0]
    prompt = render("choose_place", time=clock_face(now.hour * 60 + now.minute),
                    first_name=persona.first_name, activity=activity,
                    current=f"{current[0]}: {current[1]}", home=persona.home_sector,
                    places=places_text(known),
                    norms=" ".join(norms[s] for s in sorted(known) if norms.get(s)) or "none")
    answer = await model.ask(Ask(
        purpose="choose_place", prompt=prompt, agent=persona.name,
        schema=place_and_area_among(tuple(sorted(known)),
                                    tuple(sorted({a for arenas in known.values() for a in arenas}))),
        context={"activity": activity, "places": known, "hint": list(hint),
                 "current": list(current)},
        check=lambda a: _problem(a, known, availability),
        default=lambda: _fallback([hint, current, (persona.home_sector, persona.home_arena)],
                                  known, availability)))
    return answer.place, answer.area
