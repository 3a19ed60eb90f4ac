"""The layer that notices a model too weak to run a town: above `max_share` of the last WINDOW
answers from defaults (judged once MINIMUM are in), the call that tipped it raises
AnswersUnusable: `sim` and `play` stop with one line, a hosted town pauses and says so.
"""

from __future__ import annotations

from collections import deque

from townbot.llm.port import (
    ASKED,
    DEFAULTED,
    AnswerT,
    Ask,
    LanguageModel,
    Layer,
    ModelError,
    ModelReport,
    Reply,
)

WINDOW = 100  # the recent answers judged
MINIMUM = 50  # answers needed before judging: a start with a few defaults is no verdict
WARN_SHARE = 0.2  # above this share of defaulted answers, read-outs add a warning line
# What each kind of unusable reply means, for people (see Checked and Reply.problem_kind).
PROBLEM_WORDS = {"cut_off": "cut off", "invalid_json": "not JSON", "wrong_shape": "of the wrong format",
                 "refused": "refused", "empty": "empty", "unusable": "refused by the ask's own check",
                 "placeholder": "placeholders or copied examples"}


class AnswersUnusable(ModelError):
    """Too many recent answers came from defaults for the run to go on usefully."""


class Watched(Layer):
    def __init__(self, inner: LanguageModel, max_share: float | None = None) -> None:
        super().__init__(inner)
        self.max_share = max_share  # None or 1: never stop
        self.recent: deque[bool] = deque(maxlen=WINDOW)  # True: answered by a default

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        reply = await self.inner.reply(request)
        self.recent.append(reply.outcome in DEFAULTED)
        if self.max_share is None or self.max_share >= 1 or len(self.recent) < MINIMUM:
            return reply
        defaulted, judged = sum(self.recent), len(self.recent)
        if defaulted <= self.max_share * judged:
            return reply
        self.recent.clear()  # the next verdict needs fresh answers
        raise AnswersUnusable(
            f"{defaulted} of the last {judged} answers of {self.label} came "
            f"from defaults ({reasons(self.inner.report())}): the model is too weak to run a "
            "town or is set up wrongly; run `townbot doctor`, choose a stronger TOWNBOT_CHAT_MODEL, "
            f"or raise TOWNBOT_MAX_UNUSABLE (now {self.max_share:g}; 1 never stops)")


def reasons(report: ModelReport) -> str:
    """The kinds of unusable replies so far, most first, e.g. "41 not JSON, 3 cut off"."""
    kinds = sorted(report.problems.items(), key=lambda item: -item[1])
    parts = [f"{count} {PROBLEM_WORDS.get(kind, kind)}" for kind, count in kinds[:3]]
    failed = report.outcomes.get("failed", 0)
    if failed:
        parts.append(f"{failed} not answered by the server")
    return ", ".join(parts) or "no reason recorded"


def defaulted_share(report: ModelReport) -> tuple[int, int]:
    """(answers from defaults, answers) among a session's outcomes."""
    counts = report.outcomes
    asked = sum(counts.get(outcome, 0) for outcome in ASKED)
    return sum(counts.get(outcome, 0) for outcome in DEFAULTED), asked


def share_lines(defaulted: int, asked: int, offline: bool = False) -> list[str]:
    """The defaulted share as a percentage, and a warning line above WARN_SHARE (for a model
    on a server: the offline model's defaults are its own design)."""
    if not asked:
        return []
    share = defaulted / asked
    lines = [f"answers from defaults: {100 * share:.0f}% ({defaulted} of {asked})"]
    if share > WARN_SHARE and not offline:
        lines.append(f"warning: more than {100 * WARN_SHARE:.0f}% of the answers came from "
                     "defaults; the residents mostly follow fallbacks, not the model (run "
                     "`townbot doctor`, or choose a stronger model)")
    return lines
