"""`townbot run [--dry-run]`: host one town per Discord server.

Only argparse is imported here; discord.py and the town load when the command runs, so the
other `townbot` commands start as fast as before.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Any


def add_run_parser(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="host the town on Discord: one town per server")
    run.add_argument("--dry-run", action="store_true",
                     help="check the configuration, world and residents, print the channel plan, "
                          "the commands and the invite link; connect nothing")
    run.add_argument("--world", help="world file (default: ./world.yaml)")
    run.add_argument("--personas", help="persona folder (default: ./personas)")
    run.add_argument("--env-file", default=".env", help="settings file (default: ./.env; the "
                     "environment wins over it)")


def run_command(args: argparse.Namespace) -> int:
    from townbot.llm.settings import SettingsError, load_settings
    from townbot.platforms.discord.config import ConfigError, load_config
    from townbot.store.database import StoreError
    from townbot.town.launch import TownFiles
    from townbot.world.errors import DataError

    try:
        config = load_config(dotenv=Path(args.env_file))
        settings = load_settings(config.env)
        files = TownFiles(args.world, args.personas)
        world = files.load()
        if args.dry_run:
            from townbot.platforms.discord.dryrun import dry_run
            return dry_run(config, settings, world, sys.stdout)
        if not config.token:
            raise ConfigError("DISCORD_TOKEN is not set; put DISCORD_TOKEN=... in .env or the "
                              "environment (Developer Portal > your application > Bot > Reset "
                              "Token)")
        return asyncio.run(_serve(config, files, settings))
    except (ConfigError, SettingsError, DataError, StoreError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


async def _serve(config: Any, files: Any, settings: Any) -> int:
    import discord

    from townbot.platforms.discord.bot import TownBot
    from townbot.platforms.discord.hub import Hub
    from townbot.platforms.discord.scheduler import TownScheduler

    discord.utils.setup_logging(level=logging.INFO)
    bot = TownBot(Hub(config, TownScheduler(), files=files, settings=settings))
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM,
                                                  lambda: asyncio.ensure_future(bot.close()))
    try:
        async with bot:
            await bot.start(config.token)
    except discord.LoginFailure:
        print("error: Discord refused DISCORD_TOKEN; reset the token in the Developer Portal "
              "(Bot > Reset Token) and set the new one", file=sys.stderr)
        return 2
    except discord.PrivilegedIntentsRequired:
        print("error: the Message Content intent is off; turn it on in the Developer Portal "
              "(Bot > Privileged Gateway Intents > Message Content Intent)", file=sys.stderr)
        return 2
    return 0
