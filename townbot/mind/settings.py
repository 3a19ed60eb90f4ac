"""The mind's knobs, with the paper's values as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from townbot.mind.retrieval import RetrievalWeights


@dataclass(frozen=True)
class MindSettings:
    weights: RetrievalWeights = field(default_factory=RetrievalWeights)
    reflection_threshold: int = 150  # summed importance since the last reflection
    reflection_recent: int = 100  # memories the questions are drawn from
    insights_per_question: int = 5
    summary_refresh_hours: float = 8.0  # a few refreshes per game day
    talk_cooldown_hours: float = 4.0  # the same two people do not start talking again sooner
    reconsider_hours: float = 2.0  # a person seen is weighed for a reaction at most this often
    react_interval_minutes: int = 45  # at most one decision about people per this many minutes
    turn_cap: int = 8  # utterances before a conversation is wound up
    whole_conversation: bool = False  # one call per conversation (cheaper) instead of per line
    retrieval_count: int = 8  # memories put in a prompt per retrieval
    retrieval_tokens: int = 350  # and at most this many tokens of them
