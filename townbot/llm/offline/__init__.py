"""The offline model: a rule-based stand-in for a language model (deterministic, no network).

Its answers are built from each purpose's structured context (model.py for plans and actions,
social.py for talk, reflection and interviews, judge.py for the evaluation's judge); its words
come from the phrase banks in phrases.yaml, picked with a seeded hash, and its verb forms from
the lemminflect inflection table (words.py).
"""

from townbot.llm.offline.model import OFFLINE_LABEL, OfflineModel, score_importance

__all__ = ["OFFLINE_LABEL", "OfflineModel", "score_importance"]
