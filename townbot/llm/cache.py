"""Answers that cannot change are asked for once: the importance of the same memories to the
same resident, asked with the same prompt, is a fact about those texts; so is a text's embedding.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

from townbot.llm.port import AnswerT, Ask, LanguageModel, Layer, Reply

# Purposes whose answer depends only on the prompt: importance scores rate fixed texts.
CACHEABLE_PURPOSES = frozenset({"importance"})
ANSWERS_KEPT = 20_000

ValueT = TypeVar("ValueT")


class LruCache(Generic[ValueT]):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: OrderedDict[Hashable, ValueT] = OrderedDict()

    def get(self, key: Hashable) -> ValueT | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: Hashable, value: ValueT) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.limit:
            self._entries.popitem(last=False)


class Cached(Layer):
    """Serves cacheable purposes from the usable answers the inner layers gave before (outcome
    `cached`, nothing spent), by model, purpose, agent, schema and exact prompt."""

    def __init__(self, inner: LanguageModel) -> None:
        super().__init__(inner)
        # Kept as JSON, so that a caller cannot change a kept answer through the object it got.
        self.answers: LruCache[str] = LruCache(ANSWERS_KEPT)

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        if request.purpose not in CACHEABLE_PURPOSES:
            return await self.inner.reply(request)
        key = (self.label, request.purpose, request.agent or "", request.schema.__name__,
               request.prompt)
        stored = self.answers.get(key)
        if stored is not None:
            return Reply(request.schema.model_validate_json(stored), self.label, 0, 0,
                         estimated=False, requests=0, outcome="cached")
        reply = await self.inner.reply(request)
        if reply.outcome in ("ok", "repaired") and reply.answer is not None:
            self.answers.put(key, reply.answer.model_dump_json())
        return reply
