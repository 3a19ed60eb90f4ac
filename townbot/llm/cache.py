"""Answers that cannot change are asked for once.

The importance of the same memories to the same resident, asked with the same prompt, is a
fact about those texts; so is the embedding of a text. Both are kept (bounded, least recently
used first out) and every hit is counted, since each is a call or tokens not paid for.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

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

    def _key(self, model: str, request: Ask) -> tuple[str, ...]:
        return (model, request.purpose, request.agent or "", request.schema.__name__, request.prompt)

    def get(self, model: str, request: Ask[AnswerT]) -> AnswerT | None:
        stored = self._answers.get(self._key(model, request))
        # Stored as JSON so a caller cannot change the cached answer through the object it got.
        return request.schema.model_validate_json(stored) if stored is not None else None

    def put(self, model: str, request: Ask, answer: BaseModel) -> None:
        self._answers.put(self._key(model, request), answer.model_dump_json())


class Cached(Layer):
    """Serves cacheable purposes from an `AnswerCache` (outcome `cached`, nothing spent) and
    keeps the usable answers the inner layers give."""

    def __init__(self, inner: LanguageModel, cache: AnswerCache | None = None) -> None:
        super().__init__(inner)
        self.cache = cache if cache is not None else AnswerCache()

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        if request.purpose not in self.cache.purposes:
            return await self.inner.reply(request)
        cached = self.cache.get(self.label, request)
        if cached is not None:
            return Reply(cached, self.label, 0, 0, estimated=False, requests=0, outcome="cached")
        reply = await self.inner.reply(request)
        if reply.outcome in ("ok", "repaired") and reply.answer is not None:
            self.cache.put(self.label, request, reply.answer)
        return reply
