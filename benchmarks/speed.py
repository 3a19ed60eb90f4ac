"""The speed goals of issue 13 in one table, measured in one run on the offline model.

Every figure is CPU time, bytes or a ratio, so that a shared machine changes it little:

- engine CPU per tick: the process's CPU from a tick's start to the next one's (so that what the
  tick leaves to the cycle collector counts) minus the CPU spent inside the offline model
  (answers and embeddings), after `--days` game days (default 1: day 7 takes long to
  reach; pass --days 7 for the issue's figure), at 25 residents and at 100 (a synthetic town:
  the 25 personas cloned under new names, `--big`), each with the work a tick gave it per
  resident (memories stored, answers asked), and beside the big town's figure the 25-resident
  town's over the same game hours (the clones share homes and workplaces, so a resident of the
  big town meets more people and does more in a tick);
- disk written per game day: bytes the process passed to write() (wchar of /proc/self/io,
  which covers the database and its WAL; write_bytes beside it when the kernel counts it);
- calls per agent-day: model calls from the town's usage table over residents x game days;
- retrieval over 10k memories at 256, 384 and 1536 dimensions, filtered to two kinds: median
  and p90 wall time per query, with numpy's BLAS left threaded and pinned to one thread
  (threadpoolctl), the two taking turns in blocks of queries, and the one-thread CPU time; the
  load average beside them says how busy the machine was;
- start-up: user+sys CPU of `townbot --help`, and of an offline `townbot sim --hours 0.5` from
  the process's start until its first tick begins (and for the whole run), medians of 5 runs
  with the bytecode compiled as an installed package has it, and the first tick's figure under
  PYTHONDONTWRITEBYTECODE=1 beside them (a checkout without __pycache__ then compiles townbot's
  modules in every run);
- resume: CPU to reopen a 25-resident town after `--resume-days` game days (default 20, the
  issue's figure), the offline model made apart (its start does not grow with the town);
- memory as a town ages: the peak memory (VmHWM) of a process that resumes the 25-resident
  town after 1, 10 and `--resume-days` game days and runs it one more game day, and the growth
  per game day between the first and the last, with today's code and with `--before`'s (a git
  revision, default main: its townbot/ is taken with `git archive`), side by side in one run.
  The aged towns are built once per version of the code (a copy after each of those days) and
  kept in the temp dir (townbot-speed/); each run resumes a copy;
- size: the lines of townbot/'s Python files and its largest file, today's and --before's;
- the host, below the table: the interpreter, and the CPU a fixed pure-Python loop took before
  and after the run (a shared machine's speed moves from hour to hour; every CPU figure with it).

The runs happen in child processes of this script, so that each one's peak memory is its own.
Usage: python benchmarks/speed.py [--days D] [--resume-days D] [--before REV] [--big N]
       [--big-hours H] [--skip size,engine,retrieval,startup,resume,memory]
Latency under a real model's delays is benchmarks/llm_latency.py.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from townbot.llm.port import Layer

ROOT = Path(__file__).resolve().parents[1]
TOWNBOT = [sys.executable, "-m", "townbot"]
SECTIONS = ("size", "engine", "retrieval", "startup", "resume", "memory")
CACHE = Path(tempfile.gettempdir()) / "townbot-speed"


class CpuTimed(Layer):
    """CPU inside the offline model, which answers without yielding to the loop (counted
    apart, so the engine's own CPU is the process's minus this)."""

    cpu = 0.0
    answers = 0  # replies asked for: the work a tick gave the model

    async def reply(self, request):  # type: ignore[no-untyped-def]
        CpuTimed.answers += 1
        began = time.process_time()
        try:
            return await self.inner.reply(request)
        finally:
            CpuTimed.cpu += time.process_time() - began

    async def embed_report(self, texts, call=None):  # type: ignore[no-untyped-def]
        began = time.process_time()
        try:
            return await self.inner.embed_report(texts, call)
        finally:
            CpuTimed.cpu += time.process_time() - began


# --- child: one town run, or one resume ----------------------------------------------------------

def io_written() -> dict[str, int]:
    """This process's write counters (wchar: bytes passed to write(); write_bytes: to storage)."""
    try:
        lines = Path("/proc/self/io").read_text().splitlines()
    except OSError:
        return {}
    return {key: int(value) for key, value in (line.split(": ") for line in lines)}


def peak_memory_mb() -> float:
    """This process's peak resident memory (VmHWM). Not ru_maxrss from wait4: the kernel keeps
    in a child's ru_maxrss the peak of the memory it replaced at exec, which is the parent's
    own at the fork, so a parent grown by the retrieval section made every later child look
    as big as itself."""
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:  # not Linux: ru_maxrss is this process's own peak (bytes on macOS)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 1024
    kilobytes = next(line.split()[1] for line in lines if line.startswith("VmHWM:"))
    return int(kilobytes) / 1024


def cloned_town(world: Any, residents: int) -> Any:
    """The world with `residents` people: the personas, then copies of them under new names."""
    from townbot.world.loading import select_residents

    originals = list(world.personas.values())
    if residents <= len(originals):
        return select_residents(world, str(residents))
    people = {p.name: p for p in originals}
    copy = 1
    while len(people) < residents:
        for persona in originals[: residents - len(people)]:
            name = f"{persona.name}-{copy}"
            people[name] = replace(persona, name=name)
        copy += 1
    return replace(world, personas=people)


async def run_offline_town(residents: int, hours: float) -> None:
    """A town of `residents` (see cloned_town) on the offline model for `hours` game hours, in a
    database thrown away after: for benchmarks that watch what a town asks, not how fast."""
    from townbot.llm.offline import OfflineModel
    from townbot.llm.stack import build_model_stack
    from townbot.store.database import Store
    from townbot.town.engine import Engine
    from townbot.world.loading import load_world

    world = cloned_town(load_world(ROOT / "world.yaml", ROOT / "personas"), residents)
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(Path(folder) / "town.db")
        engine = await Engine.open(world, store, build_model_stack(OfflineModel(seed=0)))
        for _ in range(engine.clock.ticks_for(hours=hours)):
            await engine.tick()
        await store.close()


async def run_town(residents: int, hours: float, db: Path, timed_ticks: int) -> dict[str, Any]:
    from townbot.llm.offline import OfflineModel
    from townbot.llm.stack import build_model_stack
    from townbot.store.database import Store
    from townbot.town.engine import Engine
    from townbot.town.launch import pin_blas_threads
    from townbot.town.usage import summarise
    from townbot.world.loading import load_world

    pin_blas_threads()  # as the commands do
    world = cloned_town(load_world(ROOT / "world.yaml", ROOT / "personas"), residents)
    store = await Store.open(db)
    engine = await Engine.open(world, store, build_model_stack(CpuTimed(OfflineModel(seed=0))))
    ticks = engine.clock.ticks_for(hours=hours)
    written_before = io_written()
    starts: list[tuple[float, float]] = []  # (process CPU, the model's CPU) as timed ticks begin
    def work_done() -> tuple[int, int]:  # (memories held, answers asked), read outside the timing
        return sum(len(mind.stream) for mind in engine.minds.values()), CpuTimed.answers

    # One tick past the timed ones: a tick's CPU runs until the next one begins, so that what
    # it leaves to the cycle collector is counted with it.
    for index in range(ticks + timed_ticks + 1):
        if index == ticks:
            work_before = work_done()
        if index >= ticks:  # the timed ticks come after the town has built up its memories
            starts.append((time.process_time(), CpuTimed.cpu))
        if index == ticks + timed_ticks:
            work_after = work_done()
        await engine.tick()
        if index == ticks - 1:
            written_after = io_written()
    engine_cpu = [(cpu_after - cpu) - (model_after - model)
                  for (cpu, model), (cpu_after, model_after) in pairwise(starts)]
    rows = await store.usage_rows(engine.town.id)
    memories = sum(len(m.stream) for m in engine.minds.values())
    async with store.db.execute("SELECT COALESCE(SUM(LENGTH(embedding)), 0) FROM memories") as cursor:
        embedding_bytes = (await cursor.fetchone())[0]
    await store.close()
    game_days = hours / 24
    return {
        "residents": len(engine.minds), "hours": hours, "memories": memories,
        "tick_ms_median": statistics.median(engine_cpu) * 1000,
        "tick_ms_mean": statistics.fmean(engine_cpu) * 1000,
        "tick_ms_max": max(engine_cpu) * 1000,
        "stored_per_tick": (work_after[0] - work_before[0]) / timed_ticks,
        "answers_per_tick": (work_after[1] - work_before[1]) / timed_ticks,
        "wchar_per_day": (written_after.get("wchar", 0) - written_before.get("wchar", 0)) / game_days,
        "write_bytes_per_day": (written_after.get("write_bytes", 0)
                                - written_before.get("write_bytes", 0)) / game_days,
        "calls_per_agent_day": summarise(rows)["calls"] / len(engine.minds) / game_days,
        "db_bytes": db.stat().st_size, "peak_mb": peak_memory_mb(),
        "embedding_bytes": embedding_bytes, "embedding_raw_bytes": memories * engine.town.embedding_dim * 4,
    }


async def resume_town(db: Path, hours: float = 0.0) -> dict[str, Any]:
    """Reopen a town (and run it `hours` game hours): the CPU it took and the peak memory."""
    began = time.process_time()
    from townbot.llm.offline import OfflineModel
    from townbot.llm.stack import build_model_stack
    from townbot.store.database import Store
    from townbot.town.engine import Engine
    from townbot.world.loading import load_world

    imported = time.process_time()
    world = load_world(ROOT / "world.yaml", ROOT / "personas")
    # The offline model loads its inflection table when made (about 0.4 s, whatever the town's
    # age; a served model has none): made apart, so the resume is the town's own.
    model_at = time.process_time()
    model = build_model_stack(OfflineModel(seed=0))
    opened_at, main_at = time.process_time(), time.thread_time()
    store = await Store.open(db)
    engine = await Engine.open(world, store, model)
    opened, main = time.process_time() - opened_at, time.thread_time() - main_at
    for _ in range(engine.clock.ticks_for(hours=hours)):
        await engine.tick()
    memories = sum(len(mind.stream) for mind in engine.minds.values())
    await store.close()
    return {"import_s": imported - began, "world_s": model_at - imported,
            "model_s": opened_at - model_at, "open_s": opened,
            "database_s": opened - main, "residents": len(engine.minds), "memories": memories,
            "peak_mb": peak_memory_mb()}


# --- parent: runs children, prints the table ------------------------------------------------------

def child(arguments: Sequence[str],
          env: dict[str, str] | None = None) -> tuple[dict[str, Any], float]:
    """A child's JSON answer and its user+sys CPU seconds."""
    process = subprocess.Popen([*arguments], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               cwd=ROOT, env=env)
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(arguments)} failed with exit code {process.returncode}")
    lines = output.decode().strip().splitlines()
    answer = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    return answer, usage.ru_utime + usage.ru_stime


def source_key(code: Path = ROOT) -> str:
    """A digest of the code (townbot/ under `code`) and the data a town is built from, so a
    cached town is rebuilt when either changes."""
    digest = hashlib.sha256()
    files = [(path, path.relative_to(code)) for path in sorted(code.glob("townbot/**/*.*"))]
    files += [(path, path.relative_to(ROOT))
              for path in sorted([ROOT / "world.yaml", *ROOT.glob("personas/*")])]
    for path, name in files:
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(name).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


async def build_aged_town(folder: Path, days: list[int]) -> None:
    """A 25-resident offline town run day by day, copied to town-<day>d.db after each of `days`
    (closed in between, as a resumed town is)."""
    from townbot.llm.offline import OfflineModel
    from townbot.llm.stack import build_model_stack
    from townbot.store.database import Store
    from townbot.town.engine import Engine
    from townbot.world.loading import load_world

    world = load_world(ROOT / "world.yaml", ROOT / "personas")
    db = folder / "town.db"
    for day in range(1, max(days) + 1):
        store = await Store.open(db)
        engine = await Engine.open(world, store, build_model_stack(OfflineModel(seed=0)))
        for _ in range(engine.clock.ticks_for(hours=24)):
            await engine.tick()
        await store.close()
        if day in days:
            shutil.copyfile(db, folder / f"town-{day}d.db")
    for made in folder.glob("town.db*"):
        made.unlink()


def aged_days(last_day: int) -> list[int]:
    """The ages of the towns the resume and memory sections reopen."""
    return sorted({1, min(10, last_day), last_day})


def aged_towns(days: list[int], me: list[str], code: Path = ROOT) -> dict[int, Path]:
    """The 25-resident town after each of `days` game days, built once by the townbot of `code`
    (the first run takes a few minutes) and kept in the temp dir."""
    folder = CACHE / f"aged-{source_key(code)}-{'-'.join(map(str, days))}"
    towns = {day: folder / f"town-{day}d.db" for day in days}
    if not all(town.exists() for town in towns.values()):
        building = CACHE / "aged-building"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        child([*me, "--build", str(building), ",".join(map(str, days))],
              env={**OFFLINE_ENV, "PYTHONPATH": str(code)})
        shutil.rmtree(folder, ignore_errors=True)
        building.rename(folder)
    return towns


def migrated(town: Path, me: list[str]) -> Path:
    """A copy of `town` opened once by today's code (so that its migrations, if any, are done
    before a measurement), kept beside it."""
    copy = town.with_name(f"{town.stem}-now-{source_key(ROOT)}.db")
    if not copy.exists():
        shutil.copyfile(town, copy)
        child([*me, "--hours", "0", "--resume", str(copy)], env={**OFFLINE_ENV, "PYTHONPATH": str(ROOT)})
    return copy


def resumed(db: Path, me: list[str], hours: float = 0.0, code: Path = ROOT) -> tuple[dict[str, Any], float]:
    """A child's resume of a copy of `db` (and its run of `hours`) with the townbot of `code`."""
    env = {**OFFLINE_ENV, "PYTHONPATH": str(code)}
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "resume.db"  # the resume opens it to write: the cache stays as built
        shutil.copyfile(db, copy)
        return child([*me, "--hours", str(hours), "--resume", str(copy)], env=env)


def resume_figures(days: int, me: list[str]) -> str:
    answer, cpu = resumed(aged_towns(aged_days(days), me)[days], me)
    return (f"{answer['open_s']:.2f} s CPU to open, of it {answer['database_s']:.2f} s in other "
            f"threads (SQLite's) ({answer['memories']} memories; "
            f"{cpu:.2f} s for the whole process, of it {answer['import_s']:.2f} s imports, "
            f"{answer['world_s']:.2f} s the world's files and {answer.get('model_s', 0):.2f} s "
            f"making the offline model); peak {answer['peak_mb']:.0f} MB")


def code_of(revision: str) -> Path:
    """townbot/ as `revision` has it, taken out of git once into the temp dir."""
    commit = subprocess.run(["git", "rev-parse", "--verify", f"{revision}^{{commit}}"], cwd=ROOT,
                            capture_output=True, text=True)
    if commit.returncode != 0:
        raise SystemExit(f"--before {revision}: not a git revision of {ROOT}; give a branch, tag "
                         "or commit, e.g. --before main")
    folder = CACHE / f"code-{commit.stdout.strip()[:12]}"
    if not (folder / "townbot").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit.stdout.strip(), "townbot"], cwd=ROOT,
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def code_size(folder: Path) -> tuple[int, str, int]:
    """Lines of townbot/'s Python files under `folder`, and its largest file with its lines."""
    counts = {path.relative_to(folder).as_posix(): len(path.read_text().splitlines())
              for path in (folder / "townbot").rglob("*.py")}
    largest = max(counts, key=counts.__getitem__)
    return sum(counts.values()), largest, counts[largest]


def size_figures(before: str) -> str:
    lines, largest, most = code_size(ROOT)
    lines_before, largest_before, most_before = code_size(code_of(before))
    return (f"{lines:,} lines, largest {largest} ({most}); {before}: {lines_before:,} lines, "
            f"largest {largest_before} ({most_before})")


def memory_figures(last_day: int, before: str, me: list[str]) -> tuple[str, str]:
    """Peak memory of a day's run of the town resumed after 1, 10 and `last_day` game days, with
    `before`'s code and today's, and the growth per game day from the first to the last. The
    towns are built by `before`'s code, which may not open a newer schema; today's opens them
    once first, so that its migrations are not measured."""
    days = aged_days(last_day)
    old_code = code_of(before)
    towns = aged_towns(days, me, old_code)
    cells, growth = [], []
    for label, code in ((before, old_code), ("now", ROOT)):
        peaks = {day: resumed(towns[day] if code == old_code else migrated(towns[day], me), me,
                              24.0, code)[0]["peak_mb"] for day in days}
        cells.append(f"{label}: " + ", ".join(f"day {day} {peaks[day]:.0f} MB" for day in days))
        growth.append(f"{label} {(peaks[last_day] - peaks[1]) / (last_day - 1):.1f} MB")
    return "; ".join(cells), f"{', '.join(growth)} a game day (day 1 to day {last_day})"


def retrieval_times(dim: int, count: int = 10_000, queries: int = 400,
                    block: int = 20) -> dict[str, tuple[float, float]]:
    """Median and p90 milliseconds (wall) per kind-filtered query over `count` memories, with
    numpy's BLAS threaded and pinned to one thread: the two take turns in blocks of `block`
    queries, so that both meet the same load from the rest of the machine."""
    from threadpoolctl import threadpool_limits

    from townbot.mind.memory import KINDS, MemoryStream
    from townbot.mind.retrieval import retrieve

    random = np.random.default_rng(0)
    stream = MemoryStream(dim)
    start = datetime(2023, 2, 13, 7, 0)
    for index in range(count):
        vector = random.standard_normal(dim).astype(np.float32)
        stream.add(KINDS[index % len(KINDS)], f"memory {index}", start + timedelta(minutes=index),
                   int(random.integers(1, 11)), vector / np.linalg.norm(vector))
    probes = random.standard_normal((queries, dim)).astype(np.float32)
    now = start + timedelta(minutes=count + 60)
    kinds = ("observation", "reflection")
    times: dict[str, list[float]] = {"threaded": [], "one thread": [], "one thread, CPU": []}
    for first_probe in range(0, queries, block):
        for mode, limit in (("threaded", None), ("one thread", 1)):
            with threadpool_limits(limits=limit, user_api="blas"):
                for probe in probes[first_probe: first_probe + block]:
                    began, cpu = time.perf_counter(), time.thread_time()
                    retrieve(stream, probe, now, kinds=kinds, touch=False)
                    times[mode].append((time.perf_counter() - began) * 1000)
                    if limit == 1:
                        times["one thread, CPU"].append((time.thread_time() - cpu) * 1000)
    return {mode: (statistics.median(values), sorted(values)[int(len(values) * 0.9)])
            for mode, values in times.items()}


# `townbot sim` as the command runs it, with the process's CPU noted as the first tick begins:
# Engine.tick is wrapped as its module loads, so that the command imports it as it does alone.
SIM_TO_FIRST_TICK = """
import importlib.util, json, sys, time
began = {}

class NoteFirstTick:
    @staticmethod
    def find_spec(name, path, target=None):
        if name != "townbot.town.engine":
            return None
        sys.meta_path.remove(NoteFirstTick)
        spec = importlib.util.find_spec(name)
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            tick = module.Engine.tick

            async def noted_tick(self, **pacing):
                began.setdefault("cpu", time.process_time())
                return await tick(self, **pacing)
            module.Engine.tick = noted_tick
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, NoteFirstTick)
from townbot.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "start_up_s": began.get("cpu")}))
"""


OFFLINE_ENV = {key: value for key, value in os.environ.items() if not key.startswith("TOWNBOT_")}
# Compiled bytecode for the start-up runs, kept here as an installed townbot keeps it beside its
# modules (pip compiles them when it installs the package); without it, every run compiles
# townbot's 100-odd modules anew, about 0.15 s of CPU, as in a fresh checkout under
# PYTHONDONTWRITEBYTECODE.
COMPILED_ENV = {**{key: value for key, value in OFFLINE_ENV.items()
                   if key != "PYTHONDONTWRITEBYTECODE"},
                "PYTHONPYCACHEPREFIX": str(CACHE / "bytecode")}
UNCOMPILED_ENV = {**OFFLINE_ENV, "PYTHONDONTWRITEBYTECODE": "1"}


def sim_to_first_tick(env: dict[str, str]) -> tuple[float, float]:
    """CPU of an offline `townbot sim --hours 0.5` until its first tick begins, and in all."""
    with tempfile.TemporaryDirectory() as folder:
        noted, sim_cpu = child([sys.executable, "-c", SIM_TO_FIRST_TICK, "sim", "--hours", "0.5",
                                "--quiet", "--db", str(Path(folder) / "start.db")], env=env)
    return noted["start_up_s"], sim_cpu


def start_up(runs: int = 5) -> dict[str, float]:
    """Medians of `runs` runs, after an untimed one that compiles the bytecode: user+sys CPU of
    `townbot --help` ("help"); of an offline `townbot sim --hours 0.5` from the process's start
    until its first tick begins ("first_tick") and for the whole run ("sim"); and the first tick's
    figure under PYTHONDONTWRITEBYTECODE=1 ("uncompiled": a module without compiled bytecode
    beside it is compiled in each run)."""
    sim_to_first_tick(COMPILED_ENV)
    helps = [child([*TOWNBOT, "--help"], env=COMPILED_ENV)[1] for _ in range(runs)]
    sims = [sim_to_first_tick(COMPILED_ENV) for _ in range(runs)]
    uncompiled = [sim_to_first_tick(UNCOMPILED_ENV)[0] for _ in range(runs)]
    return {"help": statistics.median(helps),
            "first_tick": statistics.median(first for first, _ in sims),
            "sim": statistics.median(whole for _, whole in sims),
            "uncompiled": statistics.median(uncompiled)}


def host_probe() -> float:
    """CPU milliseconds of a fixed pure-Python loop (3 million additions): how fast this host
    runs the interpreter at the moment. On a shared machine it moves from hour to hour (82 to
    157 ms in one evening here), and every CPU figure of the table moves with it, so a run's
    figures compare with another's only beside this one."""
    began = time.process_time()
    total = 0
    for number in range(3_000_000):
        total += number
    return (time.process_time() - began) * 1000


def work(run: dict[str, Any]) -> str:
    """What a timed tick gave the engine to do, per resident: the CPU goals assume it stays put
    as the town grows, and a crowded town gives each resident more."""
    residents = run["residents"]
    return (f"a tick stored {run['stored_per_tick'] / residents:.2f} memories and asked "
            f"{run['answers_per_tick'] / residents:.2f} answers a resident")


def megabytes(value: float) -> str:
    return f"{value / 1e6:.1f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=float, default=1.0,
                        help="game days the 25-resident town runs before its ticks are timed "
                             "(default 1; the issue's figure is day 7)")
    parser.add_argument("--big", type=int, default=100, help="residents of the synthetic town")
    parser.add_argument("--big-hours", type=float, default=6.0,
                        help="game hours the big town runs from 7:00 before its ticks are timed "
                             "(default 6: a whole day of 100 residents takes long)")
    parser.add_argument("--resume-days", type=int, default=20,
                        help="game days of the oldest town the resume and memory sections reopen "
                             "(default 20; built once per version of the code and kept in the "
                             "temp dir)")
    parser.add_argument("--before", default="main",
                        help="git revision whose code the memory section measures beside today's "
                             "(default main)")
    parser.add_argument("--ticks", type=int, default=12, help="ticks timed after the warm-up")
    parser.add_argument("--skip", default="", help=f"sections to leave out: {', '.join(SECTIONS)}")
    parser.add_argument("--run", nargs=3, metavar=("RESIDENTS", "HOURS", "DB"), help=argparse.SUPPRESS)
    parser.add_argument("--resume", metavar="DB", help=argparse.SUPPRESS)
    parser.add_argument("--hours", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--build", nargs=2, metavar=("FOLDER", "DAYS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.resume_days < 2:
        parser.error("--resume-days must be 2 or more (the memory section compares day 1 with it)")
    if args.build:
        folder, days = args.build
        asyncio.run(build_aged_town(Path(folder), [int(day) for day in days.split(",")]))
        return 0
    if args.run:
        residents, hours, db = args.run
        print(json.dumps(asyncio.run(run_town(int(residents), float(hours), Path(db), args.ticks))))
        return 0
    if args.resume:
        print(json.dumps(asyncio.run(resume_town(Path(args.resume), args.hours))))
        return 0
    skip = {part.strip() for part in args.skip.split(",") if part.strip()}
    probe_before = host_probe()
    rows: list[tuple[str, str, str]] = []
    me = [sys.executable, str(Path(__file__).resolve())]
    if "size" not in skip:
        rows.append(("townbot/ in lines of Python, and its largest file", size_figures(args.before),
                     "<= 18,000 lines, no file over 700 (issue 35)"))
    if "engine" not in skip:
        with tempfile.TemporaryDirectory() as folder:
            db = Path(folder) / "town.db"
            small, _ = child([*me, "--ticks", str(args.ticks),
                                        "--run", "25", str(args.days * 24), str(db)])
        with tempfile.TemporaryDirectory() as folder:
            big, _ = child([*me, "--ticks", str(args.ticks),
                               "--run", str(args.big), str(args.big_hours), str(Path(folder) / "big.db")])
        with tempfile.TemporaryDirectory() as folder:  # the big town's window at 25 residents
            beside, _ = child([*me, "--ticks", str(args.ticks),
                                  "--run", "25", str(args.big_hours), str(Path(folder) / "beside.db")])
        rows += [
            (f"engine CPU per tick, 25 residents, after day {args.days:g}",
             f"median {small['tick_ms_median']:.1f} ms, mean {small['tick_ms_mean']:.1f}, "
             f"max {small['tick_ms_max']:.1f} ({small['memories']} memories; {work(small)})",
             "<= 20 ms (issue 35)"),
            (f"engine CPU per tick, {big['residents']} residents, after {args.big_hours:g} h",
             f"median {big['tick_ms_median']:.1f} ms, mean {big['tick_ms_mean']:.1f}, "
             f"max {big['tick_ms_max']:.1f} ({work(big)}; 25 residents in the same game hours: "
             f"median {beside['tick_ms_median']:.1f} ms, {work(beside)}. The copies share the "
             "originals' homes and workplaces: each resident meets more people, and does more)",
             "<= 150 ms (issue 35)"),
            ("disk written per game day, 25 residents",
             f"{megabytes(small['wchar_per_day'])} written "
             f"({megabytes(small['write_bytes_per_day'])} reached storage); "
             f"database {megabytes(small['db_bytes'])}, of it embeddings "
             f"{megabytes(small['embedding_bytes'])} for {megabytes(small['embedding_raw_bytes'])} "
             "of float32 (the offline model's hashing vectors are mostly zeros and stored "
             "compressed; a dense model's are stored raw and written twice, to the WAL and at "
             "checkpoint)", "<= 15 MB"),
            (f"calls per agent-day at 25 / {big['residents']} residents",
             f"{small['calls_per_agent_day']:.0f} / {big['calls_per_agent_day']:.0f} "
             f"(big town over {args.big_hours:g} h from 7:00, so not a whole day; a whole day: "
             "benchmarks/llm_latency.py --residents 100 --latency 0 --embed-latency 0)", "<= 70 / <= 80"),
        ]
    if "retrieval" not in skip:
        cells = []
        load_before = os.getloadavg()[0]
        for dim in (256, 384, 1536):
            figures = retrieval_times(dim)
            cells.append(f"{dim}: " + ", ".join(f"{mode} {median:.2f}/{p90:.2f}"
                                                for mode, (median, p90) in figures.items()))
        rows.append(("retrieval, 10k memories, kind-filtered, median/p90 ms (wall, then CPU)",
                     "; ".join(cells) + f" (load average {load_before:.1f} -> "
                     f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)",
                     "<= 3 ms at 384 dimensions (issue 35)"))
    if "resume" not in skip:
        rows.append((f"resume of a {args.resume_days}-day town", resume_figures(args.resume_days, me),
                     "<= 1.5 s (issue 35)"))
    if "memory" not in skip:
        peaks, growth = memory_figures(args.resume_days, args.before, me)
        rows += [("peak memory of a resumed town's one-day run (25 residents)", peaks,
                  f"<= 150 MB at day {args.resume_days} (issue 35)"),
                 ("memory growth per game day", growth, "<= 3 MB (issue 35)")]
    if "startup" not in skip:
        cpu = start_up()
        rows.append(("`townbot --help`, offline `sim --hours 0.5` start-up (user+sys CPU, "
                     "medians of 5 runs, bytecode compiled as installed)",
                     f"{cpu['help']:.2f} s / {cpu['first_tick']:.2f} s to the first tick "
                     f"({cpu['sim']:.2f} s for the whole run; {cpu['uncompiled']:.2f} s to the "
                     "first tick under PYTHONDONTWRITEBYTECODE=1)",
                     "<= 0.5 s"))
    print("| figure | now | goal |\n|---|---|---|")
    for figure, now, goal in rows:
        print(f"| {figure} | {now} | {goal} |")
    print(f"\n(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_utime:.1f} s user CPU; "
          "worst game hour and longest tick against its critical path: benchmarks/llm_latency.py)")
    print(f"(the host: 3 million additions in a Python loop took {probe_before:.0f} ms CPU before "
          f"the run and {host_probe():.0f} ms after it, under {sys.executable}, Python "
          f"{platform.python_version()}: an interpreter built with profile-guided optimisation "
          "runs the town faster, see docs/benchmarks.md)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
