"""What a 25-resident town costs per real day at three speeds, on a hosted small model and on a
local server, from the calls and tokens an offline run records.

The offline model asks every question a real model would be asked (the same prompts, the same
validation) and records calls and tokens; its prompt tokens are estimated at 4 characters a
token and its completion tokens are what it answered, so the figures are estimates of a real
model's, not a bill. The town runs `--days` game days from its founding (the first day carries
the founding's seed memories, as a new town's does); figures are per game day over the run,
then multiplied by the game days a real day holds at each speed (game minutes per tick times
real ticks a day).

Prices are assumptions, stated with their date in the table's notes (change them with the
options). The local server costs no money per token; what it needs is throughput: the table
gives the tokens a second it must sustain, and the game days a real day one such server keeps
up with at an assumed batched generation rate.

Usage: python benchmarks/costs.py [--days 2] [--prompt-price 0.15] [--completion-price 0.60]
       [--embedding-price 0.02] [--local-tokens-per-second 500] [--watts 350]
       [--kwh-price 0.15] [--markdown]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path

from townbot.llm.settings import load_settings
from townbot.store.database import Store
from townbot.town.costs import game_days_per_real_day
from townbot.town.launch import TownFiles, open_engine
from townbot.town.service import TownService
from townbot.town.usage import summarise

ROOT = Path(__file__).resolve().parents[1]
SPEEDS = (("10 s per tick (default)", 10.0), ("60 s per tick", 60.0),
          ("real time (600 s per tick)", 600.0))
PRICE_NOTE = ("gpt-4o-mini list prices, $0.15 per million prompt tokens and $0.60 per million "
              "completion tokens, with text-embedding-3-small at $0.02 per million, as OpenAI "
              "published them from July 2024 and still listed them in 2025 (assumed; check the "
              "current page); cached prompt tokens, billed at half, are not counted")


@dataclass(frozen=True)
class GameDay:
    """One game day of the whole town."""

    residents: int
    calls: float
    prompt_tokens: float
    completion_tokens: float
    embedding_tokens: float
    tick_minutes: int


async def measure(folder: Path, days: int) -> GameDay:
    files = TownFiles(str(ROOT / "world.yaml"), str(ROOT / "personas"))
    engine = await open_engine(files, str(folder / "town.db"), settings=load_settings({}))
    try:
        service = TownService(engine)
        for _ in range(engine.clock.ticks_for(days=days)):
            await service.tick()
        summary = summarise(await engine.store.usage_rows(engine.town.id))
        residents, minutes = len(engine.minds), engine.clock.tick_minutes
        embedded = summary["embedding_tokens"] or await memory_tokens(engine.store)
    finally:
        await engine.model.close()
        await engine.store.close()
    return GameDay(residents, summary["calls"] / days, summary["prompt_tokens"] / days,
                   summary["completion_tokens"] / days, embedded / days, minutes)


async def memory_tokens(store: Store) -> int:
    """The offline embedder (a hashing one) records no tokens: the memories' texts at 4
    characters a token stand in (each is embedded once; retrieval queries are not counted)."""
    async with store.db.execute("SELECT coalesce(sum(length(text)), 0) FROM memories") as cursor:
        (characters,) = await cursor.fetchone()
    return characters // 4


def millions(tokens: float) -> str:
    return f"{tokens / 1e6:.1f}M"


def table(day: GameDay, args: argparse.Namespace) -> list[list[str]]:
    rows = []
    for name, seconds in SPEEDS:
        game_days = game_days_per_real_day(day.tick_minutes, seconds) or 0.0
        prompt, completion = day.prompt_tokens * game_days, day.completion_tokens * game_days
        embedding = day.embedding_tokens * game_days
        dollars = (prompt * args.prompt_price + completion * args.completion_price
                   + embedding * args.embedding_price) / 1e6
        needed = completion / 86400  # completion tokens a second, around the clock
        keeps_up = args.local_tokens_per_second * 86400 / day.completion_tokens
        power = args.watts * 24 / 1000 * args.kwh_price
        rows.append([name, f"{game_days:g}", f"{day.calls * game_days:,.0f}", millions(prompt),
                     millions(completion), f"${dollars:,.2f}",
                     f"{needed:,.1f} tok/s ({day.calls * game_days / 86400:.2f} calls/s)",
                     f"{min(1.0, keeps_up / game_days):.0%} of real time" if keeps_up < game_days
                     else "keeps up", f"${power:.2f}"])
    return rows


HEADERS = ["speed", "game days per real day", "calls", "prompt tokens", "completion tokens",
           "hosted small model", "local server must generate", "one local server",
           "its electricity"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=2, help="game days to run (default 2)")
    parser.add_argument("--prompt-price", type=float, default=0.15)
    parser.add_argument("--completion-price", type=float, default=0.60)
    parser.add_argument("--embedding-price", type=float, default=0.02)
    parser.add_argument("--local-tokens-per-second", type=float, default=500.0,
                        help="a local server's batched completion tokens a second (assumed)")
    parser.add_argument("--watts", type=float, default=350.0, help="the server's draw")
    parser.add_argument("--kwh-price", type=float, default=0.15, help="dollars a kWh")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        day = asyncio.run(measure(Path(folder), args.days))
    print(f"measured: {day.residents} residents, offline model, {args.days} game days from the "
          f"founding; per game day of the town: {day.calls:,.0f} calls, "
          f"{day.prompt_tokens:,.0f} prompt, {day.completion_tokens:,.0f} completion and "
          f"{day.embedding_tokens:,.0f} embedding tokens (estimated at 4 characters a token; "
          "embeddings from the memories' texts, without retrieval queries)")
    rows = table(day, args)
    if args.markdown:
        print("| " + " | ".join(HEADERS) + " |")
        print("|" + "---|" * len(HEADERS))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADERS)]
        for line in [HEADERS, *rows]:
            print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))
    print(f"hosted prices: {PRICE_NOTE}" if (args.prompt_price, args.completion_price) ==
          (0.15, 0.60) else f"hosted prices: ${args.prompt_price} and "
          f"${args.completion_price} per million prompt and completion tokens (given)")
    print(f"local server: no money per token; assumed {args.local_tokens_per_second:g} completion "
          f"tokens a second batched (e.g. an 8B model under vLLM on one GPU), {args.watts:g} W "
          f"around the clock at ${args.kwh_price:g} a kWh")


if __name__ == "__main__":
    main()
