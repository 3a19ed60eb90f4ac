"""purpose 'rank_answers': the judge's ranking of answers, the most believable first."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field


class Ranking(BaseModel):
    """purpose 'rank_answers': the letters of the answers, most believable first."""

    order: Annotated[list[Annotated[str, Field(pattern=r"^[A-Z]$")]], Field(min_length=2,
                                                                            max_length=8)]
