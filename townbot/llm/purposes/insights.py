"""purpose 'insights': up to five insights per question (three questions at most), citing
numbered statements as evidence, each rated for importance as it is drawn (no importance call
of its own)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.purposes.common import Line, Score


class Insight(BaseModel):
    question: int | None = None  # the number of the question it answers
    text: Line
    evidence: Annotated[list[int], Field(min_length=1, max_length=10)]
    importance: Score | None = None  # None: scored the usual way


class Insights(BaseModel):
    """purpose 'insights': up to five insights per question (three questions at most), citing
    numbered statements as evidence, each rated for importance as it is drawn (no importance
    call of its own)."""

    insights: Annotated[list[Insight], Field(min_length=1, max_length=15)]
