"""purpose 'summary': the paper's three summaries of an agent (Appendix A), from three retrievals.

Offline: the background's first sentence, the persona's current occupation, and the latest
reflection about how things go.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from townbot.llm.purposes.common import Line, Question, bulleted
from townbot.prompting import render


class AgentSummary(BaseModel):
    core: Line
    occupation: Line
    feeling: Line


@dataclass(frozen=True)
class SummaryQuestion(Question[AgentSummary]):
    """The three summaries of `name` from the memories retrieved for each."""

    purpose = "summary"
    answer_schema = AgentSummary
    optional = True  # under a tight budget the persona's own description stands in
    name: str
    background: str
    currently: str
    core: tuple[str, ...]
    occupation: tuple[str, ...]
    feeling: tuple[str, ...]

    def prompt(self) -> str:
        return render("summary", name=self.name, core=bulleted(self.core, "- (nothing yet)"),
                      occupation=bulleted(self.occupation, "- (nothing yet)"),
                      feeling=bulleted(self.feeling, "- (nothing yet)"))

    def default(self) -> AgentSummary:
        return AgentSummary(core=self.background, occupation=self.currently,
                            feeling=f"{self.name.split()[0]} is getting on with things.")

    def offline(self, seed: int) -> AgentSummary:
        name = self.name
        first = name.split()[0]
        reflections = [t for t in self.feeling if "(because" not in t]
        feeling = (f"Lately {first} has been thinking that {reflections[0][0].lower()}"
                   f"{reflections[0][1:]}" if reflections and reflections[0].startswith(name) is False
                   else f"{first} feels things are moving along steadily.")
        return AgentSummary(core=self.background.split(". ")[0].rstrip(".") + ".",
                            occupation=self.currently, feeling=feeling[:300])
