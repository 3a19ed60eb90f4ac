"""purpose 'revise_plan': whether news changes the rest of today's plan, and how."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field


class PlanRevision(BaseModel):
    """purpose 'revise_plan': whether news changes the rest of today's plan, and how."""

    revise: bool
    reason: Annotated[str, Field(max_length=300)] = ""
