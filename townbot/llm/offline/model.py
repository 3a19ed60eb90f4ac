"""The deterministic offline model, the default when no model is configured: each ask carries
its purpose's typed question, which gives the offline answer from what the prompt was rendered
from (a routine becomes a day plan, keywords become importance, the offered options a choice).
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Sequence

import numpy as np

from townbot.llm.embedding import HashingEmbedder
from townbot.llm.offline.words import banks
from townbot.llm.port import AnswerT, Ask, CallContext, LanguageModel, Reply
from townbot.llm.purposes.common import Question
from townbot.wording import warm_up

LOG = logging.getLogger(__name__)
OFFLINE_LABEL = "offline model (deterministic, no network; not a language model)"


class OfflineModel(LanguageModel):
    """Answers every purpose from its typed question; embeds with feature hashing."""

    label = OFFLINE_LABEL
    embedding_model = "offline-hashing-256"

    def __init__(self, seed: int = 0, embedding_dim: int = 256) -> None:
        self.seed = seed
        self.embedding_dim = embedding_dim
        self._embedder = HashingEmbedder(embedding_dim)
        self.invalid_answers: Counter[str] = Counter()  # by purpose: answers from defaults
        self.last_error = ""
        warm_up()  # the inflection table and the phrase banks, loaded here rather than in a tick
        banks()

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        if not isinstance(request.context, Question):
            return request.default()
        try:
            answer = request.context.offline(self.seed)
            return request.schema.model_validate(answer.model_dump())
        except Exception as error:  # noqa: BLE001 - a rule's mistake costs one answer, not the tick
            # A pattern the schema refuses, or a context a rule misread: the safe answer,
            # counted and logged (`reply` hands it on as a fallback).
            self.invalid_answers[request.purpose] += 1
            self.last_error = f"the offline rules for {request.purpose} failed: {error!r}"
            LOG.warning("%s (%s); its default answer was used", self.last_error,
                        request.agent or "the town")
            return request.default()

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        """As `ask`, but an answer from the default comes back as a problem, so that the
        stack counts it as a fallback."""
        failures = sum(self.invalid_answers.values())
        reply = await super().reply(request)
        if sum(self.invalid_answers.values()) == failures:
            return reply
        return dataclasses.replace(reply, answer=None, problem=self.last_error,
                                   problem_kind="offline_error")

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        return self._embedder.embed(list(texts))
