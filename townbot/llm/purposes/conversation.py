"""purpose 'conversation': a whole exchange in one call (the cheaper setting)."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.purposes.common import SCHEMAS_KEPT, Line, choice_of, items_choosing


class Exchange(BaseModel):
    speaker: Line
    text: Annotated[str, Field(min_length=1, max_length=400)]


class WholeConversation(BaseModel):
    """purpose 'conversation': a whole exchange in one call (the cheaper setting)."""

    lines: Annotated[list[Exchange], Field(min_length=2, max_length=16)]


@lru_cache(maxsize=SCHEMAS_KEPT)
def conversation_among(names: tuple[str, ...]) -> type[WholeConversation]:
    """WholeConversation whose speakers are the participants."""
    choice = choice_of(names)
    if choice is None:
        return WholeConversation
    return items_choosing(WholeConversation, "lines", Exchange, "speaker", choice, (2, 16))
