"""Every call is counted: purpose, agent, game day, model, tokens, latency, outcome.

`MeteredModel` wraps any model. Around each ask it applies the budget, serves cacheable
answers from the cache, checks the answer (a reply that is cut off, not JSON, of the wrong
shape, or unusable by the ask's own check gets one repair try, then the ask's safe default),
and answers with the default when the server stays unavailable. Nothing a model does can
crash a tick except settings that cannot work at all (`ModelConfigError`).

Outcomes recorded: ok, repaired, fallback (unusable twice), failed (no answer from the server),
cached, skipped (optional ask under budget pressure) and over_budget (a cap was reached).
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from townbot.llm.budget import Budget
from townbot.llm.cache import AnswerCache
from townbot.llm.port import AnswerT, Ask, CallFailed, LanguageModel, Reply, usable
from townbot.prompting import render

DEFAULTED = frozenset({"fallback", "failed", "skipped", "over_budget"})


def estimate_tokens(text: str) -> int:
    """About four characters a token, as OpenAI's tokenizers average on English."""
    return max(1, len(text) // 4)


@dataclass(frozen=True)
class UsageRecord:
    purpose: str
    agent: str | None
    game_day: int
    model: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    latency_ms: float
    outcome: str  # ok | repaired | fallback | failed | cached | skipped | over_budget


@dataclass
class Meter:
    """Collects usage records until the engine stores them with the tick, plus session counts."""

    game_day: int = 1
    pending: list[UsageRecord] = dataclasses.field(default_factory=list)
    fallbacks: Counter[str] = dataclasses.field(default_factory=Counter)  # by purpose
    outcomes: Counter[str] = dataclasses.field(default_factory=Counter)
    problems: Counter[str] = dataclasses.field(default_factory=Counter)  # cut_off, invalid_json, ...
    last_failure: str | None = None
    seconds_in_model: float = 0.0

    def record(self, record: UsageRecord) -> None:
        self.pending.append(record)
        self.outcomes[record.outcome] += 1
        if record.outcome in ("fallback", "failed"):
            self.fallbacks[record.purpose] += 1

    def drain(self) -> list[UsageRecord]:
        records, self.pending = self.pending, []
        return records


@dataclass
class Cost:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    def add(self, reply: Reply) -> None:
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.estimated = self.estimated or reply.estimated


class MeteredModel:
    """A LanguageModel that budgets, caches, counts, checks and falls back around another one."""

    def __init__(self, inner: LanguageModel, meter: Meter | None = None, *,
                 budget: Budget | None = None, cache: AnswerCache | None = None) -> None:
        self.inner = inner
        self.meter = meter or Meter()
        self.budget = budget
        self.cache = cache if cache is not None else AnswerCache()

    # The inner model may learn its embedding dimension only when it connects (prepare).
    @property
    def label(self) -> str:
        return self.inner.label

    @property
    def embedding_model(self) -> str:
        return self.inner.embedding_model

    @property
    def embedding_dim(self) -> int:
        return self.inner.embedding_dim

    async def prepare(self) -> None:
        prepare = getattr(self.inner, "prepare", None)
        if prepare is not None:
            await prepare()

    async def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            await close()

    # --- asking ---------------------------------------------------------------------------------

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        started = time.perf_counter()
        refused = self.budget.admit(request.optional, self.meter.game_day) if self.budget else None
        if refused is not None:
            self._record(request, refused, Cost(), started)
            return request.default()
        try:
            return await self._ask_admitted(request, started)
        finally:
            if self.budget:
                self.budget.release()

    async def _ask_admitted(self, request: Ask[AnswerT], started: float) -> AnswerT:
        cached = self.cache.get(self.label, request)
        if cached is not None:
            self._record(request, "cached", Cost(), started)
            return cached
        cost = Cost()
        try:
            first = await self._reply(request)
        except CallFailed as error:
            self.meter.last_failure = str(error)
            self._record(request, "failed", cost, started)
            return request.default()
        cost.add(first)
        answer, outcome = await self._settle(request, first, cost)
        if outcome in ("ok", "repaired"):
            self.cache.put(self.label, request, answer)
        self._record(request, outcome, cost, started)
        return answer

    async def _settle(self, request: Ask[AnswerT], first: Reply[AnswerT],
                      cost: Cost) -> tuple[AnswerT, str]:
        """The usable answer and its outcome: the first reply, its one repair, or the default."""
        problem = self._problem(request, first)
        if problem is None and first.answer is not None:
            return first.answer, "ok"
        repair = dataclasses.replace(
            request, prompt=render("repair", prompt=request.prompt, problem=problem))
        try:
            second = await self._reply(repair)
        except CallFailed as error:
            self.meter.last_failure = str(error)
            return request.default(), "fallback"
        cost.add(second)
        if self._problem(request, second) is None and second.answer is not None:
            return second.answer, "repaired"
        return request.default(), "fallback"

    def _problem(self, request: Ask[AnswerT], reply: Reply[AnswerT]) -> str | None:
        problem = reply.problem
        if problem is None and reply.answer is not None:
            problem = usable(request, reply.answer)
            kind = "unusable"
        else:
            kind = reply.problem_kind or "empty"
            problem = problem or "there was no answer"
        if problem is not None:
            self.meter.problems[kind] += 1
        return problem

    async def _reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        reply = getattr(self.inner, "reply", None)
        if reply is not None:
            return await reply(request)
        answer = await self.inner.ask(request)
        return Reply(answer, self.inner.label, estimate_tokens(request.prompt),
                     estimate_tokens(answer.model_dump_json()), estimated=True)

    def _model_name(self, purpose: str) -> str:
        """The model that answers a purpose (a client may use a small model for some)."""
        model_for = getattr(self.inner, "model_for", None)
        return model_for(purpose) if model_for is not None else self.inner.label

    def _record(self, request: Ask, outcome: str, cost: Cost, started: float) -> None:
        elapsed = time.perf_counter() - started
        self.meter.seconds_in_model += elapsed
        model = self._model_name(request.purpose)
        self._store(UsageRecord(
            purpose=request.purpose, agent=request.agent, game_day=self.meter.game_day, model=model,
            prompt_tokens=cost.prompt_tokens, completion_tokens=cost.completion_tokens,
            estimated=cost.estimated, latency_ms=elapsed * 1000, outcome=outcome))

    def _store(self, record: UsageRecord) -> None:
        self.meter.record(record)
        if self.budget:
            self.budget.count(record.purpose, record.outcome, record.game_day,
                              record.prompt_tokens + record.completion_tokens)

    # --- embedding ------------------------------------------------------------------------------

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        report = getattr(self.inner, "embed_report", None)
        if report is None:  # a local embedder: nothing to count
            vectors = await self.inner.embed(texts)
            self.meter.seconds_in_model += time.perf_counter() - started
            return vectors
        embedded = await report(texts)
        elapsed = time.perf_counter() - started
        self.meter.seconds_in_model += elapsed
        day, model = self.meter.game_day, embedded.model

        def row(outcome: str, tokens: int = 0, latency: float = 0.0) -> UsageRecord:
            return UsageRecord("embedding", None, day, model, tokens, 0, embedded.estimated,
                               latency, outcome)

        if embedded.requests:
            self._store(row("ok", embedded.prompt_tokens, elapsed * 1000))
        for _ in range(embedded.cache_hits):  # one row per text: the summary counts texts
            self._store(row("cached"))
        for _ in range(embedded.failed):
            self._store(row("failed"))
        if embedded.failed:
            self.meter.last_failure = f"{embedded.failed} texts could not be embedded"
        return embedded.vectors

