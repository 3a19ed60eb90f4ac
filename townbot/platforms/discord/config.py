"""Discord settings (`DiscordConfig`) and the settings for running long (`Upkeep`: rest, backups,
a shared REST proxy, the log format), from the environment over an optional `.env` (the
environment wins). A value that cannot work is a `ConfigError` naming the variable and a value
that would."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from townbot.town.requests import SPEED_RANGE
from townbot.town.rest import IDLE_AFTER, IDLE_SPEED, RestSettingError, RestSettings, rest_settings

TOKEN = "DISCORD_TOKEN"
ALLOWED_GUILDS = "TOWNBOT_ALLOWED_GUILDS"
MODERATOR_ROLE = "TOWNBOT_MODERATOR_ROLE"
TICK_SECONDS = "TOWNBOT_TICK_SECONDS"
DATA_DIR = "TOWNBOT_DATA_DIR"
AVATAR_URL = "TOWNBOT_AVATAR_URL"
WEB_PORT = "TOWNBOT_WEB_PORT"
WEB_HOST = "TOWNBOT_WEB_HOST"
WEB_URL = "TOWNBOT_WEB_URL"
# Every variable read here; docs/discord.md explains each.
VARIABLES = (TOKEN, ALLOWED_GUILDS, MODERATOR_ROLE, TICK_SECONDS, DATA_DIR, AVATAR_URL, WEB_PORT,
             WEB_HOST, WEB_URL)
LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


class ConfigError(Exception):
    """A Discord setting cannot be used; the message names it and shows a value that works."""


@dataclass(frozen=True)
class DiscordConfig:
    token: str | None = None
    allowed_guilds: frozenset[int] = frozenset()  # empty: every server the bot is in
    moderator_role: str | None = None
    tick_seconds: float | None = None
    data_dir: Path = Path("data")
    avatar_url: str | None = None
    web_port: int | None = None
    web_host: str = "127.0.0.1"
    web_url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # merged, for the model settings too

    def allows(self, guild_id: int) -> bool:
        return not self.allowed_guilds or guild_id in self.allowed_guilds

    def database(self, guild_id: int) -> Path:
        return self.data_dir / f"{guild_id}.db"

    @property
    def serves_web(self) -> bool:
        """Whether the towns' web page is served and its address known, so links can be given."""
        return self.web_port is not None and self.web_url is not None

    def web_link(self, guild_id: int, token: str) -> str | None:
        """The page of a server's town under its token (TownService.web_link), when served."""
        if not self.serves_web:
            return None
        return f"{self.web_url.rstrip('/')}/town/{guild_id}/{token}/"  # type: ignore[union-attr]


def read_dotenv(path: Path) -> dict[str, str]:
    """KEY=VALUE lines; `#` comments, blank lines, `export ` and matching quotes are allowed."""
    if not path.exists():
        return {}
    values: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        match = LINE.match(raw)
        if match is None:
            raise ConfigError(f"{path}:{number}: expected KEY=VALUE, e.g. {TOKEN}=...; got "
                              f"{raw.strip()[:40]!r}")
        values[match.group(1)] = _unquote(match.group(2))
    return values


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return re.sub(r"\s+#.*$", "", value)  # an unquoted value may end in a comment


def load_config(environ: Mapping[str, str] | None = None,
                dotenv: Path = Path(".env")) -> DiscordConfig:
    env = {**read_dotenv(dotenv), **(os.environ if environ is None else environ)}
    avatar = env.get(AVATAR_URL, "").strip()  # a URL template, or "discord"
    return DiscordConfig(
        token=env.get(TOKEN) or None,
        allowed_guilds=_guild_ids(env.get(ALLOWED_GUILDS, "")),
        moderator_role=env.get(MODERATOR_ROLE, "").strip() or None,
        tick_seconds=_tick_seconds(env.get(TICK_SECONDS, "")),
        data_dir=Path(env.get(DATA_DIR) or "data"),
        avatar_url=avatar if avatar == "discord" else _url(
            AVATAR_URL, avatar, "https://example.org/avatars/{name}.png"),
        web_port=_web_port(env.get(WEB_PORT, "")),
        web_host=env.get(WEB_HOST, "").strip() or "127.0.0.1",
        web_url=_url(WEB_URL, env.get(WEB_URL, "").strip(), "https://town.example.org"),
        env=env)


def _guild_ids(text: str) -> frozenset[int]:
    ids = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        if not part.isdigit():
            raise ConfigError(f"{ALLOWED_GUILDS}: {part!r} is not a server id; use the numbers "
                              "from Copy Server ID, e.g. 123456789012345678,234567890123456789")
        ids.add(int(part))
    return frozenset(ids)


def _tick_seconds(text: str) -> float | None:
    if not text.strip():
        return None
    low, high = SPEED_RANGE
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not low < value <= high:
        raise ConfigError(f"{TICK_SECONDS}={text!r} is not usable; use seconds above {low:g} up "
                          f"to {high:g}, e.g. {TICK_SECONDS}=10")
    return value


def _url(name: str, text: str, example: str) -> str | None:
    if text and not text.startswith(("https://", "http://")):
        raise ConfigError(f"{name}={text!r} is not a URL; e.g. {name}={example}")
    return text or None


def _web_port(text: str) -> int | None:
    if not text.strip():
        return None
    if not text.strip().isdigit() or not 1 <= int(text) <= 65535:
        raise ConfigError(f"{WEB_PORT}={text!r} is not a port; use 1 to 65535, e.g. {WEB_PORT}=8080")
    return int(text)


BACKUP_DIR = "TOWNBOT_BACKUP_DIR"
BACKUP_EVERY = "TOWNBOT_BACKUP_EVERY"
BACKUP_KEEP = "TOWNBOT_BACKUP_KEEP"
API_BASE = "TOWNBOT_DISCORD_API_BASE"
LOG_FORMAT = "TOWNBOT_LOG_FORMAT"
# The settings for running long; docs/operations.md explains each.
UPKEEP_VARIABLES = (IDLE_AFTER, IDLE_SPEED, BACKUP_DIR, BACKUP_EVERY, BACKUP_KEEP, API_BASE,
                    LOG_FORMAT)


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
    backup_dir = env.get(BACKUP_DIR, "").strip()
    return Upkeep(rest=rest, backup_dir=Path(backup_dir) if backup_dir else None,
                  backup_every_hours=_number(env, BACKUP_EVERY, 6.0, 0.01, 24 * 365, "6"),
                  backup_keep=int(_number(env, BACKUP_KEEP, 7, 1, 10_000, "7")),
                  api_base=_url(API_BASE, env.get(API_BASE, "").strip().rstrip("/"),
                                "http://127.0.0.1:8080/api/v10"),
                  log_format=_log_format(env.get(LOG_FORMAT, "")))


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
