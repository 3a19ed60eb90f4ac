"""The engine's CPU per tick on the offline model, and where it goes.

A town of --residents (the personas, cloned under new names past 25 as benchmarks/speed.py
does) runs --hours game hours from its start (--keep DB keeps that database), or a copy of a
town built before (--town DB) is resumed; then --ticks ticks are timed. Engine CPU is the
process's CPU during a tick minus the CPU inside the offline model (answers and embeddings),
as speed.py counts it, split into:

- commit: encoding what changed and the store's write of it (all threads);
- other threads: the database's worker thread, during the commit and outside it (usage rows);
- retrieval: scoring memories (the minds' queries);
- the rest: the minds' own work, the model stack's layers, perception, the event loop.

A week-old town takes a few minutes to build: build it once with --keep, then time it as often
as needed with --town (each run resumes a copy, so the kept town stays as built).
Usage: python benchmarks/engine_tick.py [--residents N] [--hours H] [--ticks T]
       [--keep DB | --town DB]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from speed import ROOT, CpuTimed, cloned_town

from townbot.llm.offline import OfflineModel
from townbot.llm.stack import build_model_stack
from townbot.mind import dialogue, planning, reacting, reflection, retrieval, summary
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.town.launch import pin_blas_threads
from townbot.world.loading import load_world


class Spent:
    """CPU of the commit (all threads) and of retrieval (this thread), summed per tick."""

    def __init__(self) -> None:
        self.commit = 0.0
        self.retrieval = 0.0
        commit = Engine._commit

        async def timed_commit(engine: Engine, *args: Any, **kwargs: Any) -> None:
            began = time.process_time()
            try:
                await commit(engine, *args, **kwargs)
            finally:
                self.commit += time.process_time() - began

        Engine._commit = timed_commit  # type: ignore[method-assign]
        timed = self._timed(retrieval.recall)  # what the minds' steps retrieve with
        for module in (dialogue, planning, reacting, reflection, summary):
            module.recall = timed  # type: ignore[attr-defined]

    def _timed(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            began = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.retrieval += time.thread_time() - began
        return timed


class Mark(NamedTuple):
    """The process's CPU, this thread's, and the offline model's, at one moment."""

    process: float
    thread: float
    model: float

    @classmethod
    def now(cls) -> Mark:
        return cls(time.process_time(), time.thread_time(), CpuTimed.cpu)


def record(rows: dict[str, list[float]], began: Mark, spent: Spent) -> Mark:
    """Adds the figures of the tick that began at `began` and ends now; the new mark."""
    ended = Mark.now()
    process = ended.process - began.process
    total = process - (ended.model - began.model)
    rows["engine"].append(total)
    rows["commit"].append(spent.commit)
    rows["other threads"].append(process - (ended.thread - began.thread))
    rows["retrieval"].append(spent.retrieval)
    rows["the rest"].append(total - spent.commit - spent.retrieval)
    return ended


def figures(values: list[float]) -> str:
    return (f"median {statistics.median(values) * 1000:.1f} ms, "
            f"mean {statistics.fmean(values) * 1000:.1f}")


async def main(residents: int, hours: float, ticks: int, keep: Path | None,
               town: Path | None) -> None:
    pin_blas_threads()  # as the commands do
    world = cloned_town(load_world(ROOT / "world.yaml", ROOT / "personas"), residents)
    with tempfile.TemporaryDirectory() as folder:
        db = keep or Path(folder) / "bench.db"
        if town is not None:
            shutil.copyfile(town, db)
        store = await Store.open(db)
        engine = await Engine.open(world, store, build_model_stack(CpuTimed(OfflineModel(seed=0))))
        stored = len(await store.agents(engine.town.id))
        if stored != len(engine.minds):
            await store.close()
            raise SystemExit(f"{town} has {stored} residents: pass --residents {stored}")
        for _ in range(0 if town else engine.clock.ticks_for(hours=hours)):
            await engine.tick()
        memories = sum(len(m.stream) for m in engine.minds.values())
        spent = Spent()
        rows: dict[str, list[float]] = {"engine": [], "commit": [], "other threads": [],
                                        "retrieval": [], "the rest": []}
        # A tick is timed until the next one begins (one more runs untimed), so that what it
        # leaves to the cycle collector is counted with it.
        mark = Mark.now()
        for index in range(ticks + 1):
            if index > 0:
                mark = record(rows, mark, spent)
            spent.commit = spent.retrieval = 0.0
            await engine.tick()
        now = engine.clock.now
        await store.close()
    print(f"{len(engine.minds)} residents at {now:%A %H:%M}, {memories} memories; "
          f"engine CPU over {ticks} ticks, the offline model's CPU left out:")
    for name, values in rows.items():
        print(f"  {name}: {figures(values)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--residents", type=int, default=25)
    parser.add_argument("--hours", type=float, default=24.0,
                        help="game hours the town runs before its ticks are timed (default 24)")
    parser.add_argument("--ticks", type=int, default=36)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--keep", type=Path, help="build the town in this database and keep it")
    where.add_argument("--town", type=Path, help="time a copy of this town instead of building one")
    args = parser.parse_args()
    if args.keep is not None and args.keep.exists():
        parser.error(f"{args.keep} exists; --keep builds a new town (time it with --town)")
    if args.town is not None and not args.town.is_file():
        parser.error(f"{args.town} is not a town's database file")
    asyncio.run(main(args.residents, args.hours, args.ticks, args.keep, args.town))
