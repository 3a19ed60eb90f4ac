"""Budget caps per town and per game day, in calls or tokens, that degrade instead of stopping,
and `Budgeted`, the layer of the model stack that applies them. From `soft_fraction` of a cap
on, optional asks get their default; at a cap every ask does, so residents follow the plans
they already have. Embeddings are never refused (they cost a small share of the tokens).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from townbot.llm.port import (
    ASKED,
    AnswerT,
    Ask,
    CallContext,
    Embedded,
    LanguageModel,
    Layer,
    ModelReport,
    Pressure,
    Reply,
)
from townbot.llm.settings import Caps

EMBEDDING_PURPOSES = frozenset({"embedding", "reembed"})
OPEN, SAVING, SPENT = "open", "saving", "spent"


class Budget:
    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self.day_calls: Counter[int] = Counter()
        self.day_tokens: Counter[int] = Counter()
        self.in_flight = 0  # admitted asks not yet counted: a cap is never overshot by calls

    def restore(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Count what a resumed town has already used (rows of the llm_usage table)."""
        for row in rows:
            self.count(row["purpose"], row["outcome"], row["game_day"],
                       row["prompt_tokens"] + row["completion_tokens"])

    def count(self, purpose: str, outcome: str, game_day: int, tokens: int) -> None:
        if outcome in ASKED and purpose not in EMBEDDING_PURPOSES:
            self.day_calls[game_day] += 1
        self.day_tokens[game_day] += tokens

    def _used(self, day: int, in_flight: int = 0) -> list[tuple[int, int, str]]:
        """(cap, used, words) of each cap that is set; `in_flight` calls count as used."""
        caps = self.caps
        return [(cap, used, what) for cap, used, what in [
            (caps.calls_per_town, self.day_calls.total() + in_flight, "calls in this town"),
            (caps.calls_per_day, self.day_calls[day] + in_flight, f"calls on game day {day}"),
            (caps.tokens_per_town, self.day_tokens.total(), "tokens in this town"),
            (caps.tokens_per_day, self.day_tokens[day], f"tokens on game day {day}")] if cap]

    def pressure(self, day: int) -> Pressure | None:
        measured = [Pressure(used / cap, used, cap, what)
                    for cap, used, what in self._used(day, self.in_flight)]
        return max(measured, key=lambda p: p.fraction, default=None)

    def level(self, day: int) -> str:
        pressure = self.pressure(day)
        if pressure is None or pressure.fraction < self.caps.soft_fraction:
            return OPEN
        return SPENT if pressure.fraction >= 1.0 else SAVING

    def admit(self, optional: bool, day: int) -> str | None:
        """None when the ask may go to the model (a call is reserved), else the outcome to record."""
        level = self.level(day)
        if level == SPENT:
            return "over_budget"
        if level == SAVING and optional:
            return "skipped"
        self.in_flight += 1
        return None

    def release(self) -> None:
        """An admitted ask has finished (and been counted, if it reached the model)."""
        self.in_flight -= 1

    def caps_used(self, day: int) -> list[str]:
        """Each cap set, with what is used and what is left of it (for status read-outs)."""
        return [f"{what}: {used:,} used, {max(0, cap - used):,} left of {cap:,}"
                for cap, used, what in self._used(day)]

    def change_line(self, before: str, after: str, day: int) -> str:
        """One line for #town-hall when the budget's level changes between ticks: saving
        begins, a cap is reached, or a new game day lifts a daily cap."""
        if after == OPEN:
            return ("Budget: a new game day opens the daily cap again; the model is asked as "
                    f"usual ({self.status(day).removeprefix('budget: ')}).")
        if after == SAVING and before == SPENT:
            return f"Budget: a new game day lifts the cap; still saving. {self.status(day)}."
        return f"Budget: {self.status(day).removeprefix('budget: ')}."

    def status(self, day: int) -> str:
        pressure = self.pressure(day)
        if pressure is None:
            return "budget: no caps set"
        used = f"{pressure.used} of {pressure.cap} {pressure.what}"
        level = self.level(day)
        if level == OPEN:
            return f"budget: {used} ({pressure.fraction:.0%})"
        if level == SAVING:
            return f"budget: {used} ({pressure.fraction:.0%}): optional calls are skipped"
        until = "the next game day" if "day" in pressure.what else "the cap is raised"
        return (f"budget: cap reached, {used}: the model is not asked until {until}; "
                "residents follow their plans")


class Budgeted(Layer):
    """Admits each ask under the budget of its game day (refused: the default, outcome
    `skipped` or `over_budget`) and counts what the admitted ones spent."""

    def __init__(self, inner: LanguageModel, budget: Budget) -> None:
        super().__init__(inner)
        self.spending = budget

    def report(self) -> ModelReport:
        return replace(self.inner.report(), budget=self.spending)

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        day = request.game_day or 1
        refused = self.spending.admit(request.optional, day)
        if refused is not None:
            return Reply(request.default(), self.label, 0, 0, estimated=False, requests=0,
                         outcome=refused)
        try:
            reply = await self.inner.reply(request)
            self.spending.count(request.purpose, reply.outcome, day,
                                reply.prompt_tokens + reply.completion_tokens)
            return reply
        finally:
            self.spending.release()

    async def embed_report(self, texts: Sequence[str],
                           call: CallContext | None = None) -> Embedded:
        call = call or CallContext()
        embedded = await self.inner.embed_report(texts, call)
        if embedded.requests:  # never refused: a memory without a vector is lost to retrieval
            self.spending.count(call.purpose, "ok", call.game_day or 1, embedded.prompt_tokens)
        return embedded
