"""purpose 'hourly_schedule': the waking day as hour-level blocks, each with the known place and
area it happens in (a place that is not known is chosen when the block begins)."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.purposes.common import SCHEMAS_KEPT, Line, choice_of, items_choosing


class ScheduleBlock(BaseModel):
    start: str = Field(pattern=r"^\d{2}:\d{2}$")
    minutes: Annotated[int, Field(ge=5, le=720)]
    activity: Line
    place: Annotated[str, Field(max_length=200)] = ""  # "sector: arena"; "" to choose later


class HourlySchedule(BaseModel):
    """purpose 'hourly_schedule': the waking day as hour-level blocks, each with the known
    place and area it happens in (a place that is not known is chosen when the block begins)."""

    blocks: Annotated[list[ScheduleBlock], Field(min_length=1, max_length=40)]


@lru_cache(maxsize=SCHEMAS_KEPT)
def schedule_among(spots: tuple[str, ...]) -> type[HourlySchedule]:
    """HourlySchedule whose blocks name one of `spots` ("place: area"), or "" to choose later."""
    choice = choice_of(("", *spots))
    if choice is None or not spots:
        return HourlySchedule
    return items_choosing(HourlySchedule, "blocks", ScheduleBlock, "place", choice, (1, 40), "")
