"""What the mind costs: model calls and prompt tokens per agent per game day by purpose, with
every component on (planning, reflection, reacting, dialogue, summaries), and retrieval time
over 10,000 memories.

Targets: at most 100 calls and 60k prompt tokens per agent per game day; retrieval over
10,000 memories under 2 ms. Prompt tokens are estimated (4 characters a token) because the
offline model is not a tokenizer; they measure the prompts the real model would be sent.
Usage: python benchmarks/mind_costs.py [--days N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from townbot.llm.offline import OfflineModel
from townbot.llm.stack import build_model_stack
from townbot.mind.memory import MemoryStream
from townbot.mind.retrieval import retrieve
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.world.loading import load_world

ROOT = Path(__file__).resolve().parents[1]


async def costs(days: int) -> None:
    world = load_world(ROOT / "world.yaml", ROOT / "personas")
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(Path(folder) / "bench.db")
        engine = await Engine.open(world, store, build_model_stack(OfflineModel(seed=0)))
        for _ in range(engine.clock.ticks_for(days=days)):
            await engine.tick()
        rows = await store.usage_rows(engine.town.id)
        await store.close()
    agent_days = len(world.personas) * days
    by_purpose: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        by_purpose[row["purpose"]][0] += 1
        by_purpose[row["purpose"]][1] += row["prompt_tokens"]
    print(f"{len(world.personas)} agents, {days} game day(s), every component on "
          f"(offline model; prompt tokens estimated)")
    print(f"{'purpose':<22}{'calls/agent/day':>16}{'prompt tokens/agent/day':>25}")
    for purpose, (calls, tokens) in sorted(by_purpose.items()):
        print(f"{purpose:<22}{calls / agent_days:>16.1f}{tokens / agent_days:>25.0f}")
    calls = sum(c for c, _ in by_purpose.values()) / agent_days
    tokens = sum(t for _, t in by_purpose.values()) / agent_days
    print(f"{'total':<22}{calls:>16.1f}{tokens:>25.0f}   (targets: <= 100 calls, <= 60000 tokens)")


def retrieval_time(memories: int = 10_000, dim: int = 256, repeats: int = 200) -> float:
    rng = np.random.default_rng(0)
    stream = MemoryStream(dim)
    now = datetime(2023, 2, 20, 12, 0)
    vectors = rng.standard_normal((memories, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for index in range(memories):
        stream.add("observation", f"memory {index}", now - timedelta(minutes=index),
                   int(index % 10) + 1, vectors[index])
    queries = rng.standard_normal((repeats, dim)).astype(np.float32)
    timings = []
    for query in queries:
        started = time.perf_counter()
        retrieve(stream, query, now, limit=10, token_budget=400)
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--days", type=int, default=1)
    asyncio.run(costs(parser.parse_args().days))
    for dim in (256, 1536):
        print(f"retrieval over 10,000 memories of dimension {dim}: median "
              f"{retrieval_time(dim=dim):.2f} ms (target < 2 ms)")
