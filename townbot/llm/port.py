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


# --- what real clients report beyond the answer -----------------------------------------------


class ModelError(Exception):
    """The model could not be used for a call."""


class CallFailed(ModelError):
    """No answer for this call (the server stayed unavailable through the retries, or refused it).

    Metering answers the call with its safe default; the town goes on.
    """


class ModelConfigError(ModelError):
    """The settings cannot work (a refused key, an unknown model): the message says what to change.

    This one stops the run, because every further call would fail the same way.
    """


@dataclass(frozen=True)
class Reply(Generic[AnswerT]):
    """One answer as the server gave it, with what it cost.

    `problem` says why the answer cannot be used (cut off, invalid JSON, wrong shape) and
    `problem_kind` names that class of problem for counting; `answer` is None then.
    """

    answer: AnswerT | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    problem: str | None = None
    problem_kind: str | None = None  # cut_off | invalid_json | wrong_shape | refused | empty
    requests: int = 1


@dataclass(frozen=True)
class Embedded:
    """Vectors for a list of texts (unit length, in order) and what producing them cost."""

    vectors: np.ndarray
    model: str
    prompt_tokens: int = 0
    estimated: bool = False
    requests: int = 0
    cache_hits: int = 0
    failed: int = 0  # texts that got a zero vector because the server stayed unavailable


class ReportingModel(LanguageModel, Protocol):
    """A model that reports tokens and problems itself; metering prefers these methods."""

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]: ...

    async def embed_report(self, texts: Sequence[str]) -> Embedded: ...
