"""The start-up check of a language-model server, and what `townbot doctor` reports: tiny
requests in the structured-output modes, to the small model and for an embedding. What cannot
work stops the program with one message naming the setting and a value that would.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from townbot.llm.openai_client import OpenAIModel, brief, refused_key
from townbot.llm.port import LanguageModel, ModelConfigError, estimate_tokens
from townbot.llm.purposes.probe import ProbeQuestion
from townbot.llm.settings import STRUCTURED_MODES, ModelSettings
from townbot.llm.stack import find_layer
from townbot.llm.structured import read_answer

PARALLEL_PROBES = 4  # requests sent at once to see how many the server serves together
MEASURING_ROUNDS = 2
PROBE_TOKENS = 40
EXAMPLE_URL = "http://127.0.0.1:8080/v1"


@dataclass
class ModeResult:
    """How the server took one structured-output mode."""

    mode: str
    accepted: bool  # answered with 200
    followed: bool  # and the answer fitted the schema
    seconds: float = 0.0
    completion_tokens: int = 0
    detail: str = ""

    def describe(self) -> str:
        if not self.accepted:
            return f"{self.mode}: refused ({self.detail})"
        fit = "answered in the schema" if self.followed else f"answered off the schema ({self.detail})"
        return f"{self.mode}: {fit} in {self.seconds:.2f} s"


@dataclass
class ProbeReport:
    """What the check found out about the server."""

    url: str
    model: str
    modes: list[ModeResult] = field(default_factory=list)
    chosen: str | None = None
    parallel: int | None = None  # requests served at once (PARALLEL_PROBES means "at least")
    embedding_model: str | None = None
    embedding_dim: int | None = None
    embedding_seconds: float | None = None
    warm: ModeResult | None = None  # the quickest request while measuring

    @property
    def latency(self) -> float | None:
        tried = [*self.modes, *([self.warm] if self.warm else [])]
        return min((m.seconds for m in tried if m.accepted), default=None)

    @property
    def tokens_per_second(self) -> float | None:
        """Reply tokens per second of a tiny request, prompt included: a lower bound."""
        best = self.warm or next((m for m in self.modes if m.mode == self.chosen), None)
        if best is None or not best.seconds or not best.completion_tokens:
            return None
        return best.completion_tokens / best.seconds

    def best_mode(self) -> str | None:
        """json_schema over json_object over prompt; a mode whose answers fit comes first."""
        for wanted in (True, False):
            for mode in STRUCTURED_MODES:
                if any(m.mode == mode and m.accepted and m.followed == wanted for m in self.modes):
                    return mode
        return None

    def suggested_concurrency(self) -> int:
        if self.parallel is None:
            return 1
        return 8 if self.parallel >= PARALLEL_PROBES else self.parallel

    def suggestions(self, settings: ModelSettings) -> dict[str, Any]:
        """Settings for townbot.toml's [llm] table that suit this server."""
        suggested: dict[str, Any] = {"base_url": self.url, "chat_model": self.model}
        if self.chosen:
            suggested["structured_output"] = self.chosen
        suggested["concurrency"] = self.suggested_concurrency()
        if speed := self.tokens_per_second:
            # The longest answer at the measured speed, with half as much again to spare.
            needed = 1.5 * settings.max_tokens / speed
            suggested["timeout"] = int(min(600, max(30, round(needed, -1))))
        if self.embedding_model:
            suggested["embedding_model"] = self.embedding_model
        return suggested

    def describe(self) -> list[str]:
        lines = [f"server: {self.url}", f"chat model: {self.model}"]
        lines += [f"  {m.describe()}" for m in self.modes]
        lines.append(f"best structured output: {self.chosen or 'none works'}")
        if self.latency is not None:
            speed = self.tokens_per_second
            lines.append(f"latency of a tiny request: {self.latency:.2f} s"
                         + (f" (about {speed:.0f} tokens/s)" if speed else ""))
        if self.parallel is not None:
            at_once = (f"{self.parallel} or more" if self.parallel >= PARALLEL_PROBES
                       else str(self.parallel))
            lines.append(f"requests served at once: {at_once}")
        if self.embedding_model:
            lines.append(f"embeddings: {self.embedding_model}, {self.embedding_dim} dimensions, "
                         f"{self.embedding_seconds:.2f} s")
        else:
            lines.append("embeddings: none configured (the local embedder is used)")
        return lines


# --- one request ------------------------------------------------------------------------------


async def try_mode(client: OpenAIModel, mode: str, model: str | None = None) -> ModeResult:
    """One tiny request in a mode. Settings no mode can fix raise ModelConfigError."""
    model = model or client.settings.chat_model or ""
    request = ProbeQuestion().ask()
    arguments = client.chat_arguments(request, model, mode, max_tokens=PROBE_TOKENS)
    started = time.perf_counter()
    try:
        completion = await client.chat.client.chat.completions.create(**arguments)
    except openai.APIStatusError as error:
        await _refuse_settings(client, error, model)
        return ModeResult(mode, False, False, detail=f"{error.status_code}: {brief(error)[:120]}")
    except openai.APIConnectionError as error:
        raise _unreachable(client, error, client.settings.base_url, "TOWNBOT_BASE_URL") from None
    seconds = time.perf_counter() - started
    if not isinstance(completion, ChatCompletion) or not completion.choices:
        return ModeResult(mode, False, False, seconds, detail="the reply was not a chat completion")
    content = completion.choices[0].message.content or ""
    answer, problem, _, _ = read_answer(request, content)
    tokens = completion.usage.completion_tokens if completion.usage else estimate_tokens(content)
    return ModeResult(mode, True, answer is not None, seconds, tokens,
                      detail=problem or "")


async def _refuse_settings(client: OpenAIModel, error: openai.APIStatusError, model: str) -> None:
    url = client.settings.base_url
    if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
        raise refused_key(url, error) from None
    if isinstance(error, openai.NotFoundError):
        setting = "TOWNBOT_SMALL_MODEL" if model == client.settings.small_model else "TOWNBOT_CHAT_MODEL"
        served = await served_models(client)
        hint = f"set {setting}={served[0]}" if served else f"set {setting} to a model the server serves"
        if len(served) > 1:
            hint += f" (it serves {', '.join(served)})"
        raise ModelConfigError(
            f"{url} has no model '{model}' or no such endpoint (404: {brief(error)[:120]}); {hint}, "
            "and check that TOWNBOT_BASE_URL is its OpenAI-compatible base (usually ending in /v1)"
        ) from None


async def served_models(client: OpenAIModel) -> list[str]:
    """The model names the server lists at /models (empty when it lists none)."""
    try:
        page = await client.chat.client.models.list()
    except (openai.APIError, TypeError, ValueError):
        return []
    return [item.id for item in getattr(page, "data", []) if getattr(item, "id", None)][:8]


def _unreachable(client: OpenAIModel, error: Exception, url: str, setting: str) -> ModelConfigError:
    if isinstance(error, openai.APITimeoutError):
        return ModelConfigError(
            f"{url} did not answer a tiny request within {client.settings.timeout:g} s; check that "
            f"the server is working, or raise TOWNBOT_TIMEOUT (e.g. TOWNBOT_TIMEOUT=120) for a "
            "slow machine")
    return ModelConfigError(
        f"cannot connect to {url} ({brief(error)}); start the server there, or set {setting} to "
        f"the address it listens on (its OpenAI-compatible base, e.g. {EXAMPLE_URL})")


# --- the whole check --------------------------------------------------------------------------


async def start_up_check(client: OpenAIModel, *, every_mode: bool = False,
                         measure: bool | None = None) -> ProbeReport:
    """Probe the server as configured and adjust the client to what was found (the mode for
    `auto`, the measured concurrency, the embedding dimension); raise ModelConfigError naming
    what to change. `every_mode` tries all modes (doctor, and `auto`); `measure` (default: when
    the concurrency is not set) sends a few requests at once to see how many are served together.
    """
    settings = client.settings
    report = ProbeReport(settings.base_url, settings.chat_model or "")
    configured = settings.structured_output
    modes = STRUCTURED_MODES if every_mode or configured == "auto" else (configured,)
    report.modes = [await try_mode(client, mode) for mode in modes]
    if configured != "auto" and not report.modes[0].accepted and not every_mode:
        report.modes += [await try_mode(client, m) for m in STRUCTURED_MODES if m != configured]
    report.chosen = chosen = _chosen_mode(report, "auto" if every_mode else configured)
    if settings.small_model and settings.small_model != settings.chat_model:
        await try_mode(client, chosen, settings.small_model)
    if measure if measure is not None else settings.concurrency is None:
        report.parallel, report.warm = await measure_parallel(client, chosen)
    if settings.embedding_model:
        await check_embeddings(client, report)
    if settings.concurrency is None and report.parallel is not None:
        concurrency = report.suggested_concurrency()
        client.chat.limit(concurrency)
        if client.embeddings is not None and client.embeddings is not client.chat:
            client.embeddings.limit(concurrency)
    if configured == "auto":
        client.settings = replace(settings, structured_output=chosen)
    if report.embedding_dim and not client.embedding_dim:
        client.embedding_dim = report.embedding_dim
    return report


def _chosen_mode(report: ProbeReport, configured: str) -> str:
    best = report.best_mode()
    tried = "; ".join(m.describe() for m in report.modes)
    if best is None:
        raise ModelConfigError(f"{report.url} refused every structured-output request for "
                               f"{report.model} ({tried}); check TOWNBOT_CHAT_MODEL and the server's log")
    if configured == "auto":
        return best
    mine = next(m for m in report.modes if m.mode == configured)
    if not mine.accepted:
        raise ModelConfigError(
            f"{report.url} refuses structured output '{configured}' for {report.model} "
            f"({mine.detail}); set TOWNBOT_STRUCTURED_OUTPUT={best}, which it accepts "
            "(or TOWNBOT_STRUCTURED_OUTPUT=auto to choose at start)")
    return configured


async def measure_parallel(client: OpenAIModel, mode: str) -> tuple[int, ModeResult]:
    """How many requests the server serves at once, from PARALLEL_PROBES sent together: a
    server that takes them one at a time finishes them one after another (the first after a
    quarter of the time the last takes), one that serves them all finishes them together.
    The lower of two rounds counts (a busy machine makes it noisy, and too many at once costs
    timeouts where too few costs only speed). Also the quickest request, as the latency."""
    await try_mode(client, mode)  # a warm start: a first request in a mode may set it up
    estimates, results = [], []
    for _ in range(MEASURING_ROUNDS):
        round_results = await asyncio.gather(*(try_mode(client, mode) for _ in range(PARALLEL_PROBES)))
        times = [r.seconds for r in round_results if r.accepted and r.seconds > 0]
        # Rounded down: a busy client's own overhead only ever makes it look higher.
        share = PARALLEL_PROBES * min(times) / max(times) if len(times) == PARALLEL_PROBES else 1
        estimates.append(max(1, min(PARALLEL_PROBES, int(share + 0.05))))
        results += round_results
    fastest = min(results, key=lambda r: r.seconds if r.accepted else float("inf"))
    return min(estimates), fastest


async def check_embeddings(client: OpenAIModel, report: ProbeReport) -> None:
    settings = client.settings
    url = settings.embedding_base_url or settings.base_url
    endpoint = client.embeddings
    assert endpoint is not None
    started = time.perf_counter()
    try:
        response = await endpoint.client.embeddings.create(
            **client.embedding_arguments(["a quiet morning at the cafe"]))
    except openai.NotFoundError as error:
        raise ModelConfigError(
            f"{url} has no embedding model '{settings.embedding_model}' (404: {brief(error)[:120]}); "
            "set TOWNBOT_EMBEDDING_MODEL to one it serves, or unset it to embed locally") from None
    except openai.APIStatusError as error:
        raise ModelConfigError(
            f"{url} refused an embedding request for '{settings.embedding_model}' ({error.status_code}: "
            f"{brief(error)[:120]}); set TOWNBOT_EMBEDDING_MODEL to an embedding model it serves "
            "(or TOWNBOT_EMBEDDING_BASE_URL to a server with one), or unset it to embed locally"
        ) from None
    except openai.APIConnectionError as error:
        raise _unreachable(client, error, url, "TOWNBOT_EMBEDDING_BASE_URL") from None
    data = getattr(response, "data", None) or []
    dim = len(data[0].embedding) if data else 0
    if settings.embedding_dimensions and dim != settings.embedding_dimensions:
        raise ModelConfigError(
            f"'{settings.embedding_model}' at {url} returns vectors of {dim} dimensions, not "
            f"TOWNBOT_EMBEDDING_DIMENSIONS={settings.embedding_dimensions}; set "
            f"TOWNBOT_EMBEDDING_DIMENSIONS={dim} or leave it unset")
    report.embedding_model = settings.embedding_model
    report.embedding_dim = dim
    report.embedding_seconds = time.perf_counter() - started


async def answering_again(model: LanguageModel) -> bool:
    """Whether the server behind a stopped run (ServerUnavailable) answers a tiny request
    again; when it does, calls go through once more. True for a model with no server."""
    client = find_layer(model, OpenAIModel)
    if client is None:
        return True
    try:
        result = await try_mode(client, client.settings.structured_output)
    except ModelConfigError:
        return False
    if result.accepted:
        client.chat.revive()
        if client.embeddings is not None:
            client.embeddings.revive()
    return result.accepted
