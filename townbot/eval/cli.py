"""`townbot eval`: evaluate a town (`--db`), simulate then evaluate (`run`), or compare two
reports (`compare`)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any

from townbot.eval.parser import JUDGE_ENV
from townbot.eval.report import build_report, compare, load_report, write_report
from townbot.eval.run import EvalOptions, evaluate, note
from townbot.eval.snapshot import read_town
from townbot.llm.budget import Budget
from townbot.llm.metering import CollectedUsage
from townbot.llm.settings import Caps, ModelSettings, SettingsError, load_settings
from townbot.llm.stack import build_model_stack
from townbot.platforms.arguments import run_stoppable
from townbot.store.database import StoreError
from townbot.town.launch import TownFiles, checked_client, open_engine
from townbot.town.service import Person, TownService

EVAL_RUNNER = Person("cli:eval", "townbot eval run", moderator=True)


def run_eval(args: argparse.Namespace) -> int:
    if args.eval_command == "compare":
        try:
            print(compare(load_report(args.first), load_report(args.second)))
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        return 0
    if args.eval_command is None and not args.db:
        print("error: say which town to evaluate with --db TOWN.db, or simulate one with "
              "`townbot eval run --days 2 --scenario valentines-party`", file=sys.stderr)
        return 2
    return run_stoppable(_evaluate_all(args, load_settings()))


def judge_settings(settings: ModelSettings, chosen: str | None) -> ModelSettings:
    name = chosen or os.environ.get(JUDGE_ENV) or None
    if name is None:
        return settings
    if not name.strip():
        raise SettingsError(f"{JUDGE_ENV} is empty; name a chat model, e.g. gpt-4o-mini")
    return dataclasses.replace(settings, chat_model=name.strip(), small_model=None)


async def _simulate(args: argparse.Namespace, settings: ModelSettings, seed: int, db: Path) -> float:
    if db.exists():
        raise StoreError(f"{db} already exists; choose another --out folder or remove it")
    started = time.perf_counter()
    engine = await open_engine(TownFiles(args.world, args.personas), str(db), seed=seed,
                               settings=settings)
    try:
        if args.scenario and args.scenario != "none":
            await TownService(engine).load_scenario(EVAL_RUNNER, args.scenario)
        ticks = engine.clock.ticks_for(days=args.days)
        for done in range(1, ticks + 1):
            await engine.tick()
            if done % max(1, ticks // 4) == 0:
                note(f"  simulated {done}/{ticks} ticks ({engine.clock.now:%a %H:%M})")
    finally:
        await engine.model.close()
        await engine.store.close()
    return time.perf_counter() - started


async def _evaluate_all(args: argparse.Namespace, settings: ModelSettings) -> int:
    started = time.perf_counter()
    out = Path(args.out)
    judging = judge_settings(settings, args.judge_model)
    world = TownFiles(args.world, args.personas).load()
    simulating = args.eval_command == "run"
    runs: list[dict[str, Any]] = []
    sim_seconds = 0.0
    seeds = args.seeds
    for index, seed in enumerate(seeds or [None]):
        db = out / "towns" / f"seed-{seed}.db" if simulating else Path(args.db)
        if simulating:
            note(f"seed {seed}: simulating {args.days:g} game days into {db}")
            sim_seconds += await _simulate(args, settings, seed, db)
        snapshot = await read_town(db, world)
        seed = snapshot.town.seed if seed is None else seed
        note(f"{'seed ' + str(seed) if seeds else 'town'}: evaluating {db} "
             f"({index + 1} of {len(seeds or [0])})")
        usage = CollectedUsage()
        budget = Budget(Caps(calls_per_town=args.max_calls)) if args.max_calls else None
        # Both send their usage to the run's sink and share its call cap.
        model = build_model_stack(await checked_client(seed, settings), budget=budget, usage=usage)
        judge = None
        try:
            judge = build_model_stack(await checked_client(seed, judging), budget=budget, usage=usage)
            await model.prepare()
            options = EvalOptions(seed, args.conditions, rankings=not args.end_to_end_only,
                                  orders=args.orders)
            runs.append(await evaluate(snapshot, model, judge, settings, options, usage))
        finally:
            await model.close()
            if judge is not None:
                await judge.close()
    report = build_report(runs, {
        "model": settings.describe() if not settings.offline else "offline model",
        "embedding_model": runs[0]["town"]["embedding_model"],
        "judge": judging.chat_model or "offline model",
        "judge_kind": "offline rule" if judging.offline else "language model",
        "conditions": list(args.conditions), "seeds": [r["seed"] for r in runs],
        "max_calls": args.max_calls, "retrieval_count": EvalOptions().retrieval_count,
        "orders": args.orders, "interview_guards": "off (as in the paper; on in a town)",
        "rankings": not args.end_to_end_only},
        {"days": args.days, "scenario": args.scenario, "wall_seconds": round(sim_seconds, 1)}
        if simulating else None, time.perf_counter() - started)
    path = write_report(report, out)
    print(report["headline"])
    for figure in report["figures"].values():
        if figure["mean"] is not None:
            paper = "" if figure["paper"] is None else f" (paper {figure['paper']})"
            print(f"{figure['label']}: {figure['mean']}{paper}")
    print(f"report: {path} (and report.json, pictures) in {report['wall_seconds']:.0f} s")
    return 0
