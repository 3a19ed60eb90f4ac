"""purpose 'choose_place': where an activity happens, a known place and one of its areas."""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, create_model

from townbot.llm.purposes.common import SCHEMAS_KEPT, Line, choice_of


class PlaceChoice(BaseModel):
    """One of the offered names (the simplest schema: the model layer's tests use it)."""

    choice: Line


class PlaceAndArea(BaseModel):
    """purpose 'choose_place': a known place and one of its areas."""

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
