"""`townbot doctor`: check the configured language-model server and suggest settings.

It runs the start-up check (townbot.llm.probe) in every structured-output mode, measures how
many requests the server serves at once, and prints what it found and the settings that suit
it; `--write` puts them into the `[llm]` table of townbot.toml.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from townbot.llm.settings import CONFIG_ENV, DEFAULT_CONFIG, ModelSettings, SettingsError

if TYPE_CHECKING:
    from townbot.llm.probe import ProbeReport


def add_doctor_parser(commands: argparse._SubParsersAction) -> None:
    doctor = commands.add_parser(
        "doctor", help="check the language-model server and suggest settings for it")
    doctor.add_argument("--write", action="store_true",
                        help="write the suggested settings into townbot.toml's [llm] table")


def run_doctor(args: argparse.Namespace, settings: ModelSettings, env: dict[str, str]) -> int:
    if settings.offline:
        print("no language model configured: the town runs on the offline model. Set "
              "TOWNBOT_CHAT_MODEL and TOWNBOT_BASE_URL (see README, 'Use a real model') and "
              "run `townbot doctor` again.")
        return 0
    report = asyncio.run(_examine(settings))
    for line in report.describe():
        print(line)
    suggested = report.suggestions(settings)
    print("suggested settings ([llm] in townbot.toml):")
    for key, value in suggested.items():
        print(f"  {key} = {toml_value(value)}")
    if args.write:
        path = Path(env.get(CONFIG_ENV) or DEFAULT_CONFIG)
        write_settings(path, suggested)
        print(f"written to {path}")
    return 0


async def _examine(settings: ModelSettings) -> ProbeReport:
    from townbot.llm.openai_client import OpenAIModel  # imported when used: openai is slow to load
    from townbot.llm.probe import check_server

    client = OpenAIModel(settings)
    try:
        return await check_server(client, every_mode=True, measure=True)
    finally:
        await client.close()


# --- townbot.toml -----------------------------------------------------------------------------


def write_settings(path: Path, values: dict[str, Any]) -> None:
    """Merge values into the file's [llm] table; other tables and keys stay (comments do not)."""
    data: dict[str, Any] = {}
    if path.exists():
        import tomllib  # loaded here, not when the CLI builds its parser from this module

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise SettingsError(f"{path}: not valid TOML ({error}); fix it or move it away "
                                "before `townbot doctor --write`") from None
    table = data.setdefault("llm", {})
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: 'llm' is not a table; make it [llm]")
    table.update(values)
    path.write_text(dump_toml(data), encoding="utf-8")


def dump_toml(data: dict[str, Any], prefix: str = "") -> str:
    """A small TOML writer for settings files: tables of texts, numbers, booleans and lists."""
    plain = {k: v for k, v in data.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    lines = [f"{key} = {toml_value(value)}" for key, value in plain.items()]
    out = "\n".join(lines) + ("\n" if lines else "")
    for name, table in tables.items():
        full = f"{prefix}{name}"
        out += f"\n[{full}]\n" + dump_toml(table, f"{full}.")
    return out.lstrip("\n")


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'
