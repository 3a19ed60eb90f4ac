"""One interface for everything the mind asks of a language model."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel

AnswerT = TypeVar("AnswerT", bound=BaseModel)


@dataclass(frozen=True)
class Ask(Generic[AnswerT]):
    """One question: a purpose tag, the rendered prompt, the answer's schema.

    `context` is the structured data the prompt was rendered from; a real model reads only the
    prompt, the offline model answers from the context. `check` returns a complaint about a
    well-formed but unusable answer (say, a place that is not among the options); `default` is
    the safe answer used when the model cannot give a usable one.
    """

    purpose: str
    prompt: str
    schema: type[AnswerT]
    default: Callable[[], AnswerT]
    context: Mapping[str, Any] = field(default_factory=dict)
    agent: str | None = None
    check: Callable[[AnswerT], str | None] | None = None
    optional: bool = False


class LanguageModel(Protocol):
    """What every model implementation offers the mind."""

    label: str
    embedding_model: str
    embedding_dim: int

    async def ask(self, request: Ask[AnswerT]) -> AnswerT: ...

    async def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def usable(request: Ask[AnswerT], answer: AnswerT) -> str | None:
    """Why an answer cannot be used, or None when it can."""
    return request.check(answer) if request.check else None
