"""Every call is counted: `Recorded`, the outermost layer of the model stack, hands one
`UsageRecord` per call to the sink the call carries (the stack's default sink otherwise) as soon
as the call completes, so nothing it counted waits for a commit.
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
        context = call or CallContext()
        started = perf_counter()
        embedded = await self.inner.embed_report(texts, context)
        elapsed = perf_counter() - started

        def send(outcome: str, tokens: int = 0, latency: float = 0.0) -> None:
            self._send(context.usage, UsageRecord(
                context.purpose, context.agent, context.game_day or 1, embedded.model, tokens, 0,
                embedded.estimated, latency, outcome))

        if embedded.requests:  # a local embedder makes no requests: nothing to count
            send("ok", embedded.prompt_tokens, elapsed * 1000)
        for _ in range(embedded.cache_hits):  # one row per text: the summary counts texts
            send("cached")
        for _ in range(embedded.failed):
            send("failed")
        return embedded
