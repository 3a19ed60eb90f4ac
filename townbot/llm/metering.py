"""Every call is counted: purpose, agent, game day, model, tokens, latency, outcome.

`Recorded` is the outermost layer of the model stack (see `stack.py`). It times each call and
hands one `UsageRecord` to the sink the call carries (its caller's; the stack's default sink
otherwise) as soon as the call completes, so nothing it counted waits for a commit.

Outcomes recorded: ok, repaired, fallback (unusable twice), failed (no answer from the server),
cached, skipped (optional ask under budget pressure) and over_budget (a cap was reached).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from time import perf_counter

from townbot.llm.port import (
    AnswerT,
    Ask,
    CallContext,
    Embedded,
    LanguageModel,
    Layer,
    ModelReport,
    Reply,
    UsageRecord,
    UsageSink,
)


class CollectedUsage:
    """A sink that keeps records in a list (for tests, and callers that store them later)."""

    def __init__(self) -> None:
        self.records: list[UsageRecord] = []

    def record(self, record: UsageRecord) -> None:
        self.records.append(record)

    def drain(self) -> list[UsageRecord]:
        records, self.records = self.records, []
        return records


class Recorded(Layer):
    """Times every call and sends its usage record to the caller's sink; counts outcomes."""

    def __init__(self, inner: LanguageModel, usage: UsageSink | None = None) -> None:
        super().__init__(inner)
        self.usage: UsageSink = usage if usage is not None else CollectedUsage()
        self.outcomes: Counter[str] = Counter()
        self.fallbacks: Counter[str] = Counter()  # by purpose: calls the model gave no answer to

    def report(self) -> ModelReport:
        return dataclasses.replace(self.inner.report(), outcomes=self.outcomes,
                                   fallbacks=self.fallbacks)

    def _send(self, sink: UsageSink | None, record: UsageRecord) -> None:
        self.outcomes[record.outcome] += 1
        if record.outcome in ("fallback", "failed"):
            self.fallbacks[record.purpose] += 1
        (sink if sink is not None else self.usage).record(record)

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        started = perf_counter()
        reply = await self.inner.reply(request)
        self._send(request.usage, UsageRecord(
            request.purpose, request.agent, request.game_day or 1,
            self.inner.model_for(request.purpose), reply.prompt_tokens, reply.completion_tokens,
            reply.estimated, (perf_counter() - started) * 1000, reply.outcome,
            reply.cached_tokens))
        return reply

    async def embed_report(self, texts: Sequence[str],
                           call: CallContext | None = None) -> Embedded:
        call = call or CallContext()
        started = perf_counter()
        embedded = await self.inner.embed_report(texts, call)
        if embedded.requests or embedded.cache_hits or embedded.failed:
            self._send_embedding(call, embedded, perf_counter() - started)
        return embedded  # a local embedder makes no requests: nothing to count

    def _send_embedding(self, call: CallContext, embedded: Embedded, elapsed: float) -> None:
        def send(outcome: str, tokens: int = 0, latency: float = 0.0) -> None:
            self._send(call.usage, UsageRecord(
                call.purpose, call.agent, call.game_day or 1, embedded.model, tokens, 0,
                embedded.estimated, latency, outcome))

        if embedded.requests:
            send("ok", embedded.prompt_tokens, elapsed * 1000)
        for _ in range(embedded.cache_hits):  # one row per text: the summary counts texts
            send("cached")
        for _ in range(embedded.failed):
            send("failed")
