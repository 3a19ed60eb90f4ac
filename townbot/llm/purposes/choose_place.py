"""purpose 'choose_place' (paper 4.3 / 5.1): where an activity happens, a known place and one of
its areas, in one call from the resident's own tree of places.

Offline: the place the activity names, else the routine's, else where the resident is, else the
one whose name shares the activity's words; then the area the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from pydantic import BaseModel, create_model

from townbot.llm.embedding import keywords
from townbot.llm.purposes.common import SCHEMAS_KEPT, Line, Question, choice_of
from townbot.prompting import render
from townbot.world.clock import clock_face, minute_of_day
from townbot.world.model import Persona

# (sector, arena or None) -> why it cannot be entered now, or None when it can.
Availability = Callable[[str, str | None], str | None]
Spot = tuple[str, str]  # (sector, arena)


class PlaceChoice(BaseModel):
    """One of the offered names (the simplest schema: the model layer's tests use it)."""

    choice: Line


class PlaceAndArea(BaseModel):
    place: Line
    area: Line


@lru_cache(maxsize=SCHEMAS_KEPT)
def place_and_area_among(places: tuple[str, ...], areas: tuple[str, ...]) -> type[PlaceAndArea]:
    """PlaceAndArea naming one of `places` and one of `areas` (which area belongs to which
    place is still the question's check)."""
    place, area = choice_of(places), choice_of(areas)
    if place is None or area is None:
        return PlaceAndArea
    return create_model("PlaceAndArea", __base__=PlaceAndArea, place=(place, ...), area=(area, ...))


def places_text(known: Mapping[str, Sequence[str]]) -> str:
    """'Hobbs Cafe (areas: cafe, kitchen); Johnson Park (areas: park)'."""
    return "; ".join(f"{sector} (areas: {', '.join(known[sector])})" for sector in sorted(known))


def open_to_anyone(sector: str, arena: str | None) -> str | None:
    return None


@dataclass(frozen=True)
class PlaceQuestion(Question[PlaceAndArea]):
    """Where `persona` does `activity` at `now`, among the places it knows (`known`: place ->
    areas, each with at least one), from where it is (`current`) with its routine's place as a
    `hint`; `norms` are the places' house rules, `available` says why a spot cannot be entered
    now (a closed shop, an occupied one-person bathroom)."""

    purpose = "choose_place"
    persona: Persona
    activity: str
    now: datetime
    known: Mapping[str, Sequence[str]]
    current: Spot
    hint: Spot
    norms: Mapping[str, str] = field(default_factory=dict)
    available: Availability = open_to_anyone

    def prompt(self) -> str:
        known = self.known
        return render("choose_place", time=clock_face(minute_of_day(self.now)),
                      first_name=self.persona.first_name, activity=self.activity,
                      current=f"{self.current[0]}: {self.current[1]}",
                      home=self.persona.home_sector, places=places_text(known),
                      norms=" ".join(self.norms[s] for s in sorted(known) if self.norms.get(s))
                      or "none")

    def schema(self) -> type[PlaceAndArea]:
        known = self.known
        return place_and_area_among(tuple(sorted(known)),
                                    tuple(sorted({a for arenas in known.values() for a in arenas})))

    def problem(self, answer: PlaceAndArea) -> str | None:
        known = self.known
        if answer.place not in known:
            return f"'{answer.place}' is not one of the places: {', '.join(sorted(known))}"
        areas = known[answer.place]
        if answer.area not in areas:
            return f"'{answer.area}' is not an area of {answer.place}: {', '.join(areas)}"
        return self.available(answer.place, answer.area)

    def default(self) -> PlaceAndArea:
        """The first preferred spot that is open (the routine's, the current one, home), else
        any open spot, else the first preferred."""
        known, persona = self.known, self.persona
        spots = [(sector, arena) for sector in sorted(known) for arena in known[sector]]
        preferred = [self.hint, self.current, (persona.home_sector, persona.home_arena)]
        wanted = [s for s in preferred if s[0] in known and s[1] in known[s[0]]]
        for sector, arena in [*wanted, *spots]:
            if self.available(sector, arena) is None:
                return PlaceAndArea(place=sector, area=arena)
        sector, arena = (wanted or spots)[0]
        return PlaceAndArea(place=sector, area=arena)

    def offline(self, seed: int) -> PlaceAndArea:
        hint, current = self.hint, self.current
        sector = pick(sorted(self.known), self.activity, [hint[0], current[0]])
        area = pick(list(self.known[sector]), self.activity,
                    [hint[1] if hint[0] == sector else None,
                     current[1] if current[0] == sector else None])
        return PlaceAndArea(place=sector, area=area)


def pick(options: list[str], activity: str, preferred: list[str | None]) -> str:
    """An option the activity names ("go to the party at Hobbs Cafe"), else the first
    preferred one offered, else the one sharing most of the activity's words."""
    named = [o for o in options if len(o) > 4 and o.lower() in activity.lower()]
    if named:
        return max(named, key=len)
    for choice in preferred:
        if choice in options:
            return choice
    stems = keywords(activity)
    return sorted(options, key=lambda o: -sum(s in o.lower() for s in stems))[0]
