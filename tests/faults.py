"""Fault injection for tests and benchmarks: slow, refusing, failing and garbling models.

`FaultyTransport` sits between the openai client and a server (real or fake) and injects HTTP
faults: latency, 429s, 5xx, timeouts, malformed and cut-off replies. `FaultyModel` wraps any
LanguageModel (the offline one, typically) and injects the same faults as the client reports
them after its retries: latency, calls that fail, replies that are not JSON or are cut off.
Draws come from a seeded generator, so a run injects the same faults each time.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields

import httpx2
import numpy as np

from townbot.llm.port import (
    AnswerT,
    Ask,
    CallContext,
    CallFailed,
    LanguageModel,
    Reply,
    answer_from_reply,
    estimate_tokens,
)

FAULTS = ("rate_limit", "server_error", "timeout", "malformed", "cut_off")
TRANSPORT_FAULTS = ("rate_limit", "server_error", "timeout")


@dataclass(frozen=True)
class FaultRates:
    """Seconds of latency added to every call, and the share of calls hit by each fault."""

    latency: float = 0.0
    rate_limit: float = 0.0
    server_error: float = 0.0
    timeout: float = 0.0
    malformed: float = 0.0
    cut_off: float = 0.0

    def __post_init__(self) -> None:
        shares = [getattr(self, kind) for kind in FAULTS]
        if any(share < 0 for share in shares) or sum(shares) > 1:
            raise ValueError(f"fault shares must be >= 0 and add up to at most 1, got {self}")
        if self.latency < 0:
            raise ValueError(f"latency must be >= 0 seconds, got {self.latency}")

    @classmethod
    def parse(cls, text: str) -> FaultRates:
        """'latency=0.5,rate_limit=0.1,timeout=0.05' (the form benchmarks take on the command line)."""
        known = {f.name for f in fields(cls)}
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, _, value = part.partition("=")
            if name not in known:
                raise ValueError(f"unknown fault '{name}'; use {', '.join(sorted(known))}")
            values[name] = float(value)
        return cls(**values)


class FaultDraw:
    """Seeded draws of which fault, if any, hits the next call."""

    def __init__(self, rates: FaultRates, seed: int) -> None:
        self.rates = rates
        self.random = random.Random(seed)
        self.injected: Counter[str] = Counter()

    @property
    def total(self) -> int:
        return sum(self.injected.values())

    def next(self, applicable: Sequence[str] = FAULTS) -> str | None:
        roll = self.random.random()
        for kind in FAULTS:
            roll -= getattr(self.rates, kind)
            if roll < 0:
                if kind not in applicable:
                    return None
                self.injected[kind] += 1
                return kind
        return None


class FaultyTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that injects faults in front of another transport."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, rates: FaultRates, seed: int = 0) -> None:
        self.inner = inner
        self.draw = FaultDraw(rates, seed)

    @property
    def injected(self) -> Counter[str]:
        return self.draw.injected

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self.draw.rates.latency:
            await asyncio.sleep(self.draw.rates.latency)
        chat = request.url.path.endswith("/chat/completions")
        fault = self.draw.next(FAULTS if chat else TRANSPORT_FAULTS)
        if fault == "rate_limit":
            return _error(429, "Rate limit reached (injected)", {"retry-after": "0"})
        if fault == "server_error":
            return _error(self.draw.random.choice((500, 502, 503)), "Server error (injected)")
        if fault == "timeout":
            raise httpx2.ReadTimeout("injected timeout", request=request)
        response = await self.inner.handle_async_request(request)
        if fault in ("malformed", "cut_off") and response.status_code == 200:
            return _garble(await response.aread(), fault)
        return response


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, headers=headers, json={"error": {"message": message,
                                                                    "type": "injected_fault"}})


def _garble(body: bytes, fault: str) -> httpx2.Response:
    """The same completion with its content made into prose (malformed) or truncated (cut off)."""
    completion = json.loads(body)
    choice = completion["choices"][0]
    content = choice["message"]["content"] or ""
    if fault == "malformed":
        choice["message"]["content"] = "Sure! Here it is: " + content.replace('"', "'")
    else:
        choice["message"]["content"] = content[: max(1, len(content) // 2)]
        choice["finish_reason"] = "length"
    return httpx2.Response(200, json=completion)


class FaultyModel(LanguageModel):
    """Wraps a LanguageModel: latency on every call, and faults as a real client reports them."""

    def __init__(self, inner: LanguageModel, rates: FaultRates, seed: int = 0,
                 embed_latency: float = 0.0) -> None:
        self.inner = inner
        self.draw = FaultDraw(rates, seed)
        self.embed_latency = embed_latency
        self.label = inner.label
        self.embedding_model = inner.embedding_model
        self.embedding_dim = inner.embedding_dim

    @property
    def injected(self) -> Counter[str]:
        return self.draw.injected

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        if self.draw.rates.latency:
            await asyncio.sleep(self.draw.rates.latency)
        fault = self.draw.next()
        if fault in TRANSPORT_FAULTS:
            raise CallFailed(f"injected {fault} (as after the client's last retry)")
        answer = await self.inner.ask(request)
        text = answer.model_dump_json()
        prompt_tokens, completion_tokens = estimate_tokens(request.prompt), estimate_tokens(text)
        if fault == "malformed":
            return Reply(None, self.label, prompt_tokens, completion_tokens, True,
                         "it was not valid JSON (injected)", "invalid_json")
        if fault == "cut_off":
            return Reply(None, self.label, prompt_tokens, completion_tokens // 2, True,
                         "it was cut off at the length limit (injected)", "cut_off")
        return Reply(answer, self.label, prompt_tokens, completion_tokens, True)

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        return await answer_from_reply(self, request)

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        if self.embed_latency:
            await asyncio.sleep(self.embed_latency)
        return await self.inner.embed(texts, call)
