"""purpose 'takeaways': what each participant of a conversation learned from it (one call for
both).

Its ask is made in mind/dialogue.py and answered offline by offline/talk.py, from a context
still keyed by strings.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.purposes.common import SCHEMAS_KEPT, Line, Score, choice_of, items_choosing


class PersonTakeaways(BaseModel):
    """What one participant learned, with the importance of each fact (`scores`, in order) and
    of the conversation itself, so that neither waits for an importance call. Missing or
    miscounted scores are asked for the usual way."""

    name: Line
    facts: Annotated[list[Line], Field(max_length=5)] = []
    scores: Annotated[list[Score], Field(max_length=5)] = []
    importance: Score | None = None


class Takeaways(BaseModel):
    """purpose 'takeaways': what each participant of a conversation learned from it (one call
    for both)."""

    learned: Annotated[list[PersonTakeaways], Field(min_length=1, max_length=2)]


@lru_cache(maxsize=SCHEMAS_KEPT)
def takeaways_among(names: tuple[str, ...]) -> type[Takeaways]:
    """Takeaways with one entry per participant, each named as one of them."""
    choice = choice_of(names)
    if choice is None:
        return Takeaways
    return items_choosing(Takeaways, "learned", PersonTakeaways, "name", choice, (1, 2))


def entries_problem(answer: Takeaways, names: list[str]) -> str | None:
    """Why takeaways cannot be used: not one entry for each participant."""
    given = [entry.name for entry in answer.learned]
    if sorted(given) != sorted(names):
        return f"give one entry for each of {', '.join(names)} (got {', '.join(given)})"
    return None


def nothing_learned(names: list[str]) -> Takeaways:
    """The safe takeaways: nobody learned anything new."""
    return Takeaways(learned=[PersonTakeaways(name=n) for n in names])
