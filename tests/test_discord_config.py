"""Configuration from the environment and .env, and `townbot run --dry-run`."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from townbot.llm.settings import load_settings
from townbot.platforms.discord.cli import add_run_parser, run_command
from townbot.platforms.discord.config import ConfigError, DiscordConfig, load_config, read_dotenv
from townbot.platforms.discord.dryrun import application_id, dry_run
from townbot.world.errors import DataError

VARIABLES = ("DISCORD_TOKEN", "TOWNBOT_ALLOWED_GUILDS", "TOWNBOT_MODERATOR_ROLE",
             "TOWNBOT_TICK_SECONDS", "TOWNBOT_DATA_DIR", "TOWNBOT_AVATAR_URL", "TOWNBOT_CONFIG",
             "TOWNBOT_CHAT_MODEL", "TOWNBOT_EMBEDDING_MODEL")
TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.not-a-real-secret"  # base64 of 123456789012345678


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="townbot")
    add_run_parser(parser.add_subparsers(dest="command", required=True))
    return run_command(parser.parse_args(argv))


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
    assert "/town pause (moderators)" in out and "/memories resident* query [count] (moderators)" in out
    assert "permissions=309774584912&scope=bot+applications.commands" in out
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
