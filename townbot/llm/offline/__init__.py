"""The offline model: a rule-based stand-in for a language model (deterministic, no network).

It answers each purpose from that purpose's typed question (the offline answers live with their
purposes in townbot/llm/purposes/); talk.py says the lines of a conversation, news.py what
counts as news in them, interview.py answers interviews. Its words come from the phrase banks
in phrases.yaml, picked with a seeded hash, and its verb forms from the lemminflect inflection
table (words.py).

`OfflineModel`, `OFFLINE_LABEL` and `score_importance` are read from model.py when first asked
for: the purposes use this package's phrase machinery, and the model answers through the
purposes, so importing the package must not import the model.
"""

from typing import Any

__all__ = ["OFFLINE_LABEL", "OfflineModel", "score_importance"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from townbot.llm.offline import model
    return getattr(model, name)
