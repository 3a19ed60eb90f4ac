"""docs/operations.md's service unit and container recipe install townbot with README's own
install command and run a command townbot has, with settings townbot reads (no container
runtime or systemd is here to run them)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from townbot.cli import build_parser
from townbot.llm.settings import CAP_SPECS, PRICE_SPECS, SPECS
from townbot.platforms.discord.config import UPKEEP_VARIABLES, VARIABLES

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "python3 -m venv .venv && .venv/bin/pip install -e ."
OPERATIONS = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")


def fenced(language: str) -> str:
    [block] = re.findall(rf"```{language}\n(.*?)```", OPERATIONS, re.DOTALL)
    return block


def known_settings() -> set[str]:
    names = {name for spec in (*SPECS, *PRICE_SPECS, *CAP_SPECS) for name in spec.env}
    return names | set(VARIABLES) | set(UPKEEP_VARIABLES)


def test_readme_installs_with_the_command_the_recipes_use():
    assert INSTALL in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_container_recipe_installs_as_readme_does_and_runs_townbot_run():
    recipe = fenced("dockerfile")
    lines = recipe.splitlines()
    assert f"RUN {INSTALL}" in lines
    workdir = next(line.split()[1] for line in lines if line.startswith("WORKDIR"))
    [command] = [line for line in lines if line.startswith("CMD")]
    program, *arguments = json.loads(command.removeprefix("CMD "))  # the exec form
    assert program == ".venv/bin/townbot" and workdir == "/app"
    assert build_parser().parse_args(arguments).command == "run"
    assert "/healthz" in next(line for line in lines if line.startswith("HEALTHCHECK"))


def test_the_service_unit_runs_what_the_install_made_with_settings_townbot_reads():
    unit = fenced("ini")
    fields = dict(line.split("=", 1) for line in unit.splitlines()
                  if "=" in line and not line.startswith("#") and
                  not line.startswith("Environment="))
    folder = fields["WorkingDirectory"]
    setup = OPERATIONS[OPERATIONS.index("## As a systemd service"):OPERATIONS.index("[Unit]")]
    assert f"cd {folder} && {INSTALL}" in setup
    program, *arguments = shlex.split(fields["ExecStart"])
    assert program == f"{folder}/.venv/bin/townbot"
    assert build_parser().parse_args(arguments).command == "run"


def test_every_setting_the_page_names_is_one_townbot_reads():
    named = set(re.findall(r"\b(?:TOWNBOT|DISCORD)_[A-Z_]+\b", OPERATIONS))
    assert named <= known_settings(), named - known_settings()
