"""purpose 'reflection_questions': the most salient high-level questions about recent memories."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.purposes.common import Line


class ReflectionQuestions(BaseModel):
    """purpose 'reflection_questions': the most salient high-level questions."""

    questions: Annotated[list[Line], Field(min_length=1, max_length=3)]
