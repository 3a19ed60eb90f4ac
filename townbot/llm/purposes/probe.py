"""purpose 'probe': the start-up check's tiny structured request (`townbot doctor`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from townbot.llm.purposes.common import Question
from townbot.prompting import render


class Ready(BaseModel):
    status: Literal["ready"]
    count: Literal[1, 2, 3]


@dataclass(frozen=True)
class ProbeQuestion(Question[Ready]):
    """Whether the server answers a structured request at all (it asks about nothing)."""

    purpose = "probe"
    answer_schema = Ready

    def prompt(self) -> str:
        return render("probe")

    def default(self) -> Ready:
        return Ready(status="ready", count=2)

    def offline(self, seed: int) -> Ready:
        return self.default()
