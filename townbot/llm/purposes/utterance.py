"""purpose 'utterance': the next line of a conversation, and whether it ends it."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field


class Utterance(BaseModel):
    """purpose 'utterance': the next line of a conversation, and whether it ends it."""

    text: Annotated[str, Field(min_length=1, max_length=400)]
    end: bool
