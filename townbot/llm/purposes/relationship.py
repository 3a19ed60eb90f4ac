"""purpose 'relationship': what the speaker's relationship with the listener is."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field


class Relationship(BaseModel):
    """purpose 'relationship': what the speaker's relationship with the listener is."""

    text: Annotated[str, Field(min_length=1, max_length=400)]
