"""Every call is counted: purpose, agent, game day, tokens, latency, outcome.

`MeteredModel` wraps any model: it also applies each request's usability check, gives the model
one chance to repair an unusable answer, then falls back to the request's safe default and
counts the fallback.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from townbot.llm.port import AnswerT, Ask, LanguageModel, usable


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
    outcome: str  # ok | repaired | fallback


@dataclass
class Meter:
    """Collects usage records until the engine stores them with the tick."""

    game_day: int = 1
    pending: list[UsageRecord] = dataclasses.field(default_factory=list)
    fallbacks: Counter[str] = dataclasses.field(default_factory=Counter)
    seconds_in_model: float = 0.0

    def record(self, record: UsageRecord) -> None:
        self.pending.append(record)
        if record.outcome == "fallback":
            self.fallbacks[record.purpose] += 1

    def drain(self) -> list[UsageRecord]:
        records, self.pending = self.pending, []
        return records


class MeteredModel:
    """A LanguageModel that counts, checks and falls back around another one."""

    def __init__(self, inner: LanguageModel, meter: Meter | None = None) -> None:
        self.inner = inner
        self.meter = meter or Meter()
        self.label = inner.label
        self.embedding_model = inner.embedding_model
        self.embedding_dim = inner.embedding_dim

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        started = time.perf_counter()
        answer = await self.inner.ask(request)
        outcome = "ok"
        problem = usable(request, answer)
        if problem is not None:
            repair = dataclasses.replace(
                request, prompt=f"{request.prompt}\n\nYour previous answer could not be used: "
                                f"{problem}. Answer again.")
            answer = await self.inner.ask(repair)
            outcome = "repaired" if usable(request, answer) is None else "fallback"
            if outcome == "fallback":
                answer = request.default()
        elapsed = time.perf_counter() - started
        self.meter.seconds_in_model += elapsed
        self.meter.record(UsageRecord(
            purpose=request.purpose, agent=request.agent, game_day=self.meter.game_day,
            model=self.inner.label, prompt_tokens=estimate_tokens(request.prompt),
            completion_tokens=estimate_tokens(answer.model_dump_json()), estimated=True,
            latency_ms=elapsed * 1000, outcome=outcome))
        return answer

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        vectors = await self.inner.embed(texts)
        self.meter.seconds_in_model += time.perf_counter() - started
        return vectors
