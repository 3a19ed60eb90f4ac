"""`townbot run` (host the towns on Discord) and `townbot sync` (give Discord the commands).
Only argparse is imported here: discord.py and the town load when a command runs, so the other
`townbot` commands start as fast as before."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from townbot.platforms.arguments import STOP_SIGNALS, say_stopping, signal_name

NETWORK = ("error: cannot reach Discord ({detail}); check the network connection, a proxy or "
           "firewall, and https://discordstatus.com, then start again")
BAD_TOKEN = ("error: Discord refused DISCORD_TOKEN; reset the token in the Developer Portal "
             "(Bot > Reset Token) and set the new one")
NO_INTENT = ("error: the Message Content intent is off; turn it on in the Developer Portal "
             "(Bot > Privileged Gateway Intents > Message Content Intent)")


def add_run_parser(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="host the town on Discord: one town per server")
    run.add_argument("--dry-run", action="store_true",
                     help="check the configuration, world and residents, print the channel plan, "
                          "the commands and the invite link; connect nothing")
    run.add_argument("--shards", type=int, metavar="N",
                     help="the bot's total number of gateway shards (with --shard-ids: this "
                          "process runs only those shards and their servers' towns)")
    run.add_argument("--shard-ids", metavar="A,B",
                     help="comma-separated shard ids this process runs, each below --shards")
    _add_common(run)


def add_sync_parser(subparsers: Any) -> None:
    sync = subparsers.add_parser("sync", help="give Discord the slash commands (after an "
                                 "update; globally, or to one server while developing)")
    sync.add_argument("--guild", type=int, metavar="ID",
                      help="sync to this server only (shows at once; for development)")
    _add_common(sync)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--world", help="world file (default: ./world.yaml)")
    parser.add_argument("--personas", help="persona folder (default: ./personas)")
    parser.add_argument("--env-file", default=".env", help="settings file (default: ./.env; "
                        "the environment wins over it)")


def shard_plan(shards: int | None, shard_ids: str | None) -> tuple[int, list[int]] | None:
    """(count, ids) for an AutoShardedClient, None for one process; ConfigError if unusable."""
    from townbot.platforms.discord.config import ConfigError
    if shards is None and shard_ids is None:
        return None
    if shards is None or shards < 1:
        raise ConfigError("--shards must be the bot's total number of shards, at least 1, "
                          "e.g. --shards 4 --shard-ids 0,1")
    if shard_ids is None:
        return shards, list(range(shards))
    try:
        ids = sorted({int(part) for part in shard_ids.split(",") if part.strip()})
    except ValueError:
        ids = []
    if not ids or any(not 0 <= i < shards for i in ids):
        raise ConfigError(f"--shard-ids {shard_ids!r} is not usable; give ids from 0 to "
                          f"{shards - 1}, e.g. --shard-ids 0,1")
    return shards, ids


def run_command(args: argparse.Namespace) -> int:
    return _guarded(args, dry_run=args.dry_run)


def run_sync(args: argparse.Namespace) -> int:
    return _guarded(args, sync_only=True)


def _guarded(args: argparse.Namespace, *, dry_run: bool = False, sync_only: bool = False) -> int:
    from townbot.llm.settings import SettingsError, load_settings
    from townbot.platforms.discord.config import ConfigError, load_config, load_upkeep
    from townbot.store.database import StoreError
    from townbot.town.launch import TownFiles
    from townbot.world.errors import DataError

    try:
        config = load_config(dotenv=Path(args.env_file))
        settings = load_settings(config.env)
        files = TownFiles(args.world, args.personas)
        world = files.load()
        load_upkeep(config.env)  # a running-long setting that cannot work stops here too
        if dry_run:
            from townbot.platforms.discord.dryrun import dry_run as print_plan
            return print_plan(config, settings, world, sys.stdout)
        if not config.token:
            raise ConfigError("DISCORD_TOKEN is not set; put DISCORD_TOKEN=... in .env or the "
                              "environment (Developer Portal > your application > Bot > Reset "
                              "Token)")
        if sync_only:
            return asyncio.run(_sync(config, files, settings, args.guild))
        shards = shard_plan(getattr(args, "shards", None), getattr(args, "shard_ids", None))
        return asyncio.run(_serve(config, files, settings, shards))
    except (ConfigError, SettingsError, DataError, StoreError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM or SIGHUP before the bot was serving
        signum = getattr(stop, "signum", signal.SIGINT)
        print(f"stopped by {signal_name(signum)}", file=sys.stderr)
        return 0


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is at the time (the test runner swaps it)."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _logging(level: int = logging.INFO, kind: str = "text") -> None:
    """Our INFO lines; discord.py's own only from WARNING (its start-up chatter would bury the
    one line that matters when the start fails); no voice, so no warning about it. `kind`:
    text, or json (one object a line; TOWNBOT_LOG_FORMAT)."""
    import discord

    from townbot.platforms.log_format import formatter
    discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
    root = logging.getLogger()
    if not any(isinstance(h, _Stderr) for h in root.handlers):
        root.addHandler(_Stderr())
    for handler in root.handlers:
        if isinstance(handler, _Stderr):
            handler.setFormatter(formatter(kind))
    root.setLevel(level)
    for chatty in ("discord", "apscheduler"):
        logging.getLogger(chatty).setLevel(logging.WARNING)


async def _connect_failure(work: Any) -> int:
    """Run `work`; a failure to reach or log in to Discord becomes one line and exit code 2."""
    import aiohttp
    import discord

    try:
        await work()
    except discord.LoginFailure:
        problem = BAD_TOKEN
    except discord.PrivilegedIntentsRequired:
        problem = NO_INTENT
    except (aiohttp.ClientError, OSError, discord.GatewayNotFound, TimeoutError) as error:
        problem = NETWORK.format(detail=str(error) or error.__class__.__name__)
    except discord.HTTPException as error:
        problem = (f"error: Discord answered {error.status} at start ({error.text or 'no reason'}); "
                   "try again later")
    else:
        return 0
    print(problem, file=sys.stderr)
    return 2


async def _serve(config: Any, files: Any, settings: Any,
                 shards: tuple[int, list[int]] | None) -> int:
    from townbot.platforms.discord.bot import ShardedTownBot, TownBot
    from townbot.platforms.discord.config import load_upkeep, use_api_base
    from townbot.platforms.discord.hub import Hub
    from townbot.platforms.discord.scheduler import TownScheduler

    upkeep = load_upkeep(config.env)
    _logging(kind=upkeep.log_format)
    use_api_base(upkeep.api_base)
    hub = Hub(config, TownScheduler(), files=files, settings=settings, upkeep=upkeep)
    if shards is None:
        bot: Any = TownBot(hub)
    else:
        count, ids = shards
        bot = ShardedTownBot(hub, shard_count=count, shard_ids=ids, sync=0 in ids)
    loop = asyncio.get_running_loop()
    closing: list[asyncio.Future[None]] = []

    def stop(signum: int) -> None:
        """The first signal closes the bot once; any later one is one line, never a second
        close running beside the first (which left two database threads waiting forever)."""
        if closing:
            say_stopping(signum)
            return
        logging.getLogger(__name__).info("%s: shutting down", signal_name(signum))
        closing.append(asyncio.ensure_future(bot.close()))
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    try:
        return await _serve_until_closed(bot, hub, config, files)
    finally:
        for signum, handler in previous.items():  # not the default (a kill), which the
            loop.remove_signal_handler(signum)  # loop would leave when it closes
            signal.signal(signum, handler)  # type: ignore[arg-type]


async def _serve_until_closed(bot: Any, hub: Any, config: Any, files: Any) -> int:
    async def work() -> None:
        async with bot:
            await bot.start(config.token)
    if config.web_port is None:
        return await _connect_failure(work)
    from townbot.platforms.web.cli import serve_beside
    stop_web = await serve_beside(files.load(), lambda guild: config.database(guild)
                                  if config.allows(guild) else None, config.web_host,
                                  config.web_port, on_visit=hub.seen, metrics=hub.metrics,
                                  health=hub.health)
    logging.getLogger(__name__).info("web page at http://%s:%s/town/<server id>/<token>/ "
                                     "(each server's members get their link from /town web)",
                                     config.web_host, config.web_port)
    try:
        return await _connect_failure(work)
    finally:
        await stop_web()


async def _sync(config: Any, files: Any, settings: Any, guild: int | None) -> int:
    import discord

    from townbot.platforms.discord.bot import TownBot
    from townbot.platforms.discord.hub import Hub
    from townbot.platforms.discord.scheduler import TownScheduler

    _logging(logging.WARNING)
    bot = TownBot(Hub(config, TownScheduler(), files=files, settings=settings))
    outcome: list[bool] = []

    async def work() -> None:
        async with bot:
            await bot.login(config.token)
            outcome.append(await bot.sync_commands(discord.Object(guild) if guild else None))
    code = await _connect_failure(work)
    if code or not outcome:
        return code or 2
    if not outcome[0]:
        print(f"error: the commands were not synced: {bot.sync_problem}", file=sys.stderr)
        return 2
    where = f"to server {guild} (shown there at once)" if guild else "globally"
    print(f"synced {len(bot.tree.get_commands())} commands {where}")
    return 0
