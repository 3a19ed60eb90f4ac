"""The budget as a layer of the model stack: each ask is admitted under the caps of its game
day (see `budget.Budget`) or answered with its default, and what it spent is counted."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from townbot.llm.budget import Budget
from townbot.llm.port import (
    AnswerT,
    Ask,
    CallContext,
    Embedded,
    LanguageModel,
    Layer,
    ModelReport,
    Reply,
)


class Budgeted(Layer):
    """Admits each ask under the budget of its game day (refused: the default, outcome
    `skipped` or `over_budget`) and counts what the admitted ones spent."""

    def __init__(self, inner: LanguageModel, budget: Budget) -> None:
        super().__init__(inner)
        self.spending = budget

    def report(self) -> ModelReport:
        return dataclasses.replace(self.inner.report(), budget=self.spending)

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

