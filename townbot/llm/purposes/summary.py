"""purpose 'summary': the paper's three summaries of an agent (Appendix A)."""

from __future__ import annotations

from pydantic import BaseModel

from townbot.llm.purposes.common import Line


class AgentSummary(BaseModel):
    """purpose 'summary': the paper's three summaries of an agent."""

    core: Line
    occupation: Line
    feeling: Line
