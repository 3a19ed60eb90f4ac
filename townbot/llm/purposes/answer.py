"""purpose 'answer': a reply in the agent's own voice (interviews, questions from people)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field


class Answer(BaseModel):
    """purpose 'answer': a reply in the agent's own voice."""

    text: Annotated[str, Field(min_length=1, max_length=1200)]
