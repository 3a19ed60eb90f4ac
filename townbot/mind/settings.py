"""The mind's knobs, with the paper's values as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from townbot.mind.retrieval import RetrievalWeights


@dataclass(frozen=True)
class RecallBudget:
    """Tokens of remembered text each kind of prompt gets (about 4 characters a token).

    The paper puts "the top-ranked memories that fit in the language model's context window"
    into a prompt; a budget per purpose keeps prompts small and lets short memories fill the
    room a fixed count would waste. A prompt with several queries shares its budget."""

    react: int = 500  # the relationship with what was seen, and its status
    relationship: int = 400  # what the speaker remembers of the listener
    utterance: int = 450  # the relationship, the listener's status and the last lines
    reflection: int = 600  # per question, reflections included
    summary: int = 300  # per query of the agent summary
    intentions: int = 300  # what could shape today's plan
    answer: int = 600  # an interview answer


@dataclass(frozen=True)
class MindSettings:
    weights: RetrievalWeights = field(default_factory=RetrievalWeights)
    sight_gap_hours: float = 6.0  # a sight out of view this long is a new event when seen again
    reflection_threshold: int = 150  # summed importance since the last reflection
    reflection_recent: int = 100  # memories the questions are drawn from
    insights_per_question: int = 5
    summary_refresh_hours: float = 8.0  # a few refreshes per game day
    talk_cooldown_hours: float = 4.0  # the same two people do not start talking again sooner
    reconsider_hours: float = 2.0  # a person seen is weighed for a reaction at most this often
    react_interval_minutes: int = 45  # at most one decision about people per this many minutes
    revise_importance: int = 7  # news this important makes the agent look at today's plan again
    revise_interval_minutes: int = 60  # at most so often, except right after a conversation
    turn_cap: int = 8  # utterances before a conversation is wound up
    whole_conversation: bool = False  # one call per conversation (cheaper) instead of per line
    # Interviews: "I don't know them" without a call for a person not in memory, and answers
    # claiming a meeting not in memory refused and repaired. The evaluation asks without them.
    interview_guards: bool = True
    retrieval_count: int = 30  # most memories per retrieval; the token budget usually stops first
    recall: RecallBudget = field(default_factory=RecallBudget)
