"""purpose 'takeaways': what each participant of a conversation learned from it (one call for
both)."""

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
