"""Answers that cannot change are asked for once.

The importance of the same memories to the same resident, asked with the same prompt, is a
fact about those texts; so is the embedding of a text. Both are kept (bounded, least recently
used first out) and every hit is counted, since each is a call or tokens not paid for.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Coroutine, Hashable
from typing import Any, Generic, TypeVar

import numpy as np
from pydantic import BaseModel

from townbot.llm.port import AnswerT, Ask, LanguageModel, Layer, Reply

# Purposes whose answer depends only on the prompt: importance scores rate fixed texts.
CACHEABLE_PURPOSES = frozenset({"importance"})

ValueT = TypeVar("ValueT")


class LruCache(Generic[ValueT]):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.hits = 0
        self._entries: OrderedDict[Hashable, ValueT] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> ValueT | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
            self.hits += 1
        return value

    def put(self, key: Hashable, value: ValueT) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.limit:
            self._entries.popitem(last=False)


class AnswerCache:
    """Usable answers of cacheable purposes, by model, purpose, agent and exact prompt."""

    def __init__(self, purposes: frozenset[str] = CACHEABLE_PURPOSES, limit: int = 20_000) -> None:
        self.purposes = purposes
        self._answers: LruCache[str] = LruCache(limit)

    @property
    def hits(self) -> int:
        return self._answers.hits

    def _key(self, model: str, request: Ask) -> tuple[str, ...] | None:
        if request.purpose not in self.purposes:
            return None
        return (model, request.purpose, request.agent or "", request.schema.__name__, request.prompt)

    def get(self, model: str, request: Ask[AnswerT]) -> AnswerT | None:
        key = self._key(model, request)
        stored = self._answers.get(key) if key else None
        # Stored as JSON so a caller cannot change the cached answer through the object it got.
        return request.schema.model_validate_json(stored) if stored is not None else None

    def put(self, model: str, request: Ask, answer: BaseModel) -> None:
        key = self._key(model, request)
        if key is not None:
            self._answers.put(key, answer.model_dump_json())


class Cached(Layer):
    """Serves cacheable purposes from an `AnswerCache` (outcome `cached`, nothing spent) and
    keeps the usable answers the inner layers give."""

    def __init__(self, inner: LanguageModel, cache: AnswerCache | None = None) -> None:
        super().__init__(inner)
        self.cache = cache if cache is not None else AnswerCache()

    def reply(self, request: Ask[AnswerT]) -> Coroutine[Any, Any, Reply[AnswerT]]:
        if request.purpose not in self.cache.purposes:  # nothing to serve or keep: see `Layer`
            return self.inner.reply(request)
        return self._reply_cacheable(request)

    async def _reply_cacheable(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        cached = self.cache.get(self.label, request)
        if cached is not None:
            return Reply(cached, self.label, 0, 0, estimated=False, requests=0, outcome="cached")
        reply = await self.inner.reply(request)
        if reply.outcome in ("ok", "repaired") and reply.answer is not None:
            self.cache.put(self.label, request, reply.answer)
        return reply


class EmbeddingCache:
    """Unit vectors by text for one embedding model."""

    def __init__(self, limit: int = 8192) -> None:
        self._vectors: LruCache[np.ndarray] = LruCache(limit)

    @property
    def hits(self) -> int:
        return self._vectors.hits

    def get(self, text: str) -> np.ndarray | None:
        return self._vectors.get(text)

    def put(self, text: str, vector: np.ndarray) -> None:
        vector.setflags(write=False)  # shared by every later hit
        self._vectors.put(text, vector)
