"""The engine's own time per tick for 25 agents at a full game day's memory volume.

Runs one game day on the offline model to build up a day's memories, then times further ticks
and subtracts the time spent inside the model (answers and embeddings), leaving the engine:
perception, the minds' bookkeeping, retrieval, applying intents and the database commit.
Target: under 20 ms per tick. Usage: python benchmarks/engine_tick.py [--ticks N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from townbot.llm.offline import OfflineModel
from townbot.llm.stack import build_model_stack
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.world.loading import load_world

ROOT = Path(__file__).resolve().parents[1]


async def main(ticks: int) -> None:
    world = load_world(ROOT / "world.yaml", ROOT / "personas")
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(Path(folder) / "bench.db")
        model = build_model_stack(OfflineModel(seed=0))
        engine = await Engine.open(world, store, model)
        warm = engine.clock.ticks_for(days=1)
        started = time.perf_counter()
        for _ in range(warm):
            await engine.tick()
        day_seconds = time.perf_counter() - started
        memories = sum(len(m.stream) for m in engine.minds.values())
        engine_ms: list[float] = []
        for _ in range(ticks):
            model_before = model.seconds_in_model
            tick_started = time.perf_counter()
            await engine.tick()
            total = time.perf_counter() - tick_started
            engine_ms.append((total - (model.seconds_in_model - model_before)) * 1000)
        await store.close()
    print(f"agents: {len(engine.minds)}; memories after one game day: {memories} "
          f"({memories / len(engine.minds):.0f} per agent)")
    print(f"one game day ({warm} ticks) took {day_seconds:.2f} s wall time with the offline model")
    print(f"engine time per tick over {ticks} ticks, model time excluded: "
          f"median {statistics.median(engine_ms):.2f} ms, mean {statistics.fmean(engine_ms):.2f} ms, "
          f"max {max(engine_ms):.2f} ms (target < 20 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ticks", type=int, default=36)
    asyncio.run(main(parser.parse_args().ticks))
