"""purpose 'label_answers': the judge's yes or no per numbered answer, in order."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field


class Labels(BaseModel):
    """purpose 'label_answers': one yes or no per numbered answer, in order."""

    labels: Annotated[list[Literal["yes", "no"]], Field(min_length=1, max_length=40)]
