"""purpose 'decompose': an hour-level block as 5-15 minute steps, each with its object."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from townbot.llm.purposes.common import SCHEMAS_KEPT, Line, choice_of, items_choosing

ChunkMinutes = Literal[5, 10, 15]


class Step(BaseModel):
    minutes: ChunkMinutes
    action: Line
    object: Line
    object_state: Annotated[str, Field(min_length=1, max_length=80)]
    emoji: Annotated[str, Field(min_length=1, max_length=16)]


class Decomposition(BaseModel):
    """purpose 'decompose': an hour-level block as 5-15 minute steps, each with its object."""

    steps: Annotated[list[Step], Field(min_length=1, max_length=40)]


@lru_cache(maxsize=SCHEMAS_KEPT)
def decomposition_among(objects: tuple[str, ...]) -> type[Decomposition]:
    """Decomposition whose steps name one of `objects`."""
    choice = choice_of(objects)
    if choice is None:
        return Decomposition
    return items_choosing(Decomposition, "steps", Step, "object", choice, (1, 40))
