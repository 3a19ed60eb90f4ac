"""purpose 'day_plan': the day in broad strokes."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.purposes.common import Line


class DayPlan(BaseModel):
    """purpose 'day_plan': the day in broad strokes."""

    items: Annotated[list[Line], Field(min_length=3, max_length=10)]
