"""The offline model's stand-ins for an evaluation judge: ranking answers and labelling them.

Not a language model's judgement: answers are ranked by how many of the resident's own
remembered words they use (grounded specificity), and an answer is labelled "yes" when it names
the subject asked about and the resident's own words (`own_words`: the answer without the lines
it quotes of others) do not say it does not know. Deterministic, for offline runs and
tests; the evaluation report says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from townbot.llm.purposes import Labels, Ranking

WORD = re.compile(r"[a-z]{4,}")
DOUBT = re.compile(r"\b(don't know|do not know|not sure|no idea|haven't heard|have not heard|"
                   r"never heard|can't recall|cannot recall|nothing comes to mind|no, i|"
                   r"can't think|i'm sorry)\b", re.IGNORECASE)


def _words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def rank(context: Mapping[str, Any]) -> Ranking:
    """Most grounded first: shared words with the resident's memories, less for doubt."""
    known = _words(" ".join(context["memories"]) + " " + context["identity"])
    answers: dict[str, str] = context["answers"]

    def grounded(letter: str) -> tuple[int, str]:
        text = answers[letter]
        return (-(len(_words(text) & known) - (5 if DOUBT.search(text) else 0)), letter)

    return Ranking(order=sorted(answers, key=grounded))


def label(context: Mapping[str, Any]) -> Labels:
    """Yes when the answer mentions every subject pattern and the resident's own words express
    no doubt (a quoted "I don't know" of someone else's is not the resident's)."""
    labels = []
    for item in context["items"]:
        named = all(re.search(p, item["answer"], re.IGNORECASE) for p in item["subject"])
        own = item.get("own_words", item["answer"])
        labels.append("yes" if named and not DOUBT.search(own) else "no")
    return Labels(labels=labels)
