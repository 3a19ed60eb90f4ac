"""Any OpenAI-compatible server as the town's language model: OpenAI, Ollama, vLLM, llama-server,
LM Studio (docs/architecture.md tells how). A reply's problems are reported, not raised, so the
checking layer can repair or fall back.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx2
import numpy as np
import openai
from openai.types.chat import ChatCompletion

from townbot.llm.cache import LruCache
from townbot.llm.local_embedding import MiniLMEmbedder
from townbot.llm.port import (
    AnswerT,
    Ask,
    CallContext,
    CallFailed,
    Embedded,
    LanguageModel,
    ModelConfigError,
    ModelReport,
    Reply,
    ServerUnavailable,
    answer_from_reply,
    estimate_tokens,
    usable,
)
from townbot.llm.settings import OPENAI_URL, ModelSettings
from townbot.llm.structured import chat_messages, read_answer, response_format

ResultT = TypeVar("ResultT")
PROBE_TEXT = "townbot embedding dimension probe"
# Concurrency before the start-up check has measured what the server serves at once.
UNMEASURED_CONCURRENCY = 4


class GarbledResponse(Exception):
    """A 200 response whose body is not what the endpoint returns; retried like a 5xx."""


# Worth another try: the server was busy, failing, slow, unreachable or sent a broken body.
RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError,
             openai.APIResponseValidationError, GarbledResponse)
SILENT_TIMEOUTS = 2  # a server silent for this many timeouts (of any calls) is down


@dataclass(frozen=True)
class Backoff:
    """Waits between tries: exponential with jitter; a server's Retry-After is honoured up to a cap."""

    base: float = 0.5
    cap: float = 8.0
    longest_retry_after: float = 30.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(0.0, retry_after), self.longest_retry_after)
        return min(self.cap, self.base * 2 ** attempt) * random.uniform(0.5, 1.0)


@dataclass
class ServerStats:
    """What the servers did this session: requests sent, retries, and the errors behind them.
    `in_a_row` counts calls the server never answered through their retries since the last
    answer; `mended` counts replies whose slightly-off values were mended (judging)."""

    requests: int = 0
    retries: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    in_a_row: int = 0
    mended: int = 0
    last_error: str = ""

    def describe(self) -> str:
        errors = ", ".join(f"{kind}: {count}" for kind, count in sorted(self.errors.items()))
        mended = f", {self.mended} replies mended" if self.mended else ""
        return (f"server: {self.requests} requests, {self.retries} retries"
                + (f" ({errors})" if errors else "") + mended)


def _error_kind(error: Exception) -> str:
    if isinstance(error, openai.APITimeoutError):
        return "timeout"
    if isinstance(error, openai.APIConnectionError):
        return "connection"
    if isinstance(error, openai.APIStatusError):
        return str(error.status_code) if error.status_code < 500 else "5xx"
    return "garbled"


def _retry_after(error: Exception) -> float | None:
    if not isinstance(error, openai.APIStatusError):
        return None
    try:
        return float(error.response.headers.get("retry-after", ""))
    except ValueError:
        return None


def brief(error: Exception) -> str:
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    return " ".join(message.split())[:200]


def refused_key(url: str, error: openai.APIStatusError) -> ModelConfigError:
    return ModelConfigError(f"{url} refused the API key ({error.status_code}: {brief(error)}); set "
                            "TOWNBOT_API_KEY (or OPENAI_API_KEY) to a key it accepts")


class Endpoint:
    """One server: its client, a concurrency limit, and retries with backoff."""

    def __init__(self, client: openai.AsyncOpenAI, url: str, settings: ModelSettings,
                 backoff: Backoff, stats: ServerStats) -> None:
        self.client = client
        self.url = url
        self.max_retries = settings.max_retries
        self.backoff = backoff
        self.stats = stats
        self.max_failures = settings.max_failures  # 0: never give up on the server
        # A server that stopped answering is down once requests timed out (two at least, of any
        # calls at once) and nothing was answered for this long: two timeouts' worth, not
        # every waiting call's retries one after another (22 minutes at the defaults).
        self.silent_after = SILENT_TIMEOUTS * settings.timeout
        self._timeouts = 0  # requests timed out since the last answer
        self._last_answer = time.monotonic()
        self.limit(settings.concurrency or UNMEASURED_CONCURRENCY)

    def limit(self, concurrency: int) -> None:
        """Serve this many requests at once from now on (set before the town starts)."""
        self._slots = asyncio.Semaphore(concurrency)

    def revive(self) -> None:
        """The server answered (a call, or a check after a stop): its failures start afresh."""
        self.stats.in_a_row = 0
        self._timeouts = 0
        self._last_answer = time.monotonic()

    def _refuse_when_down(self) -> None:
        if not self.max_failures:
            return
        quiet = time.monotonic() - self._last_answer
        if self._timeouts >= SILENT_TIMEOUTS and quiet >= self.silent_after:
            raise ServerUnavailable(
                f"{self.url} has answered nothing for {quiet:.0f} s ({self._timeouts} requests "
                "timed out); check that the server is running and answering, or raise "
                "TOWNBOT_TIMEOUT for a slow one (TOWNBOT_MAX_FAILURES=0 never stops a run)")
        if self.stats.in_a_row >= self.max_failures:
            raise ServerUnavailable(
                f"{self.url} failed {self.stats.in_a_row} calls in a row (last: "
                f"{self.stats.last_error}); check that the server is running and answering, or "
                "raise TOWNBOT_TIMEOUT for a slow one (TOWNBOT_MAX_FAILURES sets how many "
                "failures in a row stop a run)")

    async def call(self, send: Callable[[], Awaitable[ResultT]], setting: str,
                   model: str) -> tuple[ResultT, int]:
        """The result and how many requests it took; CallFailed when every try failed, and
        ServerUnavailable once `max_failures` calls in a row have failed."""
        self._refuse_when_down()
        for attempt in range(self.max_retries + 1):
            try:
                # The timeout runs from here, inside the limit: a request waiting for a slot
                # has not been sent, so it cannot time out.
                async with self._slots:
                    self.stats.requests += 1
                    result = await send()
                self.revive()
                return result, attempt + 1
            except (openai.APIError, GarbledResponse) as error:
                if isinstance(error, openai.APITimeoutError):
                    self._timeouts += 1
                    self._refuse_when_down()  # other calls' timeouts count too
                delay = self._delay_or_raise(error, attempt, setting, model)
            self.stats.retries += 1
            await asyncio.sleep(delay)  # outside the limit: others may use the server meanwhile
        raise AssertionError("unreachable: the last try returns or raises")

    def _delay_or_raise(self, error: Exception, attempt: int, setting: str, model: str) -> float:
        """How long to wait before trying again; raises when another try cannot help."""
        self._refuse_settings(error, setting, model)
        kind = _error_kind(error)
        self.stats.errors[kind] += 1
        transient = isinstance(error, RETRYABLE) or (
            isinstance(error, openai.APIStatusError) and error.status_code in (408, 409))
        if not transient:
            raise CallFailed(f"{self.url} rejected a request to {model}: {brief(error)}") from None
        if attempt == self.max_retries:  # the server itself failed the call, not the request
            self.stats.in_a_row += 1
            self.stats.last_error = (f"{self.url} did not answer {model} after {attempt + 1} tries "
                                     f"(last: {kind}: {brief(error)})")
            self._refuse_when_down()
            raise CallFailed(self.stats.last_error) from None
        return self.backoff.delay(attempt, _retry_after(error))

    def _refuse_settings(self, error: Exception, setting: str, model: str) -> None:
        """Errors no retry can fix become ModelConfigError naming the setting to change."""
        if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
            raise refused_key(self.url, error) from None
        if isinstance(error, openai.NotFoundError):
            raise ModelConfigError(
                f"{self.url} has no model '{model}' or no such endpoint (404: {brief(error)}); set "
                f"{setting} to a model the server serves, and check that TOWNBOT_BASE_URL is its "
                "OpenAI-compatible base (usually ending in /v1)") from None
        if isinstance(error, openai.BadRequestError) and re.search(
                r"response_format|json_schema|json_object", brief(error), re.IGNORECASE):
            raise ModelConfigError(
                f"{self.url} does not accept the structured-output request for {model} "
                f"({brief(error)}); set TOWNBOT_STRUCTURED_OUTPUT=json_object, or =prompt for a "
                "server with no JSON mode") from None


# --- the model ------------------------------------------------------------------------------


class OpenAIModel(LanguageModel):
    """A LanguageModel over OpenAI-compatible endpoints."""

    def __init__(self, settings: ModelSettings, *, http_client: httpx2.AsyncClient | None = None,
                 backoff: Backoff | None = None) -> None:
        if settings.chat_model is None:
            raise ValueError("OpenAIModel needs a chat model; without one use the offline model")
        self.settings = settings
        self.stats = ServerStats()
        self.label = f"{settings.chat_model} at {settings.base_url}"
        backoff = backoff or Backoff()
        self.chat = self._endpoint(settings.base_url, settings.api_key, http_client, backoff)
        self.embeddings: Endpoint | None = None
        self._local_embedder: MiniLMEmbedder | None = None
        self._vectors: LruCache[np.ndarray] = LruCache(8192)  # unit vectors by text
        if settings.embedding_model is None:
            # Relevance by meaning on this machine (the hashing embedder only matches words).
            self._local_embedder = MiniLMEmbedder()
            self.embedding_model = self._local_embedder.name
            self.embedding_dim = self._local_embedder.dim
        else:
            url = settings.embedding_base_url or settings.base_url
            self.embeddings = self.chat if url == settings.base_url else self._endpoint(
                url, settings.embedding_api_key or settings.api_key, None, backoff)
            self.embedding_model = settings.embedding_model
            self.embedding_dim = settings.embedding_dimensions or 0  # 0 until prepare() asks

    def _endpoint(self, url: str, key: str | None, http_client: httpx2.AsyncClient | None,
                  backoff: Backoff) -> Endpoint:
        client = openai.AsyncOpenAI(api_key=key, base_url=url, timeout=self.settings.timeout,
                                    max_retries=0, http_client=http_client)
        return Endpoint(client, url, self.settings, backoff, self.stats)

    def model_for(self, purpose: str) -> str:
        return self.settings.model_for(purpose)

    def report(self) -> ModelReport:
        return ModelReport(server=self.stats.describe())

    async def prepare(self) -> None:
        """Learn the embedding dimension from the server when the settings do not give it."""
        if self.embeddings is None or self.embedding_dim:
            return
        try:
            probe = await self._embed_batch([PROBE_TEXT])
        except CallFailed as error:
            raise ModelConfigError(
                f"could not reach the embedding model '{self.embedding_model}': {error}; check "
                "TOWNBOT_EMBEDDING_MODEL and TOWNBOT_BASE_URL (or TOWNBOT_EMBEDDING_BASE_URL)") from None
        self.embedding_dim = int(probe.vectors.shape[1])

    async def close(self) -> None:
        await self.chat.client.close()
        if self.embeddings is not None and self.embeddings is not self.chat:
            await self.embeddings.client.close()

    # --- answers --------------------------------------------------------------------------------

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        """The answer, or the ask's default when there is no usable one (no repair here)."""
        answer = await answer_from_reply(self, request)
        return answer if usable(request, answer) is None else request.default()

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        model = self.model_for(request.purpose)
        arguments = self.chat_arguments(request, model)

        async def send() -> ChatCompletion:
            completion = await self.chat.client.chat.completions.create(**arguments)
            if not isinstance(completion, ChatCompletion) or not completion.choices:
                raise GarbledResponse(f"the server's reply was not a chat completion: {completion!r:.80}")
            return completion

        setting = "TOWNBOT_SMALL_MODEL" if model != self.settings.chat_model else "TOWNBOT_CHAT_MODEL"
        completion, requests = await self.chat.call(send, setting, model)
        return self._read(request, model, arguments["messages"], completion, requests)

    def chat_arguments(self, request: Ask, model: str, mode: str | None = None,
                       max_tokens: int | None = None) -> dict[str, Any]:
        mode = mode or self.settings.structured_output
        arguments: dict[str, Any] = {"model": model, "messages": chat_messages(request, mode)}
        if (answer_format := response_format(request, mode)) is not None:
            arguments["response_format"] = answer_format
        # OpenAI's newer models accept only max_completion_tokens; other servers know max_tokens.
        limit = "max_completion_tokens" if self.settings.base_url == OPENAI_URL else "max_tokens"
        arguments[limit] = max_tokens or self.settings.max_tokens
        if self.settings.temperature is not None:
            arguments["temperature"] = self.settings.temperature
        return arguments

    def _read(self, request: Ask[AnswerT], model: str, messages: list[dict[str, str]],
              completion: ChatCompletion, requests: int) -> Reply[AnswerT]:
        choice = completion.choices[0]
        content = choice.message.content or ""
        usage = completion.usage
        cached = 0
        if usage is not None:
            prompt_tokens, completion_tokens, estimated = usage.prompt_tokens, usage.completion_tokens, False
            details = getattr(usage, "prompt_tokens_details", None)  # OpenAI's and vLLM's
            cached = int(getattr(details, "cached_tokens", None) or 0)
        else:
            prompt_tokens = estimate_tokens(" ".join(m["content"] for m in messages))
            completion_tokens, estimated = estimate_tokens(content), True

        def reply(answer: AnswerT | None, problem: str | None = None, kind: str | None = None) -> Reply:
            return Reply(answer, model, prompt_tokens, completion_tokens, estimated, problem, kind,
                         requests, raw=content, cached_tokens=cached)

        if not content.strip():
            if refusal := getattr(choice.message, "refusal", None):
                return reply(None, f"it was a refusal ({' '.join(refusal.split())[:120]})", "refused")
            if choice.finish_reason == "length":
                return reply(None, "it was cut off before any answer; answer at once, briefly", "cut_off")
            return reply(None, "it was empty", "empty")
        answer, problem, kind, mended = read_answer(request, content)
        self.stats.mended += bool(mended)
        if answer is None and choice.finish_reason == "length":
            return reply(None, f"it was cut off at the length limit after {completion_tokens} tokens; "
                               "give a shorter answer", "cut_off")
        return reply(answer, problem, kind)

    # --- embeddings -----------------------------------------------------------------------------

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        return (await self.embed_report(texts)).vectors

    async def embed_report(self, texts: Sequence[str],
                           call: CallContext | None = None) -> Embedded:
        if self._local_embedder is not None:
            return Embedded(self._local_embedder.embed(list(texts)), self.embedding_model)
        # A text repeated within one call is embedded once and counts as a hit.
        found = {text: vector for text in dict.fromkeys(texts)
                 if (vector := self._vectors.get(text)) is not None}
        wanted = [text for text in dict.fromkeys(texts) if text not in found]
        hits = len(texts) - len(wanted)
        size = self.settings.embedding_batch
        batches = [wanted[i:i + size] for i in range(0, len(wanted), size)]
        results = await asyncio.gather(*(self._embed_or_none(batch) for batch in batches))
        failed: set[str] = set()
        for batch, result in zip(batches, results, strict=True):
            if result is None:
                failed.update(batch)
                continue
            for text, vector in zip(batch, result.vectors, strict=True):
                vector.setflags(write=False)  # shared by every later hit
                found[text] = vector
                self._vectors.put(text, vector)
        zero = np.zeros(self.embedding_dim, dtype=np.float32)
        vectors = np.stack([found.get(t, zero) for t in texts]) if texts else \
            np.zeros((0, self.embedding_dim), dtype=np.float32)
        done = [result for result in results if result is not None]
        return Embedded(vectors, self.embedding_model, sum(r.prompt_tokens for r in done),
                        any(r.estimated for r in done), sum(r.requests for r in done), hits,
                        sum(1 for t in texts if t in failed))

    async def _embed_or_none(self, batch: list[str]) -> Embedded | None:
        """A batch's vectors, or None when the server stayed unavailable (the texts get zeros)."""
        try:
            return await self._embed_batch(batch)
        except CallFailed:
            return None

    def embedding_arguments(self, inputs: list[str]) -> dict[str, Any]:
        dimensions = self.settings.embedding_dimensions
        return {"model": self.embedding_model, "input": inputs, "encoding_format": "float",
                **({"dimensions": dimensions} if dimensions else {})}

    async def _embed_batch(self, batch: list[str]) -> Embedded:
        assert self.embeddings is not None
        endpoint = self.embeddings
        inputs = [text if text.strip() else "(nothing)" for text in batch]  # servers refuse ""

        async def send() -> Any:
            response = await endpoint.client.embeddings.create(**self.embedding_arguments(inputs))
            data = getattr(response, "data", None)
            if not isinstance(data, list) or len(data) != len(batch):
                raise GarbledResponse(f"expected {len(batch)} embeddings, got {response!r:.80}")
            return response

        response, requests = await endpoint.call(send, "TOWNBOT_EMBEDDING_MODEL", self.embedding_model)
        ordered = sorted(response.data, key=lambda item: item.index)
        matrix = np.asarray([item.embedding for item in ordered], dtype=np.float32)
        if self.embedding_dim and matrix.shape[1] != self.embedding_dim:
            raise ModelConfigError(
                f"the embedding model '{self.embedding_model}' returned vectors of {matrix.shape[1]} "
                f"dimensions, not the {self.embedding_dim} this town stores; configure the model "
                "the town was embedded with, or run `townbot reembed --db PATH`")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = matrix / np.where(norms == 0, 1.0, norms)  # retrieval assumes unit vectors
        usage = getattr(response, "usage", None)
        if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
            return Embedded(matrix, self.embedding_model, int(usage.prompt_tokens), False, requests)
        return Embedded(matrix, self.embedding_model, sum(estimate_tokens(t) for t in inputs), True,
                        requests)
