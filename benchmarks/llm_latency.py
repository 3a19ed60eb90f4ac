"""Do ticks keep 25 residents' model calls concurrent? Wall time against the critical path.

Runs 25 agents on the offline model behind an injected latency per call (default 1 s for
answers, 0.1 s for embeddings) and prints calls and prompt tokens per agent per game day by
purpose, and the wall time against the critical path: for each tick, the longest chain of calls
that must run one after another. Ticks that do not serialise agents keep wall / critical < 1.5.

How the critical path is measured, without trusting wall-clock order: every asyncio task gets
its own record (a contextvar set by a task factory). A task's calls are kept per resident (an
ask's `agent`; a call without one, such as an embedding, counts for every resident of the
task). A task's chain is its longest resident chain plus, for each group of tasks it started
together (one `asyncio.gather`), the longest chain among them. Summing per resident rather
than per task means that residents serialised inside one task are caught, not hidden. The
lines of a conversation (and its relationship summaries) are charged to the pair, not to each
speaker: they must run one after another, so the pair's chain is all of them (charged to each
speaker, a conversation counted as its longer speaker's share and a tick's critical path came
out too short).

Calls wait for one of `--concurrency` slots (default 8, what the start-up check sets for a
server that serves 4 or more at once), as the real client does; the worst game hour and the
longest tick against its critical path are printed beside the totals. Prompt tokens are the
offline model's estimates (four characters a token), printed also with the schema system message
that json_object and prompt modes add to every call.

With `--residents N` the town is the 25 personas cloned under new names up to N (the synthetic
town of benchmarks/speed.py), so `--residents 100 --latency 0 --embed-latency 0` prints the calls
per agent-day of a whole day of 100 residents in a minute or two.

With `--pace S` the ticks run as Discord runs them: one every S real seconds (Discord's default
is 10), each waiting a quarter of that for its conversations before letting the unfinished ones
go on beside the next ticks (Engine.tick's `carry_after`); a tick's wall time is then the time
it holds the town, and the table says how many ticks overran their interval. `--pace-from H`
runs the ticks before game hour H back to back, so the busy evening is reached sooner. The
critical-path figures are printed for unpaced runs only (a carried talk belongs to no one tick).

Usage: python benchmarks/llm_latency.py [--hours H | --days D] [--latency S] [--embed-latency S]
                                        [--concurrency N] [--residents N] [--whole-conversation]
                                        [--pace S [--pace-from H]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from speed import cloned_town  # the synthetic town of the speed table (same folder)

from townbot.llm.offline import OfflineModel
from townbot.llm.port import AnswerT, Ask, CallContext, LanguageModel, Reply, estimate_tokens
from townbot.llm.stack import build_model_stack
from townbot.llm.structured import chat_messages
from townbot.mind.settings import MindSettings
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.town.service import TALK_SHARE
from townbot.town.usage import summarise
from townbot.world.loading import load_world

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "tests"))  # the fault injection is a test fixture
from faults import FaultRates, FaultyModel  # noqa: E402

TARGET_RATIO = 1.5
DEFAULT_CONCURRENCY = 8  # the start-up check's figure for a server that serves 4 or more at once
CONVERSATION_PURPOSES = ("utterance", "relationship", "conversation")


@dataclass
class Work:
    """The model time of one task, per resident, and the groups of tasks it started together."""

    per_agent: dict[str | None, float] = field(default_factory=lambda: defaultdict(float))
    groups: list[list[Work]] = field(default_factory=list)
    _open_group: list[Work] | None = None

    def add_call(self, agent: str | None, seconds: float) -> None:
        self.per_agent[agent] += seconds

    def start_child(self, child: Work, loop: asyncio.AbstractEventLoop) -> None:
        """Tasks created before this task next yields were started together (one gather)."""
        if self._open_group is None:
            self._open_group = []
            self.groups.append(self._open_group)
            loop.call_soon(self._close_group)
        self._open_group.append(child)

    def _close_group(self) -> None:
        self._open_group = None

    def critical(self) -> float:
        shared = self.per_agent.get(None, 0.0)  # calls without a resident count for every one
        own = max((s for a, s in self.per_agent.items() if a is not None), default=0.0) + shared
        return own + sum(max(child.critical() for child in group) for group in self.groups)


CURRENT: contextvars.ContextVar[Work | None] = contextvars.ContextVar("work", default=None)


def task_factory(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any],
                 context: contextvars.Context | None = None) -> asyncio.Task:
    parent = CURRENT.get()
    context = context or contextvars.copy_context()
    if parent is not None:
        child = Work()
        parent.start_child(child, loop)
        context.run(CURRENT.set, child)
    return asyncio.Task(coro, loop=loop, context=context)


class ChainedModel(LanguageModel):
    """Charges each call's injected latency to the calling task's record, then passes it on."""

    def __init__(self, inner: FaultyModel, latency: float, embed_latency: float,
                 concurrency: int) -> None:
        self.inner = inner
        self.slots = asyncio.Semaphore(concurrency)
        self.schema_tokens: dict[str, int] = defaultdict(int)  # by purpose
        self.latency = latency
        self.embed_latency = embed_latency
        self.label = inner.label
        self.embedding_model = inner.embedding_model
        self.embedding_dim = inner.embedding_dim
        self.calls = 0

    def _charge(self, agent: str | None, seconds: float) -> None:
        work = CURRENT.get()
        if work is not None:
            work.add_call(agent, seconds)

    @staticmethod
    def chain_of(request: Ask) -> str | None:
        """Whose chain a call lengthens: a conversation's pair for its lines, else the resident."""
        if request.purpose in CONVERSATION_PURPOSES:
            pair = {request.context.get(k) for k in ("speaker", "name", "first", "partner", "second")}
            return " & ".join(sorted(p for p in pair if p))
        return request.agent

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        self.calls += 1
        self._charge(self.chain_of(request), self.latency)
        schema_message = chat_messages(request, "json_object")[0]["content"]
        self.schema_tokens[request.purpose] += estimate_tokens(schema_message)
        async with self.slots:
            return await self.inner.reply(request)

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        self._charge(self.chain_of(request), self.latency)
        async with self.slots:
            return await self.inner.ask(request)

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        self._charge(None, self.embed_latency)
        async with self.slots:
            return await self.inner.embed(texts, call)


def print_usage(rows: list[dict[str, Any]], agents: int, hours: float,
                schema_tokens: dict[str, int]) -> None:
    """Calls and prompt tokens per agent per game day (24 game hours), by purpose."""
    agent_days = agents * hours / 24
    summary = summarise(rows)
    print(f"\ncalls and prompt tokens per agent per game day, by purpose ({agents} agents x "
          f"{hours:g} game hours = {agent_days:.2f} agent-days; tokens estimated by the offline model):")
    print(f"{'purpose':<22}{'calls':>8}{'calls/agent-day':>17}{'prompt tok':>12}{'tok/agent-day':>15}")
    for purpose, entry in summary["purposes"].items():
        print(f"{purpose:<22}{entry['calls']:>8}{entry['calls'] / agent_days:>17.1f}"
              f"{entry['prompt_tokens']:>12}{entry['prompt_tokens'] / agent_days:>15.0f}")
    print(f"{'total':<22}{summary['calls']:>8}{summary['calls'] / agent_days:>17.1f}"
          f"{summary['prompt_tokens']:>12}{summary['prompt_tokens'] / agent_days:>15.0f}")
    schema = sum(schema_tokens.values())
    print(f"with the schema system message of json_object and prompt modes: "
          f"{summary['prompt_tokens'] + schema} prompt tokens, "
          f"{(summary['prompt_tokens'] + schema) / agent_days:.0f} per agent-day "
          f"(the message adds {schema / agent_days:.0f})")
    print(f"that is {summary['calls'] / agents / hours:.1f} calls and "
          f"{summary['prompt_tokens'] / agents / hours:.0f} prompt tokens per agent per game hour; "
          f"{summary['fallbacks']} answers came from defaults")


@dataclass(frozen=True)
class Pace:
    """How ticks are driven: back to back (seconds 0, as `sim` does) or one every `seconds`
    real seconds from game hour `from_hour` on, as Discord does."""

    seconds: float = 0.0
    from_hour: int = 0

    def applies(self, when: Any) -> bool:
        return self.seconds > 0 and when.hour >= self.from_hour

    def carry_after(self, when: Any) -> float | None:
        return TALK_SHARE * self.seconds if self.applies(when) else None


async def run(hours: float, latency: float, embed_latency: float, seed: int,
              concurrency: int, residents: int | None = None,
              whole_conversation: bool = False, pace: Pace = Pace()) -> bool:
    asyncio.get_running_loop().set_task_factory(task_factory)
    world = load_world(ROOT / "world.yaml", ROOT / "personas")
    if residents is not None:
        world = cloned_town(world, residents)
    faulty = FaultyModel(OfflineModel(seed=seed), FaultRates(latency=latency), seed=seed,
                         embed_latency=embed_latency)
    chained = ChainedModel(faulty, latency, embed_latency, concurrency)
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(Path(folder) / "bench.db")
        engine = await Engine.open(world, store, build_model_stack(chained), seed=seed,
                                   settings=MindSettings(whole_conversation=whole_conversation))
        ticks = engine.clock.ticks_for(hours=hours)
        start = engine.clock.now
        print(f"llm latency benchmark: {len(engine.minds)} agents, {ticks} ticks of "
              f"{engine.clock.tick_minutes} min ({hours:g} game hours from {start:%a %b %d %H:%M}); "
              f"offline model behind {latency:g} s per answer and {embed_latency:g} s per embedding "
              "call; " f"{concurrency} calls at once"
              + (f"; one tick every {pace.seconds:g} s from {pace.from_hour}:00"
                 if pace.seconds else ""), flush=True)
        overran = paced = 0
        wall = critical = 0.0
        worst = (0.0, 0.0, start)
        longest = (0.0, 0.0, start)
        by_hour: dict[Any, float] = defaultdict(float)
        ticks_of_hour: dict[Any, list[tuple[Any, float, float]]] = defaultdict(list)
        for _ in range(ticks):
            root = Work()
            token = CURRENT.set(root)
            when, began = engine.clock.now, time.perf_counter()
            await engine.tick(carry_after=pace.carry_after(when))
            spent = time.perf_counter() - began
            CURRENT.reset(token)
            if pace.applies(when):
                paced, overran = paced + 1, overran + (spent > pace.seconds)
                await asyncio.sleep(max(0.0, pace.seconds - (time.perf_counter() - began)))
            wall, critical = wall + spent, critical + root.critical()
            by_hour[when.replace(minute=0)] += spent
            ticks_of_hour[when.replace(minute=0)].append((when, spent, root.critical()))
            if spent > longest[0]:
                longest = (spent, root.critical(), when)
            if spent - root.critical() > worst[0] - worst[1]:
                worst = (spent, root.critical(), when)
        rows = await store.usage_rows(engine.town.id)
        engine.drop_talks()
        await store.close()
    print_usage(rows, len(engine.minds), hours, chained.schema_tokens)
    if pace.seconds:
        return print_paced(by_hour, ticks_of_hour, pace, paced, overran)
    if not critical:  # --latency 0 --embed-latency 0: calls and tokens only
        print(f"\nno latency injected: {chained.calls} answers asked in {ticks} ticks; the wall time "
              "against the critical path needs --latency or --embed-latency above 0")
        return True
    ratio = wall / critical
    print(f"\nwall time {wall:.1f} s; critical path {critical:.1f} s; ratio {ratio:.3f} "
          f"(target < {TARGET_RATIO}); {chained.calls} answers asked in {ticks} ticks")
    print(f"largest gap: tick at {worst[2]:%H:%M} took {worst[0]:.2f} s against {worst[1]:.2f} s")
    hour, hour_wall = max(by_hour.items(), key=lambda item: item[1])
    print(f"worst game hour: {hour:%a %H:00} took {hour_wall:.1f} s of wall time (goal <= 30 s)")
    for start, total in sorted(by_hour.items(), key=lambda item: -item[1])[:3]:
        ticks = ", ".join(f"{when:%H:%M} {spent:.1f}/{critical:.1f}"
                          for when, spent, critical in ticks_of_hour[start])
        print(f"  {start:%a %H:00} {total:.1f} s; each tick's wall/critical path in s: {ticks}")
    print(f"longest tick: {longest[2]:%a %H:%M} took {longest[0]:.2f} s against its critical path "
          f"{longest[1]:.2f} s: {longest[0] / (longest[1] or float('inf')):.2f} (goal <= 1.3)")
    ok = ratio < TARGET_RATIO
    print("OK: ticks keep residents concurrent" if ok else "TOO SLOW: something serialises residents")
    return ok


def print_paced(by_hour: dict[Any, float], ticks_of_hour: dict[Any, list[tuple[Any, float, float]]],
                pace: Pace, paced: int, overran: int) -> bool:
    """The paced run's figures: the worst game hour among paced hours, and overrunning ticks."""
    hours = {start: total for start, total in by_hour.items() if start.hour >= pace.from_hour}
    hour, hour_wall = max(hours.items(), key=lambda item: item[1])
    print(f"\npaced at one tick every {pace.seconds:g} s (talks wait "
          f"{TALK_SHARE * pace.seconds:g} s, then carry over):")
    print(f"worst game hour: {hour:%a %H:00} took {hour_wall:.1f} s of wall time (goal <= 30 s)")
    for start, total in sorted(hours.items(), key=lambda item: -item[1])[:3]:
        each = ", ".join(f"{when:%H:%M} {spent:.1f}" for when, spent, _ in ticks_of_hour[start])
        print(f"  {start:%a %H:00} {total:.1f} s; each tick's wall time in s: {each}")
    print(f"ticks that overran their {pace.seconds:g} s: {overran} of {paced}")
    return overran == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    length = parser.add_mutually_exclusive_group()
    length.add_argument("--hours", type=float, help="game hours to run (default: one game day)")
    length.add_argument("--days", type=float, help="game days to run")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per answer (default 1)")
    parser.add_argument("--embed-latency", type=float, default=0.1,
                        help="seconds per embedding call (default 0.1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY,
                        help=f"calls in flight at once (default {DEFAULT_CONCURRENCY}, as the real client)")
    parser.add_argument("--residents", type=int,
                        help="residents of a synthetic town (the personas cloned); default: the 25")
    parser.add_argument("--whole-conversation", action="store_true",
                        help="the setting that makes each conversation one call (not a line a call)")
    parser.add_argument("--pace", type=float, default=0.0,
                        help="one tick every this many real seconds, as Discord runs (default: "
                             "back to back, as sim runs)")
    parser.add_argument("--pace-from", type=int, default=0, metavar="HOUR",
                        help="with --pace: run the ticks before this game hour back to back")
    args = parser.parse_args()
    if args.pace < 0 or not 0 <= args.pace_from <= 23:
        parser.error("--pace must be 0 or more seconds and --pace-from a game hour from 0 to 23")
    hours = args.hours if args.hours is not None else 24 * (args.days if args.days is not None else 1)
    return 0 if asyncio.run(run(hours, args.latency, args.embed_latency, args.seed,
                                args.concurrency, args.residents, args.whole_conversation,
                                Pace(args.pace, args.pace_from))) else 1


if __name__ == "__main__":
    raise SystemExit(main())
