"""purpose 'relationship': what the speaker makes of the listener before speaking (paper 4.3.2),
from what it remembers about them.

Offline: that the speaker knows the listener, one fact about them, and how often they talked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, Field

from townbot.llm.offline.social import HEARD_FROM, clip
from townbot.llm.purposes.common import Question, bulleted
from townbot.llm.purposes.insights import REFLECTION_MARKERS
from townbot.prompting import render


class Relationship(BaseModel):
    text: Annotated[str, Field(min_length=1, max_length=400)]


@dataclass(frozen=True)
class RelationshipQuestion(Question[Relationship]):
    """What `name` (described by `summary`) makes of `partner`, from `memories`."""

    purpose = "relationship"
    answer_schema = Relationship
    optional = True  # under a tight budget the statements themselves stand in
    name: str
    summary: str
    partner: str
    memories: tuple[str, ...]

    def prompt(self) -> str:
        return render("relationship", summary=self.summary, first_name=self.name.split()[0],
                      partner=self.partner, context=bulleted(self.memories))

    def default(self) -> Relationship:
        return Relationship(text=" ".join(t for t in self.memories if self.partner in t)[:400])

    def offline(self, seed: int) -> Relationship:
        partner = self.partner
        about = [t for t in self.memories if partner in t]
        talks = sum(1 for t in about if f"talked with {partner}" in t)
        facts = [HEARD_FROM.sub("", t) for t in about
                 if "talked with" not in t and not any(m in t for m in REFLECTION_MARKERS)]
        known = f"{self.name.split()[0]} knows {partner}" + (f": {facts[0].rstrip('.')}." if facts else ".")
        if talks:
            known += f" They have talked {talks} time{'s' if talks > 1 else ''} lately."
        return Relationship(text=clip(known, 400))
