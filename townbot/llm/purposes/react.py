"""purpose 'react': continue the plan, or react (talk to a person, deal with an object); for a
person, `wait` instead means waiting for them to finish before going on."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field


class Reaction(BaseModel):
    """purpose 'react': continue the plan, or react (talk to a person, deal with an object);
    for a person, `wait` instead means waiting for them to finish before going on."""

    react: bool
    wait: bool = False
    action: Annotated[str, Field(max_length=200)] = ""
    minutes: Literal[5, 10, 15, 20, 30] = 10
    object_state: Annotated[str, Field(max_length=80)] = ""
    emoji: Annotated[str, Field(max_length=16)] = "❗"
