"""The model stack, composed in this one place (docs/architecture.md lists its layers), and
`WithContext`, the caller's stamp on every call: two towns can share one stack and their calls
never mix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from townbot.llm.budget import Budget, Budgeted
from townbot.llm.cache import Cached
from townbot.llm.checking import Checked
from townbot.llm.metering import Recorded
from townbot.llm.port import AnswerT, Ask, CallContext, Embedded, LanguageModel, Layer, Reply, UsageSink
from townbot.llm.watching import Watched


def build_model_stack(model: LanguageModel, *, budget: Budget | None = None,
                      usage: UsageSink | None = None,
                      max_unusable: float | None = None) -> Recorded:
    """`model` wrapped in every layer; `usage` takes the records of calls carrying no sink;
    `max_unusable` the share of recent answers from defaults that stops a run."""
    layered: LanguageModel = Cached(Watched(Checked(model), max_unusable))
    if budget is not None:
        layered = Budgeted(layered, budget)
    return Recorded(layered, usage)


LayerT = TypeVar("LayerT", bound=LanguageModel)


def find_layer(model: LanguageModel, kind: type[LayerT]) -> LayerT | None:
    """The first layer of `kind` from the outside in (the model itself included)."""
    while not isinstance(model, kind):
        if not isinstance(model, Layer):
            return None
        model = model.inner
    return model


class WithContext(Layer):
    """Stamps each call with the caller's context, read when the call is made."""

    def __init__(self, inner: LanguageModel, context: Callable[[], CallContext]) -> None:
        super().__init__(inner)
        self.context = context

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        return await self.inner.ask(request.within(self.context()))

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        return await self.inner.reply(request.within(self.context()))

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        return await self.inner.embed(texts, self._call(call))

    async def embed_report(self, texts: Sequence[str],
                           call: CallContext | None = None) -> Embedded:
        return await self.inner.embed_report(texts, self._call(call))

    def _call(self, call: CallContext | None) -> CallContext:
        """`call` with the caller's context where it has none of its own (the mind's
        embeddings carry none: theirs is the caller's)."""
        mine = self.context()
        if call is None:
            return mine
        return CallContext(call.agent or mine.agent,
                           call.game_day if call.game_day is not None else mine.game_day,
                           call.purpose, call.usage or mine.usage)
