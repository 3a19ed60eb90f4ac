"""purpose 'utterance' (paper 4.3.2): the next line of a conversation, and whether it ends it.

Its ask is made in mind/dialogue.py and answered offline by offline/talk.py, from a context
still keyed by strings.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field


class Utterance(BaseModel):
    """purpose 'utterance': the next line of a conversation, and whether it ends it."""

    text: Annotated[str, Field(min_length=1, max_length=400)]
    end: bool


def default_line() -> Utterance:
    """The safe line: a polite goodbye, which ends the talk."""
    return Utterance(text="Anyway, I should get going. See you later!", end=True)
