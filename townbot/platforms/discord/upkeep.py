"""Settings for running the bot for a long time: rest when nobody is there, scheduled backups,
a shared REST proxy for every shard process, and the log format. Read from the same merged
environment as the rest of the Discord settings (`DiscordConfig.env`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from townbot.platforms.discord.config import ConfigError
from townbot.town.rest import IDLE_AFTER, IDLE_SPEED, RestSettingError, RestSettings, rest_settings

BACKUP_DIR = "TOWNBOT_BACKUP_DIR"
BACKUP_EVERY = "TOWNBOT_BACKUP_EVERY"
BACKUP_KEEP = "TOWNBOT_BACKUP_KEEP"
API_BASE = "TOWNBOT_DISCORD_API_BASE"
LOG_FORMAT = "TOWNBOT_LOG_FORMAT"
UPKEEP_VARIABLES = {
    IDLE_AFTER: "real seconds without anyone's activity before a town rests (default 900; "
                "0: never)",
    IDLE_SPEED: "how a resting town ticks: 'pause' (default) or real seconds per tick, e.g. 600",
    BACKUP_DIR: "take scheduled backups of every town into this folder (default: none)",
    BACKUP_EVERY: "real hours between scheduled backups (default 6)",
    BACKUP_KEEP: "scheduled backups kept per town, the newest (default 7)",
    API_BASE: "Discord's REST address for every request, e.g. a shared rate-limiting proxy at "
              "http://127.0.0.1:8080/api/v10 (default: Discord's own)",
    LOG_FORMAT: "'text' (default) or 'json', one object per line",
}


@dataclass(frozen=True)
class Upkeep:
    rest: RestSettings = field(default_factory=RestSettings)
    backup_dir: Path | None = None
    backup_every_hours: float = 6.0
    backup_keep: int = 7
    api_base: str | None = None
    log_format: str = "text"


def load_upkeep(env: Mapping[str, str]) -> Upkeep:
    try:
        rest = rest_settings(dict(env))
    except RestSettingError as error:
        raise ConfigError(str(error)) from None
    return Upkeep(rest=rest, backup_dir=_folder(env.get(BACKUP_DIR, "")),
                  backup_every_hours=_number(env, BACKUP_EVERY, 6.0, 0.01, 24 * 365, "6"),
                  backup_keep=int(_number(env, BACKUP_KEEP, 7, 1, 10_000, "7")),
                  api_base=_api_base(env.get(API_BASE, "")),
                  log_format=_log_format(env.get(LOG_FORMAT, "")))


def _folder(text: str) -> Path | None:
    return Path(text.strip()) if text.strip() else None


def _number(env: Mapping[str, str], name: str, default: float, low: float, high: float,
            example: str) -> float:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise ConfigError(f"{name}={text!r} is not usable; give a number from {low:g} to "
                          f"{high:g}, e.g. {name}={example}")
    return value


def _api_base(text: str) -> str | None:
    text = text.strip().rstrip("/")
    if not text:
        return None
    if not text.startswith(("http://", "https://")):
        raise ConfigError(f"{API_BASE}={text!r} is not a URL; e.g. "
                          f"{API_BASE}=http://127.0.0.1:8080/api/v10")
    return text


def _log_format(text: str) -> str:
    text = text.strip().lower() or "text"
    if text not in ("text", "json"):
        raise ConfigError(f"{LOG_FORMAT}={text!r} is not a log format; use text or json, e.g. "
                          f"{LOG_FORMAT}=json")
    return text


def use_api_base(base: str | None) -> None:
    """Send every REST request of this process (the bot's and its webhooks') to `base`: all
    shard processes can then share one rate-limiting proxy. discord.py builds each request's
    URL from the class attribute Route.BASE."""
    if base is None:
        return
    from discord.http import Route
    Route.BASE = base
