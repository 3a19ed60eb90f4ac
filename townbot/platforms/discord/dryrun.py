"""`townbot run --dry-run`: check everything a run needs and show what it would make; nothing
is connected or written, and the token's presence is reported, not required."""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TextIO, cast

from discord import app_commands

from townbot.llm.offline import OFFLINE_LABEL
from townbot.llm.settings import ModelSettings
from townbot.platforms.discord.commands import ModGroup, all_commands
from townbot.platforms.discord.config import DiscordConfig
from townbot.platforms.discord.hub import Hub
from townbot.platforms.discord.scheduler import TownScheduler
from townbot.platforms.discord.setup import NEEDED, PERMISSIONS, channel_plan
from townbot.town.engine import Engine
from townbot.town.launch import PROJECT_ROOT
from townbot.town.requests import TownError
from townbot.town.scenarios import load_scenario, scenario_names
from townbot.town.service import TownService
from townbot.world.errors import DataError
from townbot.world.model import World

INVITE = ("https://discord.com/oauth2/authorize?client_id={app}&permissions={permissions}"
          "&scope=bot+applications.commands")


def application_id(token: str | None) -> str | None:
    """A bot token starts with its user id (= the application id) in base64."""
    if not token:
        return None
    head = token.split(".")[0]
    try:
        decoded = base64.b64decode(head + "=" * (-len(head) % 4), validate=False).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    return decoded if decoded.isdigit() else None


def check_scenarios(world: World, folder: Path) -> list[str]:
    """Each scenario's residents and objects resolved by the service's own rules."""
    stand_in = cast(Engine, SimpleNamespace(minds=dict.fromkeys(world.personas), world=world))
    service = TownService(stand_in, scenarios=folder)
    names = scenario_names(folder)
    for name in names:
        spec = load_scenario(folder, name)
        try:
            for seed in spec.seeds:
                service.resident(seed.resident)
            for change in spec.objects:
                service.object_path(change.path)
        except TownError as error:
            raise DataError(str(folder / f"{name}.yaml"), "", str(error)) from error
    return names


def command_lines(hub: Hub) -> list[str]:
    lines = []
    for command in all_commands(hub):
        subcommands = command.commands if isinstance(command, app_commands.Group) else [command]
        for sub in subcommands:
            assert isinstance(sub, app_commands.Command)
            params = " ".join(_parameter(p) for p in sub.parameters)
            who = " (moderators)" if isinstance(command, ModGroup) else ""
            lines.append(f"  /{sub.qualified_name} {params}".rstrip() + who)
    return lines


def _parameter(parameter: Any) -> str:
    text = parameter.name + ("*" if parameter.autocomplete else "")
    if parameter.choices:
        text += "=" + "|".join(str(c.value) for c in parameter.choices)
    return text if parameter.required else f"[{text}]"


def _data_dir(path: Path) -> str:
    if path.is_dir():
        towns = sorted(p.name for p in path.glob("*.db"))
        return f"{path} ({len(towns)} towns: {', '.join(towns) or 'none yet'})"
    parent = next((p for p in path.absolute().parents if p.exists()), Path("/"))
    if not os.access(parent, os.W_OK):
        raise DataError(str(path), "TOWNBOT_DATA_DIR", f"cannot be made: {parent} is not writable")
    return f"{path} (made on the first run)"


def config_lines(config: DiscordConfig, settings: ModelSettings) -> list[str]:
    app = application_id(config.token)
    token = "not set: `townbot run` needs it" if not config.token else \
        f"set (application {app})" if app else "set (its application id could not be read)"
    guilds = ", ".join(str(g) for g in sorted(config.allowed_guilds)) or \
        "every server the bot is in (set it to limit which)"
    role = config.moderator_role or "none: Manage Server only"
    tick = f"{config.tick_seconds:g} s" if config.tick_seconds else "10 s (the default)"
    model = OFFLINE_LABEL if settings.offline else settings.describe()
    return [f"  DISCORD_TOKEN           {token}",
            f"  TOWNBOT_ALLOWED_GUILDS  {guilds}",
            f"  TOWNBOT_MODERATOR_ROLE  {role}",
            f"  TOWNBOT_TICK_SECONDS    {tick} per tick for a new town",
            f"  TOWNBOT_DATA_DIR        {_data_dir(config.data_dir)}",
            f"  TOWNBOT_AVATAR_URL      {config.avatar_url or 'none: a picture drawn from each name'}",
            f"  model                   {model}"]


def dry_run(config: DiscordConfig, settings: ModelSettings, world: World, out: TextIO,
            scenarios: Path = PROJECT_ROOT / "scenarios") -> int:
    """Print the plan; DataError for anything that would stop a run (the token aside)."""
    names = check_scenarios(world, scenarios)
    plan = channel_plan(world)

    arenas = sum(len(s.arenas) for s in world.sectors.values())
    app = application_id(config.token) or "<APPLICATION_ID>"
    lines = [
        "townbot run --dry-run: nothing was connected or written.",
        "Configuration (environment over .env):", *config_lines(config, settings),
        f"World: {world.town}, {len(world.sectors)} sectors, {arenas} arenas, "
        f"{len(world.object_paths())} objects, {len(world.personas)} residents: valid",
        f"Scenarios: {', '.join(names) or 'none'}: valid",
        f"Per server: category '{plan.category}' with {len(plan.channels)} channels, one "
        "webhook each:", *(f"  #{channel.slug:<24} {channel.title}" for channel in plan.channels),
        # the commands are only listed: nothing runs
        "Commands (* autocomplete, [optional]):", *command_lines(Hub(config, TownScheduler())),
        f"Invite link (scopes bot and applications.commands; {', '.join(PERMISSIONS.values())}):",
        "  " + INVITE.format(app=app, permissions=NEEDED.value),
        "Developer Portal: Bot > Privileged Gateway Intents > Message Content Intent must be on.",
        "Ready: `townbot run`." if config.token else "Not ready to connect: set DISCORD_TOKEN."]
    print("\n".join(lines), file=out)
    return 0
