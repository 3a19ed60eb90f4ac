"""The answer schema of every purpose the mind asks a model for.

Small integer ranges are enums (Literal) because one structured-output grammar ignores
minimum/maximum.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

Score = Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
ChunkMinutes = Literal[5, 10, 15]
Line = Annotated[str, Field(min_length=1, max_length=300)]


class ImportanceScores(BaseModel):
    """purpose 'importance': one poignancy score per memory text, in order."""

    scores: list[Score]


class DayPlan(BaseModel):
    """purpose 'day_plan': the day in broad strokes."""

    items: Annotated[list[Line], Field(min_length=3, max_length=10)]


class ScheduleBlock(BaseModel):
    start: str = Field(pattern=r"^\d{2}:\d{2}$")
    minutes: Annotated[int, Field(ge=5, le=720)]
    activity: Line


class HourlySchedule(BaseModel):
    """purpose 'hourly_schedule': the waking day as hour-level blocks."""

    blocks: Annotated[list[ScheduleBlock], Field(min_length=1, max_length=40)]


class PlaceChoice(BaseModel):
    """purposes 'choose_sector' and 'choose_arena': one of the offered names."""

    choice: Line


class Step(BaseModel):
    minutes: ChunkMinutes
    action: Line
    object: Line
    object_state: Annotated[str, Field(min_length=1, max_length=80)]
    emoji: Annotated[str, Field(min_length=1, max_length=16)]


class Decomposition(BaseModel):
    """purpose 'decompose': an hour-level block as 5-15 minute steps, each with its object."""

    steps: Annotated[list[Step], Field(min_length=1, max_length=40)]
