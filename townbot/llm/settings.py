"""Which language model to use and how: environment variables over an optional townbot.toml.

Every setting has a key in the `[llm]` table of `townbot.toml` and an environment variable;
the variable wins. A value that cannot be used stops the program with a message that names
the setting and shows a value that would work. With no chat model configured the town runs
on the offline model.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

OPENAI_URL = "https://api.openai.com/v1"
STRUCTURED_MODES = ("json_schema", "json_object", "prompt")
MODE_SETTINGS = (*STRUCTURED_MODES, "auto")  # auto: the best mode the start-up check finds
# A local server ignores the key but the openai client refuses to start without one.
LOCAL_DUMMY_KEY = "not-needed"
CONFIG_ENV = "TOWNBOT_CONFIG"
DEFAULT_CONFIG = "townbot.toml"


class SettingsError(Exception):
    """A setting cannot be used; the message names it and shows a value that would work."""


@dataclass(frozen=True)
class Prices:
    """US dollars per million tokens, for the estimated price in usage summaries."""

    prompt: float = 0.0
    completion: float = 0.0
    small_prompt: float | None = None  # None: the small model costs what the chat model costs
    small_completion: float | None = None
    embedding: float = 0.0

    @property
    def any(self) -> bool:
        return any(v for v in (self.prompt, self.completion, self.small_prompt,
                               self.small_completion, self.embedding))


@dataclass(frozen=True)
class Caps:
    """Optional budget caps; None means no cap. Reaching a cap never stops the town."""

    calls_per_town: int | None = None
    calls_per_day: int | None = None
    tokens_per_town: int | None = None
    tokens_per_day: int | None = None
    # From this share of any cap on, optional asks are skipped to save the rest for essential ones.
    soft_fraction: float = 0.8

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.calls_per_town, self.calls_per_day,
                                           self.tokens_per_town, self.tokens_per_day))


@dataclass(frozen=True)
class ModelSettings:
    chat_model: str | None = None
    base_url: str = OPENAI_URL
    api_key: str | None = None
    small_model: str | None = None
    small_purposes: tuple[str, ...] = ("importance",)
    embedding_model: str | None = None
    embedding_base_url: str | None = None
    embedding_api_key: str | None = None
    embedding_dimensions: int | None = None
    embedding_batch: int = 64
    structured_output: str = "json_schema"
    timeout: float = 60.0
    max_retries: int = 3
    concurrency: int | None = None  # None: what the start-up check measured
    max_failures: int = 10  # calls in a row the server fails before a run stops (0: never)
    max_unusable: float = 0.7  # share of the last 100 answers from defaults that stops a run
    max_tokens: int = 1024
    temperature: float | None = None
    prices: Prices = field(default_factory=Prices)
    caps: Caps = field(default_factory=Caps)

    @property
    def offline(self) -> bool:
        return self.chat_model is None

    def model_for(self, purpose: str) -> str:
        assert self.chat_model is not None, "the offline model has no model names"
        if self.small_model and purpose in self.small_purposes:
            return self.small_model
        return self.chat_model

    def describe(self) -> str:
        """One line naming the models actually used, for the first line of `townbot sim`."""
        if self.offline:
            return "offline model"
        parts = [f"{self.chat_model} at {self.base_url}"]
        if self.small_model and self.small_model != self.chat_model:
            parts.append(f"{self.small_model} for {', '.join(self.small_purposes)}")
        embeddings = (f"embeddings {self.embedding_model}" if self.embedding_model
                      else "local MiniLM embeddings")
        if self.embedding_model and self.embedding_base_url not in (None, self.base_url):
            embeddings += f" at {self.embedding_base_url}"
        parts += [embeddings, f"structured output {self.structured_output}"]
        return "; ".join(parts)


# --- parsing one value ----------------------------------------------------------------------


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{where} must be a non-empty text, got {value!r}")
    return value.strip()


def _url(value: Any, where: str) -> str:
    text = _text(value, where).rstrip("/")
    if not text.startswith(("http://", "https://")):
        raise SettingsError(f"{where}={value!r} is not a URL; use e.g. http://localhost:11434/v1 "
                            "(the server's OpenAI-compatible base, usually ending in /v1)")
    return text


def _number(low: float, high: float, example: str, *, integer: bool = False,
            ) -> Callable[[Any, str], float | int]:
    def parse(value: Any, where: str) -> float | int:
        try:
            number = int(value) if integer else float(value)
        except (TypeError, ValueError):
            kind = "a whole number" if integer else "a number"
            raise SettingsError(f"{where}={value!r} is not {kind}; use e.g. {example}") from None
        if not low <= number <= high:
            raise SettingsError(f"{where}={value!r} is out of range {low:g} to {high:g}; "
                                f"use e.g. {example}")
        return number
    return parse


def _mode(value: Any, where: str) -> str:
    text = _text(value, where).lower()
    if text not in MODE_SETTINGS:
        raise SettingsError(f"{where}={value!r} is not a structured-output mode; use one of "
                            f"{', '.join(MODE_SETTINGS)} (json_schema for OpenAI, vLLM, Ollama "
                            ">= 0.5 and llama-server; json_object for llama-cpp-python; prompt "
                            "for servers with neither; auto to let the start-up check choose)")
    return text


def _names(value: Any, where: str) -> tuple[str, ...]:
    items = value if isinstance(value, list) else str(value).split(",")
    names = tuple(str(item).strip() for item in items if str(item).strip())
    if not names:
        raise SettingsError(f"{where} names no purpose; use e.g. importance")
    return names


@dataclass(frozen=True)
class Spec:
    key: str  # in the [llm] table of townbot.toml
    env: tuple[str, ...]  # environment variables, first found wins
    parse: Callable[[Any, str], Any]


def _numeric(key: str, env: str, low: float, high: float, example: str, *,
             integer: bool = False) -> Spec:
    """A number's setting; `example` is a good value, shown as `env=example` in errors."""
    return Spec(key, (env,), _number(low, high, f"{env}={example}", integer=integer))


SPECS = [
    Spec("chat_model", ("TOWNBOT_CHAT_MODEL",), _text),
    Spec("base_url", ("TOWNBOT_BASE_URL",), _url),
    Spec("api_key", ("TOWNBOT_API_KEY", "OPENAI_API_KEY"), _text),
    Spec("small_model", ("TOWNBOT_SMALL_MODEL",), _text),
    Spec("small_purposes", ("TOWNBOT_SMALL_PURPOSES",), _names),
    Spec("embedding_model", ("TOWNBOT_EMBEDDING_MODEL",), _text),
    Spec("embedding_base_url", ("TOWNBOT_EMBEDDING_BASE_URL",), _url),
    Spec("embedding_api_key", ("TOWNBOT_EMBEDDING_API_KEY",), _text),
    _numeric("embedding_dimensions", "TOWNBOT_EMBEDDING_DIMENSIONS", 8, 16384, "512", integer=True),
    _numeric("embedding_batch", "TOWNBOT_EMBEDDING_BATCH", 1, 2048, "64", integer=True),
    Spec("structured_output", ("TOWNBOT_STRUCTURED_OUTPUT",), _mode),
    _numeric("timeout", "TOWNBOT_TIMEOUT", 0.1, 3600, "60 (seconds)"),
    _numeric("max_retries", "TOWNBOT_MAX_RETRIES", 0, 20, "3", integer=True),
    _numeric("concurrency", "TOWNBOT_CONCURRENCY", 1, 1024,
             "8 (1 for a server that serves one request at a time)", integer=True),
    _numeric("max_failures", "TOWNBOT_MAX_FAILURES", 0, 100000, "10 (0 never stops)", integer=True),
    _numeric("max_unusable", "TOWNBOT_MAX_UNUSABLE", 0, 1, "0.7 (1 never stops)"),
    _numeric("max_tokens", "TOWNBOT_MAX_TOKENS", 16, 200000, "1024", integer=True),
    _numeric("temperature", "TOWNBOT_TEMPERATURE", 0, 2, "0.7"),
]
PRICE_SPECS = [
    _numeric("prompt", "TOWNBOT_PRICE_PROMPT", 0, 1e4, "0.15"),
    _numeric("completion", "TOWNBOT_PRICE_COMPLETION", 0, 1e4, "0.6"),
    _numeric("small_prompt", "TOWNBOT_SMALL_PRICE_PROMPT", 0, 1e4, "0.1"),
    _numeric("small_completion", "TOWNBOT_SMALL_PRICE_COMPLETION", 0, 1e4, "0.4"),
    _numeric("embedding", "TOWNBOT_PRICE_EMBEDDING", 0, 1e4, "0.02"),
]
CAP_SPECS = [
    _numeric("calls_per_town", "TOWNBOT_MAX_CALLS_PER_TOWN", 1, 1e12, "20000", integer=True),
    _numeric("calls_per_day", "TOWNBOT_MAX_CALLS_PER_DAY", 1, 1e12, "2000", integer=True),
    _numeric("tokens_per_town", "TOWNBOT_MAX_TOKENS_PER_TOWN", 1, 1e15, "50000000", integer=True),
    _numeric("tokens_per_day", "TOWNBOT_MAX_TOKENS_PER_DAY", 1, 1e15, "5000000", integer=True),
    _numeric("soft_fraction", "TOWNBOT_BUDGET_SOFT", 0, 1, "0.8"),
]


# --- reading the sources --------------------------------------------------------------------


def read_config_file(path: Path) -> dict[str, Any]:
    """The `[llm]` table of a townbot.toml, or {} when the file does not exist."""
    if not path.exists():
        return {}
    import tomllib  # loaded only when there is a file to read: start-up without one skips it
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{path}: not valid TOML: {error}") from None
    table = data.get("llm", {})
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: [llm] must be a table of settings")
    return table


def _section(table: Mapping[str, Any], name: str, specs: list[Spec], env: Mapping[str, str],
             path: Path) -> dict[str, Any]:
    """Values of the [llm.NAME] table (or [llm] itself when name is empty), each overridden by
    its environment variable."""
    where = f"{path} [llm.{name}]" if name else f"{path} [llm]"
    section = table.get(name, {}) if name else table
    if not isinstance(section, dict):
        raise SettingsError(f"{path} [llm]: '{name}' must be a table, e.g. [llm.{name}]")
    known = [s.key for s in specs] + ([] if name else ["prices", "budget"])
    for key in section:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise SettingsError(f"{where}: unknown setting '{key}'{hint}; known: {', '.join(known)}")
    values: dict[str, Any] = {}
    for spec in specs:
        variable = next((each for each in spec.env if env.get(each, "").strip()), None)
        if variable is not None:
            values[spec.key] = spec.parse(env[variable], variable)
        elif spec.key in section:
            values[spec.key] = spec.parse(section[spec.key], f"{where} {spec.key}")
    return values


def load_settings(env: Mapping[str, str] | None = None, config: Path | None = None) -> ModelSettings:
    """Settings from `env` (default os.environ) over `config` (default ./townbot.toml)."""
    env = os.environ if env is None else env
    path = config or Path(env.get(CONFIG_ENV) or DEFAULT_CONFIG)
    if env.get(CONFIG_ENV) and not path.exists():
        raise SettingsError(f"{CONFIG_ENV}={env[CONFIG_ENV]!r}: no such file")
    table = read_config_file(path)
    settings = ModelSettings(**_section(table, "", SPECS, env, path),
                             prices=Prices(**_section(table, "prices", PRICE_SPECS, env, path)),
                             caps=Caps(**_section(table, "budget", CAP_SPECS, env, path)))
    return _complete(settings)


def _complete(settings: ModelSettings) -> ModelSettings:
    """Check settings that only make sense together and fill in keys for local servers."""
    if settings.chat_model is None:
        if settings.embedding_model is not None:
            raise SettingsError("TOWNBOT_EMBEDDING_MODEL is set but TOWNBOT_CHAT_MODEL is not; set a "
                                "chat model too (e.g. TOWNBOT_CHAT_MODEL=gpt-4o-mini), or unset "
                                "the embedding model to run on the offline model")
        return settings
    key = settings.api_key
    if key is None:
        if settings.base_url == OPENAI_URL:
            raise SettingsError("TOWNBOT_API_KEY (or OPENAI_API_KEY) is not set; OpenAI needs a key. "
                                "For a local server set TOWNBOT_BASE_URL, e.g. "
                                "TOWNBOT_BASE_URL=http://localhost:11434/v1")
        key = LOCAL_DUMMY_KEY
    return replace(settings, api_key=key,
                   embedding_base_url=settings.embedding_base_url or settings.base_url,
                   embedding_api_key=settings.embedding_api_key or key)


def setting_names() -> list[tuple[str, str]]:
    """(toml key, environment variable) of every setting, for documentation and error hints."""
    return [(table + spec.key, " / ".join(spec.env))
            for table, specs in (("", SPECS), ("prices.", PRICE_SPECS), ("budget.", CAP_SPECS))
            for spec in specs]
