"""purpose 'conversation': a whole exchange in one call (the cheaper setting).

Its ask is made in mind/dialogue.py and answered offline by offline/talk.py, from a context
still keyed by strings.
"""

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


def strangers_problem(answer: WholeConversation, names: set[str]) -> str | None:
    """Why a conversation cannot be used: lines of someone who is not in it."""
    strangers = {line.speaker for line in answer.lines} - names
    return f"speakers {sorted(strangers)} are not in this conversation" if strangers else None


def greetings(first: str, second: str) -> WholeConversation:
    """The safe conversation: the two greet each other."""
    return WholeConversation(lines=[
        Exchange(speaker=first, text=f"Hello, {second.split()[0]}!"),
        Exchange(speaker=second, text=f"Hi, {first.split()[0]}. Good to see you.")])
