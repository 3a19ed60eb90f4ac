"""`townbot doctor`: the start-up check in every structured-output mode, the questions of a
small town's first tick tallied, a verdict on whether the model can run a town, and the settings
that suit the server (`--write` puts them into townbot.toml).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomli_w

from townbot.llm.settings import CONFIG_ENV, DEFAULT_CONFIG, ModelSettings, SettingsError

if TYPE_CHECKING:
    from townbot.llm.port import LanguageModel
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
    report, sample = asyncio.run(_examine(settings))
    suggested = report.suggestions(settings)
    print("\n".join([*report.describe(), *sample.describe(settings.max_unusable),
                     "suggested settings ([llm] in townbot.toml):",
                     *(f"  {tomli_w.dumps({key: value}).strip()}" for key, value in suggested.items())]))
    if args.write:
        path = Path(env.get(CONFIG_ENV) or DEFAULT_CONFIG)
        write_settings(path, suggested)
        print(f"written to {path}")
    return 0


async def _examine(settings: ModelSettings) -> tuple[ProbeReport, Sample]:
    from townbot.llm.openai_client import OpenAIModel  # imported when used: openai is slow to load
    from townbot.llm.probe import start_up_check

    client = OpenAIModel(settings)
    try:
        report = await start_up_check(client, every_mode=True, measure=True)
        return report, await ask_the_towns_questions(client)
    finally:
        await client.close()


# --- the town's own questions -----------------------------------------------------------------

SAMPLE_RESIDENTS = "4"  # a small town's first tick asks every kind the day starts with


@dataclass
class Sample:
    """How a model answered the questions of a small town's first tick, per purpose."""

    asked: Counter[str] = field(default_factory=Counter)
    usable: Counter[str] = field(default_factory=Counter)
    reasons: str = ""
    stopped: str = ""  # the town could not go on (the server stopped answering)

    def describe(self, max_unusable: float) -> list[str]:
        from townbot.llm.watching import WARN_SHARE

        total, good = sum(self.asked.values()), sum(self.usable.values())
        lines = [f"the town's own questions ({SAMPLE_RESIDENTS} residents, one tick): "
                 f"{good} of {total} answers usable ({_percent(good, total)})"]
        lines += [f"  {purpose}: {self.usable[purpose]} of {count} usable"
                  for purpose, count in sorted(self.asked.items())]
        if good < total:
            lines.append(f"  unusable replies: {self.reasons}")
        if self.stopped:
            lines.append(f"  the sample stopped early: {self.stopped}")
        defaulted = 1 - good / total if total else 1.0
        if not total or defaulted > max_unusable:
            lines.append(f"verdict: this model is too weak to run a town: {_percent(total - good, total)} "
                         "of its answers would come from defaults, and a run stops above "
                         f"TOWNBOT_MAX_UNUSABLE={max_unusable:g}; choose a stronger model, or "
                         "check the structured-output mode")
        elif defaulted > WARN_SHARE:
            lines.append(f"verdict: weak: {_percent(total - good, total)} of the answers would come "
                         "from defaults, so residents would often follow fallbacks")
        else:
            lines.append("verdict: usable answers; the model can run a town")
        return lines


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "none"


async def ask_the_towns_questions(client: LanguageModel) -> Sample:
    """One tick of a small town in memory on `client`, its answers tallied by purpose."""
    from townbot.llm.port import ASKED, ModelError
    from townbot.llm.stack import build_model_stack
    from townbot.llm.watching import reasons
    from townbot.store.database import Store
    from townbot.town.engine import Engine
    from townbot.town.launch import TownFiles

    model = build_model_stack(client)  # no TOWNBOT_MAX_UNUSABLE here: the sample is the verdict
    store = await Store.open(":memory:")
    sample = Sample()
    try:
        engine = await Engine.open(TownFiles(residents=SAMPLE_RESIDENTS).load(), store, model)
        try:
            await engine.tick()
        except ModelError as error:
            sample.stopped = str(error)
        for row in await store.usage_rows(engine.town.id):
            if row["outcome"] in ASKED:
                sample.asked[row["purpose"]] += 1
                sample.usable[row["purpose"]] += row["outcome"] in ("ok", "repaired")
    finally:
        await store.close()
    sample.reasons = reasons(model.report())
    return sample


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
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
