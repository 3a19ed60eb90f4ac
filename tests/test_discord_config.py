"""Configuration from the environment and .env, and `townbot run --dry-run`."""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from types import SimpleNamespace

import aiohttp
import pytest
from fakediscord import FakeDiscord

from townbot.llm.settings import load_settings
from townbot.platforms.discord.cli import (
    add_run_parser,
    add_sync_parser,
    run_command,
    run_sync,
    shard_plan,
)
from townbot.platforms.discord.config import ConfigError, DiscordConfig, load_config, read_dotenv
from townbot.platforms.discord.dryrun import application_id, dry_run
from townbot.world.errors import DataError

VARIABLES = ("DISCORD_TOKEN", "TOWNBOT_ALLOWED_GUILDS", "TOWNBOT_MODERATOR_ROLE",
             "TOWNBOT_TICK_SECONDS", "TOWNBOT_DATA_DIR", "TOWNBOT_AVATAR_URL", "TOWNBOT_CONFIG",
             "TOWNBOT_CHAT_MODEL", "TOWNBOT_EMBEDDING_MODEL")
TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.not-a-real-secret"  # base64 of 123456789012345678


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="townbot")
    commands = parser.add_subparsers(dest="command", required=True)
    add_run_parser(commands)
    add_sync_parser(commands)
    args = parser.parse_args(argv)
    return run_command(args) if args.command == "run" else run_sync(args)


@pytest.fixture
def fresh_checkout(tmp_path, monkeypatch):
    """A directory with nothing in it and no Discord or model settings in the environment."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_dotenv_lines_with_comments_quotes_and_export_are_read(tmp_path):
    env = tmp_path / ".env"
    env.write_text("# the bot\nexport DISCORD_TOKEN='abc def'\n\nTOWNBOT_ALLOWED_GUILDS=1, 2 "
                   "# two servers\nTOWNBOT_MODERATOR_ROLE=\"Town Mayor\"\n", encoding="utf-8")
    assert read_dotenv(env) == {"DISCORD_TOKEN": "abc def", "TOWNBOT_ALLOWED_GUILDS": "1, 2",
                                "TOWNBOT_MODERATOR_ROLE": "Town Mayor"}
    config = load_config({"TOWNBOT_MODERATOR_ROLE": "Sheriff", "TOWNBOT_TICK_SECONDS": "30"}, env)
    assert config.token == "abc def" and config.allowed_guilds == frozenset({1, 2})
    assert config.moderator_role == "Sheriff", "the environment wins over .env"
    assert config.tick_seconds == 30.0 and config.database(5) == Path("data/5.db")


@pytest.mark.parametrize(("name", "value", "says"), [
    ("TOWNBOT_ALLOWED_GUILDS", "my-server", "is not a server id"),
    ("TOWNBOT_TICK_SECONDS", "fast", "e.g. TOWNBOT_TICK_SECONDS=10"),
    ("TOWNBOT_TICK_SECONDS", "0", "use seconds above 0"),
    ("TOWNBOT_AVATAR_URL", "avatars/{name}.png", "is not a URL"),
])
def test_a_value_that_cannot_work_names_the_variable_and_a_good_value(tmp_path, name, value, says):
    with pytest.raises(ConfigError, match=name) as error:
        load_config({name: value}, tmp_path / "none.env")
    assert says in str(error.value)


def test_a_broken_dotenv_line_is_named_by_file_and_line(tmp_path):
    env = tmp_path / ".env"
    env.write_text("DISCORD_TOKEN=x\nthis is not a setting\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\.env:2: expected KEY=VALUE"):
        read_dotenv(env)


def test_the_application_id_is_read_from_the_token():
    assert application_id(TOKEN) == "123456789012345678"
    assert application_id("garbage") is None and application_id(None) is None


def test_dry_run_works_on_a_fresh_checkout_and_writes_nothing(fresh_checkout, capsys):
    assert run(["run", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "DISCORD_TOKEN           not set" in out
    assert "#hobbs-cafe" in out and "#town-hall" in out and "20 channels" in out
    assert "/town join name description [area*]" in out
    assert "/mod pause (moderators)" in out
    assert "/mod memories resident* query [count] (moderators)" in out
    assert "/town pause" not in out and "/help" in out
    assert "permissions=2252109588286544&scope=bot+applications.commands" in out
    assert "Message Content Intent" in out and "Not ready to connect" in out
    assert list(fresh_checkout.iterdir()) == [], "a dry run makes no folder and no database"


def test_dry_run_with_a_token_prints_the_invite_link_for_the_application(fresh_checkout, capsys):
    (fresh_checkout / ".env").write_text(f"DISCORD_TOKEN={TOKEN}\nTOWNBOT_ALLOWED_GUILDS=42\n",
                                         encoding="utf-8")
    assert run(["run", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "client_id=123456789012345678&" in out and TOKEN not in out
    assert "TOWNBOT_ALLOWED_GUILDS  42" in out and "Ready: `townbot run`." in out


def test_run_without_a_token_or_with_a_bad_setting_stops_with_a_message(fresh_checkout, capsys,
                                                                         monkeypatch):
    assert run(["run"]) == 2
    assert "DISCORD_TOKEN is not set" in capsys.readouterr().err
    monkeypatch.setenv("TOWNBOT_TICK_SECONDS", "-3")
    assert run(["run", "--dry-run"]) == 2
    assert "TOWNBOT_TICK_SECONDS" in capsys.readouterr().err


def test_dry_run_checks_scenarios_by_the_services_rules(tmp_path, world):
    (tmp_path / "broken.yaml").write_text(
        "name: Broken\nseeds:\n  - resident: Isabela Rodriguez\n    thought: a party\n",
        encoding="utf-8")
    settings = load_settings({})
    with pytest.raises(DataError, match="did you mean 'Isabella Rodriguez'"):
        dry_run(DiscordConfig(data_dir=tmp_path / "data"), settings, world, io.StringIO(),
                scenarios=tmp_path)


def test_dry_run_reports_a_broken_world_file(fresh_checkout, capsys):
    world = fresh_checkout / "world.yaml"
    world.write_text("town: Nowhere\n", encoding="utf-8")
    assert run(["run", "--dry-run", "--world", str(world)]) == 2
    assert "world.yaml: start: missing field" in capsys.readouterr().err


@pytest.fixture
def discord_fake(fresh_checkout, monkeypatch):
    fake = FakeDiscord.install(monkeypatch)
    yield fake
    fake.uninstall()


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"one line, no traceback: {err}"
    return lines[0]


def test_a_bad_token_gives_one_clear_line_and_exit_2(discord_fake, monkeypatch, capsys):
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)  # not the token the fake Discord knows
    assert run(["run"]) == 2
    assert one_line(capsys.readouterr().err) == (
        "error: Discord refused DISCORD_TOKEN; reset the token in the Developer Portal (Bot > "
        "Reset Token) and set the new one")


def test_an_unreachable_network_gives_one_clear_line_and_exit_2(discord_fake, monkeypatch,
                                                                capsys):
    monkeypatch.setenv("DISCORD_TOKEN", discord_fake.token)
    key = SimpleNamespace(host="discord.com", port=443, ssl=True)
    discord_fake.fail("GET", r"^/users/@me$", error=aiohttp.ClientConnectorError(
        key, OSError(101, "Network is unreachable")))
    assert run(["run"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("error: cannot reach Discord (Cannot connect to host discord.com:443")
    assert line.endswith("check the network connection, a proxy or firewall, and "
                         "https://discordstatus.com, then start again")


def test_sync_gives_discord_the_commands_globally_or_to_one_server(discord_fake, monkeypatch,
                                                                   capsys):
    monkeypatch.setenv("DISCORD_TOKEN", discord_fake.token)
    assert run(["sync"]) == 0
    assert capsys.readouterr().out == "synced 7 commands globally\n"
    assert {c["name"] for c in discord_fake.commands[None]} == {
        "town", "object", "mod", "say", "whisper", "interview", "help"}
    assert run(["sync", "--guild", "42"]) == 0
    assert "to server 42" in capsys.readouterr().out and 42 in discord_fake.commands


def test_a_failed_sync_says_exactly_why(discord_fake, monkeypatch, capsys):
    monkeypatch.setenv("DISCORD_TOKEN", discord_fake.token)
    discord_fake.fail("PUT", r"/commands$", 403, code=50001, message="Missing Access")
    assert run(["sync"]) == 2
    assert one_line(capsys.readouterr().err).startswith(
        "error: the commands were not synced: Discord refused the commands (403 Missing Access): "
        "the bot was invited without the applications.commands scope")


def test_shards_are_checked_before_connecting():
    assert shard_plan(None, None) is None
    assert shard_plan(4, "2,0") == (4, [0, 2])
    assert shard_plan(2, None) == (2, [0, 1])
    with pytest.raises(ConfigError, match="--shard-ids '5' is not usable; give ids from 0 to 3"):
        shard_plan(4, "5")
    with pytest.raises(ConfigError, match="--shards must be"):
        shard_plan(None, "0")
