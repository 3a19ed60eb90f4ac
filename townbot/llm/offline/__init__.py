"""The offline model (model.py): a rule-based stand-in for a language model, deterministic and
without network. Each purpose's typed question gives its offline answer (townbot/llm/purposes/);
talk.py says the lines of a conversation, news.py what counts as news in them, interview.py
answers interviews. Its words come from the phrase banks in phrases.yaml, picked with a seeded
hash, and its verb forms from the lemminflect inflection table (words.py).
"""

from townbot.llm.offline.model import OFFLINE_LABEL, OfflineModel

__all__ = ["OFFLINE_LABEL", "OfflineModel"]
