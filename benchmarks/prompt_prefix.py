"""How much of each prompt a server's prefix cache could reuse: per purpose, the share of prompt
characters (about four to a token) in a prefix that an earlier call of the same resident
already sent, and beside it of any resident (a server shared by the town caches across them).
OpenAI and vLLM reuse a cached prefix (OpenAI from 1024 tokens on), llama.cpp the prefix of the
previous request in its slot; prompts put their stable text first (the instructions and
example, then the persona) and the situation last, so that prefix is long.

By default a town of --residents runs --hours game hours on the offline model and every
question's messages are measured as a json_object server receives them (the system message,
the prompt, the schema after it). `--recording FILE` measures the prompts of a recorded real
run instead (the prompts only: a recording keeps the schema's name, not the schema).

Usage: PYTHONPATH=. python benchmarks/prompt_prefix.py [--residents N] [--hours H]
       PYTHONPATH=. python benchmarks/prompt_prefix.py --recording tests/real_replies/FILE.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from townbot import prompting
from townbot.llm.offline import OfflineModel
from townbot.llm.structured import chat_messages

ROOT = Path(__file__).resolve().parents[1]
LOOK_BACK = 200  # earlier calls of a resident compared (a server's cache holds recent ones)
REPAIR_MARK = "\n\nYour previous answer could not be used: "

Sent = tuple[str, str, str]  # (purpose, resident, the text a server receives)


class Keeping(OfflineModel):
    """The offline model keeping the messages of every question it is asked."""

    def __init__(self) -> None:
        super().__init__(seed=0)
        self.sent: list[Sent] = []

    async def ask(self, request):
        messages = chat_messages(request, "json_object")
        self.sent.append((request.purpose, request.agent or "",
                          "\n".join(m["content"] for m in messages)))
        return await super().ask(request)


async def offline_run(residents: int, hours: float) -> list[Sent]:
    from townbot.llm.stack import build_model_stack
    from townbot.store.database import Store
    from townbot.town.engine import Engine
    from townbot.world.loading import load_world, select_residents

    world = select_residents(load_world(ROOT / "world.yaml", ROOT / "personas"), str(residents))
    model = Keeping()
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(Path(folder) / "town.db")
        engine = await Engine.open(world, store, build_model_stack(model))
        for _ in range(engine.clock.ticks_for(hours=hours)):
            await engine.tick()
        await store.close()
    return model.sent


def recorded(path: Path) -> list[Sent]:
    """The first prompt of each recorded call (repairs left out)."""
    sent = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if REPAIR_MARK not in record["prompt"]:
                sent.append((record["purpose"], record.get("agent") or "", record["prompt"]))
    return sent


def reused(text: str, earlier: list[str]) -> int:
    """Characters of the longest prefix `text` shares with one of the recent `earlier` texts."""
    return max((len(os.path.commonprefix([text, before])) for before in earlier[-LOOK_BACK:]),
               default=0)


Shares = dict[str, tuple[int, float, float, float]]


def prefix_shares(sent: list[Sent]) -> Shares:
    """purpose -> (calls, mean characters, share of characters in a prefix an earlier call of
    the same resident sent, share in a prefix any earlier call sent)."""
    by_resident: dict[str, list[str]] = defaultdict(list)
    everyone: list[str] = []
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for purpose, resident, text in sent:
        entry = totals[purpose]
        entry[0] += 1
        entry[1] += len(text)
        entry[2] += reused(text, by_resident[resident])
        entry[3] += reused(text, everyone)
        by_resident[resident].append(text)
        everyone.append(text)
    return {purpose: (calls, chars / calls, own / max(1, chars), anyone / max(1, chars))
            for purpose, (calls, chars, own, anyone) in sorted(totals.items())}


def table(shares: Shares) -> str:
    lines = [f"{'purpose':22} {'calls':>6} {'chars':>7} {'same resident':>14} {'any resident':>13}"]
    for purpose, (calls, chars, own, anyone) in shares.items():
        lines.append(f"{purpose:22} {calls:6d} {chars:7.0f} {own:14.0%} {anyone:13.0%}")
    calls = sum(entry[0] for entry in shares.values())
    chars = sum(c * m for c, m, _, _ in shares.values())
    own = sum(c * m * s for c, m, s, _ in shares.values()) / max(1, chars)
    anyone = sum(c * m * s for c, m, _, s in shares.values()) / max(1, chars)
    lines.append(f"{'all':22} {calls:6d} {chars / max(1, calls):7.0f} {own:14.0%} {anyone:13.0%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--residents", type=int, default=3)
    parser.add_argument("--hours", type=float, default=3.0)
    parser.add_argument("--recording", type=Path, help="measure a recorded run's prompts")
    args = parser.parse_args(argv)
    if args.recording:
        if not args.recording.is_file():
            print(f"error: no recording at {args.recording}", file=sys.stderr)
            return 2
        print(f"prompts of {args.recording.name} (without the schema's system message)")
        print(table(prefix_shares(recorded(args.recording))))
        return 0
    print(f"{args.residents} residents, {args.hours:g} game hours on the offline model, "
          f"templates from {prompting.PROMPT_DIR}; messages as a json_object server receives them")
    print(table(prefix_shares(asyncio.run(offline_run(args.residents, args.hours)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
