"""One interface for everything the mind asks of a language model."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel

AnswerT = TypeVar("AnswerT", bound=BaseModel)


def estimate_tokens(text: str) -> int:
    """About four characters a token, as OpenAI's tokenizers average on English."""
    return max(1, len(text) // 4)


# Outcomes of asks the model was asked (cached, skipped and over-budget ones were not), and of
# those, the ones answered by the safe default.
ASKED = frozenset({"ok", "repaired", "fallback", "failed"})
DEFAULTED = frozenset({"fallback", "failed"})


class UsageRecord(NamedTuple):
    """What one call cost and how it ended."""

    purpose: str
    agent: str | None
    game_day: int
    model: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    latency_ms: float
    outcome: str  # ok | repaired | fallback | failed | cached | skipped | over_budget
    cached_tokens: int = 0  # prompt tokens the server read from its prefix cache, when it says


class UsageSink(Protocol):
    """Where the records of a caller's calls go (the engine's writes them to its database)."""

    def record(self, record: UsageRecord) -> None: ...


@dataclass(frozen=True)
class CallContext:
    """Who a call is for: it travels with the call, so the model layer keeps no town state.
    `purpose` names an embedding call (an ask has its own); `usage` None: the stack's sink."""

    agent: str | None = None
    game_day: int | None = None
    purpose: str = "embedding"
    usage: UsageSink | None = None


@dataclass(frozen=True)
class Ask(Generic[AnswerT]):
    """One question: a purpose tag, the rendered prompt, the answer's schema.

    `context` is the typed question the prompt was rendered from (a purpose's `Question`): a
    real model reads only the prompt, the offline model answers from the context. `check`
    complains about a well-formed but unusable answer (a place not among the options).
    """

    purpose: str
    prompt: str
    schema: type[AnswerT]
    default: Callable[[], AnswerT]
    context: Any = None
    agent: str | None = None
    check: Callable[[AnswerT], str | None] | None = None
    optional: bool = False
    game_day: int | None = None  # the call's context: set by the caller (the engine's stamp)
    usage: UsageSink | None = None

    def within(self, call: CallContext) -> Ask[AnswerT]:
        """This ask with the caller's context filled in where the ask has none of its own."""
        return replace(self, agent=call.agent if self.agent is None else self.agent,
                       game_day=call.game_day if self.game_day is None else self.game_day,
                       usage=call.usage if self.usage is None else self.usage)


def usable(request: Ask[AnswerT], answer: AnswerT) -> str | None:
    """Why an answer cannot be used, or None when it can."""
    return request.check(answer) if request.check else None


class ModelError(Exception):
    """The model could not be used for a call."""


class CallFailed(ModelError):
    """No answer for this call (the server stayed unavailable through the retries, or refused
    it): the checking layer answers with the safe default."""


class ServerUnavailable(ModelError):
    """The server failed so many calls in a row that the run cannot go on usefully (raised by
    the OpenAI client; its home is here so that catching it does not import openai)."""


class ModelConfigError(ModelError):
    """The settings cannot work (a refused key, an unknown model): the message says what to
    change. It stops the run, because every further call would fail the same way."""


@dataclass(frozen=True)
class Reply(Generic[AnswerT]):
    """One answer as the server gave it, with what it cost; `answer` is None when `problem`
    says why it cannot be used."""

    answer: AnswerT | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    problem: str | None = None
    problem_kind: str | None = None  # cut_off | invalid_json | wrong_shape | refused | empty
    requests: int = 1
    outcome: str = "ok"  # set by the layers: ok | repaired | fallback | failed | cached | ...
    raw: str | None = None  # the reply's text as the server sent it (for recordings)
    cached_tokens: int = 0  # of prompt_tokens, those the server had cached (when it reports it)


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


@dataclass(frozen=True)
class Pressure:
    """The most used budget cap: its share used, and words for it."""

    fraction: float
    used: int
    cap: int
    what: str  # e.g. "calls on game day 2"


class Spending(Protocol):
    """What readers of a report ask of the budget in force (`budget.Budget`)."""

    def restore(self, rows: Iterable[Mapping[str, Any]]) -> None: ...
    def pressure(self, day: int) -> Pressure | None: ...
    def level(self, day: int) -> str: ...
    def status(self, day: int) -> str: ...
    def caps_used(self, day: int) -> list[str]: ...
    def change_line(self, before: str, after: str, day: int) -> str: ...


@dataclass(frozen=True)
class ModelReport:
    """What a model stack counted this session, each part filled in by the layer that owns it."""

    outcomes: Mapping[str, int] = field(default_factory=dict)
    fallbacks: Mapping[str, int] = field(default_factory=dict)
    problems: Mapping[str, int] = field(default_factory=dict)
    last_failure: str | None = None
    budget: Spending | None = None
    server: str | None = None


class LanguageModel(ABC):
    """What every model offers the mind: answers and embeddings, plus optional capabilities
    with defaults (so a wrapper never has to probe what its inner model can do). The default
    `reply` estimates its tokens; the default `embed_report` reports local embeddings as free."""

    label: str
    embedding_model: str
    embedding_dim: int

    @abstractmethod
    async def ask(self, request: Ask[AnswerT]) -> AnswerT: ...

    @abstractmethod
    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray: ...

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        answer = await self.ask(request)
        return Reply(answer, self.label, estimate_tokens(request.prompt),
                     estimate_tokens(answer.model_dump_json()), estimated=True)

    async def embed_report(self, texts: Sequence[str],
                           call: CallContext | None = None) -> Embedded:
        return Embedded(await self.embed(texts, call), self.embedding_model)

    async def prepare(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def model_for(self, purpose: str) -> str:
        return self.label

    def report(self) -> ModelReport:
        return ModelReport()


async def answer_from_reply(model: LanguageModel, request: Ask[AnswerT]) -> AnswerT:
    """`ask` for a model whose answers come from its `reply`: the reply's answer, or the ask's
    default when the call failed or gave no answer."""
    try:
        reply = await model.reply(request)
    except CallFailed:
        return request.default()
    return reply.answer if reply.answer is not None else request.default()


class Layer(LanguageModel):
    """A model wrapped around another: everything passes through unless a layer changes it."""

    def __init__(self, inner: LanguageModel) -> None:
        self.inner = inner

    # The inner model may learn its embedding dimension only when it connects (prepare).
    @property
    def label(self) -> str:  # type: ignore[override]
        return self.inner.label

    @property
    def embedding_model(self) -> str:  # type: ignore[override]
        return self.inner.embedding_model

    @property
    def embedding_dim(self) -> int:  # type: ignore[override]
        return self.inner.embedding_dim

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        reply = await self.reply(request)
        return reply.answer if reply.answer is not None else request.default()

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        return await self.inner.reply(request)

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        return (await self.embed_report(texts, call)).vectors

    async def embed_report(self, texts: Sequence[str],
                           call: CallContext | None = None) -> Embedded:
        return await self.inner.embed_report(texts, call)

    async def prepare(self) -> None:
        await self.inner.prepare()

    async def close(self) -> None:
        await self.inner.close()

    def model_for(self, purpose: str) -> str:
        return self.inner.model_for(purpose)

    def report(self) -> ModelReport:
        return self.inner.report()
