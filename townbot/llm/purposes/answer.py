"""purpose 'answer': a reply in the agent's own voice (interviews, questions from people).

Its ask is made in mind/answering.py, whose check (no meeting claimed that no memory backs)
reads the memory stream and so stays there; it is answered offline by offline/interview.py,
from a context still keyed by strings.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field


class Answer(BaseModel):
    """purpose 'answer': a reply in the agent's own voice."""

    text: Annotated[str, Field(min_length=1, max_length=1200)]


def no_answer() -> Answer:
    """The safe answer: an apology."""
    return Answer(text="I'm sorry, I can't think of an answer to that right now.")
