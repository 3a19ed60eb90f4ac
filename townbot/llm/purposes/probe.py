"""purpose 'probe': the start-up check's tiny structured request."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class Ready(BaseModel):
    """purpose 'probe': the start-up check's tiny structured request."""

    status: Literal["ready"]
    count: Literal[1, 2, 3]
