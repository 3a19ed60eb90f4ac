"""A scripted language model for tests: fixed answers per purpose, every request recorded.

Purposes without a script are answered by the offline model, so a test scripts only the part
it pins down.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from townbot.llm.embedding import HashingEmbedder
from townbot.llm.offline import OfflineModel
from townbot.llm.port import AnswerT, Ask, CallContext, LanguageModel


class ScriptedModel(LanguageModel):
    label = "scripted test model"
    embedding_model = "offline-hashing-256"
    embedding_dim = 256

    def __init__(self, script: dict[str, list[dict] | Callable[[Ask], dict]] | None = None):
        self.script: dict[str, Any] = dict(script or {})
        self.requests: list[Ask] = []
        self._offline = OfflineModel(seed=0)
        self._embedder = HashingEmbedder(self.embedding_dim)

    def asked(self, purpose: str) -> list[Ask]:
        return [r for r in self.requests if r.purpose == purpose]

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        self.requests.append(request)
        scripted = self.script.get(request.purpose)
        if scripted is None:
            return await self._offline.ask(request)
        answer = scripted(request) if callable(scripted) else scripted.pop(0)
        return request.schema.model_validate(answer)

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        return self._embedder.embed(list(texts))
