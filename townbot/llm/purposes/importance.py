"""purpose 'importance': how poignant each new memory is, 1 to 10, many memories in one call."""

from __future__ import annotations

from functools import cache
from typing import Annotated

from pydantic import BaseModel, Field, create_model

from townbot.llm.purposes.common import Score


class ImportanceScores(BaseModel):
    """purpose 'importance': one poignancy score per memory text, in order."""

    scores: list[Score]


@cache
def importance_scores(count: int) -> type[ImportanceScores]:
    """ImportanceScores for exactly `count` memories: a schema-following server cannot give
    another count, and the others are told the count by the schema as well as the prompt."""
    return create_model("ImportanceScores", __base__=ImportanceScores,
                        scores=(Annotated[list[Score], Field(min_length=count, max_length=count)], ...))
