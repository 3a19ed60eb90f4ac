"""`townbot sim`: the town headless, with a progress bar, the transcript in time order (or by
area) and the model usage of this run beside the town's totals. Ctrl-C stops after the tick
under way has committed; so do SIGTERM and SIGHUP."""

from __future__ import annotations

import argparse
import asyncio
import sys

from townbot.llm.budget import OPEN
from townbot.llm.port import LanguageModel
from townbot.llm.settings import ModelSettings
from townbot.llm.watching import PROBLEM_WORDS
from townbot.platforms.terminal import Interrupts, Screen, tick_progress
from townbot.town.costs import real_day_cost, real_day_line
from townbot.town.engine import Engine
from townbot.town.launch import TownFiles, open_engine
from townbot.town.transcript import by_area, in_time_order
from townbot.town.usage import summarise, town_line, usage_table, usage_totals
from townbot.wording import plural
from townbot.world.events import TownEvent


def progress_label(engine: Engine) -> str:
    """The text after the progress bar: the game time, the budget once it starts to bite, and
    the share of calls answered by defaults so far (the server's failures and the replies that
    stayed unusable after their repair)."""
    report, day = engine.model.report(), engine.clock.day_number
    label = engine.clock.now.strftime("%a %b %d %H:%M")
    if report.budget is not None and report.budget.level(day) != OPEN:
        label += "  " + report.budget.status(day)
    calls = sum(report.outcomes.values())
    failed, unusable = report.outcomes.get("failed", 0), report.outcomes.get("fallback", 0)
    if calls and (failed or unusable):
        label += (f"  defaults {100 * (failed + unusable) / calls:.0f}% "
                  f"(server {failed}, unusable {unusable} of {calls})")
    return label


async def simulate(engine: Engine, ticks: int, stop: asyncio.Event) -> list[TownEvent]:
    """Up to `ticks` ticks; stops early, between ticks, once `stop` is set."""
    events: list[TownEvent] = []
    with tick_progress(ticks, lambda: progress_label(engine)) as progress:
        for done in range(1, ticks + 1):
            if stop.is_set():
                break
            events += await engine.tick()
            progress(done)
    return events


def session_notes(model: LanguageModel, day: int, offline: bool) -> list[str]:
    """What happened with the model in this run: budget state, server retries, reply problems."""
    notes = []
    report = model.report()
    if report.budget is not None:
        notes.append(report.budget.status(day))
    if report.server is not None:
        notes.append(report.server)
    if report.problems and not offline:  # the offline model's are counted as defaults above
        problems = ", ".join(f"{n} {PROBLEM_WORDS.get(kind, kind)}"
                             for kind, n in sorted(report.problems.items()))
        notes.append(f"unusable replies this run: {problems} (each got one repair try)")
    if report.last_failure:
        notes.append(f"last model failure: {report.last_failure}")
    return notes


async def run_sim(args: argparse.Namespace, settings: ModelSettings) -> int:
    """Ctrl-C, SIGTERM and SIGHUP are taken from the start: while the town opens, between
    ticks, or (twice) during one; each way ends with one line on standard error and the
    signal's exit code (130, 143, 129). Any signal after that is one line more."""
    with Interrupts() as interrupts:
        try:
            engine = await open_engine(TownFiles(args.world, args.personas, args.residents), args.db,
                                       seed=args.seed, settings=settings)
        except asyncio.CancelledError:
            print(f"stopped by {interrupts.name} while the town was opening; nothing ran",
                  file=sys.stderr)
            return interrupts.exit_code
        try:
            return await _run(engine, args, settings, interrupts)
        except asyncio.CancelledError:  # a second signal: the tick under way is rolled back
            print(f"stopped by {interrupts.name} during a tick; {args.db} keeps the town as of "
                  f"{engine.clock.now:%a %H:%M}", file=sys.stderr)
            return interrupts.exit_code
        finally:
            interrupts.closing = True
            await engine.model.close()
            await engine.store.close()


async def _run(engine: Engine, args: argparse.Namespace, settings: ModelSettings,
               interrupts: Interrupts) -> int:
    stop = interrupts.requested
    screen = Screen(channels=[s.channel for s in engine.world.sectors.values()]
                    + [engine.world.town_hall_channel])
    if args.scenario:  # loaded before the first tick, as a moderator would
        from townbot.town.service import Person, TownService

        loader = Person("cli:scenario", "townbot sim --scenario", moderator=True)
        screen.reply((await TownService(engine).load_scenario(loader, args.scenario)).text)
    start = engine.clock.now
    ticks = engine.clock.ticks_for(hours=args.hours or 0, days=args.days or 0) \
        if (args.hours or args.days) else engine.clock.ticks_for(days=1)
    last_earlier = await engine.store.last_usage_id(engine.town.id)
    screen.line(f"{engine.world.town}: {len(engine.minds)} residents, from "
                f"{start:%a %b %d %H:%M} for {ticks} ticks of {engine.clock.tick_minutes} min "
                f"(database {args.db})")
    tick_before = engine.clock.tick
    events = await simulate(engine, ticks, stop)
    if stop.is_set():
        done = engine.clock.tick - tick_before
        print(f"stopped by {interrupts.name} after {plural(done, 'tick')}, at "
              f"{engine.clock.now:%a %H:%M}; saved to {args.db}", file=sys.stderr)
        return interrupts.exit_code
    if not args.quiet:
        screen.legend()
        for line in by_area(events) if args.by_area else in_time_order(events):
            screen.area_line(line)
    channels = len({e.channel for e in events})
    screen.line(f"{plural(len(events), 'event')} in {plural(channels, 'area')}, {start:%a %H:%M} to "
                f"{engine.clock.now:%a %H:%M}; saved to {args.db}")
    rows = await engine.store.usage_rows(engine.town.id)
    run = summarise([r for r in rows if r["id"] > last_earlier], settings, engine.clock.tick_minutes)
    headers, table = usage_table(run)
    screen.table(headers, table, right=range(1, len(headers)), title="model usage, this run:")
    for line in usage_totals(run):
        screen.line(line)
    if last_earlier:  # earlier runs count too: the town's totals
        screen.line(town_line(summarise(rows, settings, engine.clock.tick_minutes)))
    minutes, seconds = engine.clock.tick_minutes, engine.town.tick_seconds
    cost = real_day_cost(run, engine.clock.tick - tick_before, minutes, seconds)
    screen.line(real_day_line(cost, minutes, seconds) + " (the town's speed on Discord and play)")
    for note in session_notes(engine.model, engine.clock.day_number, settings.offline):
        screen.line(note)
    return 0
