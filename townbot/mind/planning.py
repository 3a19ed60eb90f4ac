"""Planning (paper 4.3): the day in broad strokes, then hour-level blocks, then 5-15 minute steps.

Each level is stored in the memory stream as a plan memory, so plans are retrieved like any
other memory. Steps are decomposed just in time, when their block begins.

A block's place (paper 4.3 / 5.1) is chosen from the agent's own known tree of places. The paper
descends the tree one level per prompt (sector, then arena); here one prompt offers every known
place with its areas and the answer names both: the same choice from the same tree for half the
calls (docs/architecture.md, deviations). A choice the world cannot take (a closed shop, an
occupied one-person bathroom) is refused by the availability check and the agent chooses again;
after that the safe default is taken.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta
from functools import lru_cache
from operator import attrgetter

import numpy as np

from townbot.llm.port import LanguageModel
from townbot.llm.purposes.choose_place import Availability, PlaceQuestion, Spot
from townbot.llm.purposes.day_plan import DayPlanQuestion
from townbot.llm.purposes.decompose import DecomposeQuestion, Decomposition
from townbot.llm.purposes.hourly_schedule import HourlySchedule, ScheduleQuestion
from townbot.llm.purposes.revise_plan import PlanRevision, RevisionQuestion
from townbot.mind.memory import Memory, MemoryStream
from townbot.mind.plans import PlanBlock, PlanStep, without_clock_times
from townbot.mind.retrieval import recall
from townbot.mind.settings import MindSettings
from townbot.wording import progressive
from townbot.world.clock import clock_face, minute_of_day, parse_clock, span_of_minutes
from townbot.world.model import Persona

# The longest stretch of a block broken into steps at once (40 steps of 5-15 minutes fit it).
DECOMPOSE_MINUTES = 180
# A gap this short between a block's end and the next block's start joins the block before.
SMALL_GAP = timedelta(minutes=30)
CONTINUATION_PREFIXES = ("continue to ", "continue ", "keep ", "finish off: ", "finish ")
INTENTION_KINDS = ("thought", "conversation", "reflection", "observation")


@lru_cache(maxsize=4096)
def as_ongoing(action: str) -> str:
    """What follows 'X is ...' in the transcript (asked several times a tick for the same few
    activities, so kept)."""
    return progressive(action)


def face_of(moment: datetime) -> str:
    """'7:05 am' for a time of a plan."""
    return clock_face(minute_of_day(moment))


def continues(block: PlanBlock, previous: PlanBlock) -> bool:
    """Whether a block carries on the previous one's activity (and so stays in its place)."""
    activity = block.activity.lower()
    stripped = next((activity[len(p):] for p in CONTINUATION_PREFIXES if activity.startswith(p)),
                    None)
    base = previous.activity.lower()
    for prefix in CONTINUATION_PREFIXES:
        base = base.removeprefix(prefix)
    return stripped is not None and (stripped == base or base.startswith(stripped[:20]))


def retrieve_plans(stream: MemoryStream, query: np.ndarray, now: datetime,
                   settings: MindSettings, limit: int = 5) -> list[Memory]:
    """Memories that could shape today's plan: notable thoughts, talks, reflections, sights."""
    found = recall(stream, query, now, limit=limit * 3, kinds=INTENTION_KINDS,
                   token_budget=settings.recall.intentions, weights=settings.weights)
    return [m for m in found if m.importance >= 5][:limit]


def dated_memories(stream: MemoryStream, day: datetime, limit: int = 3) -> list[Memory]:
    """The most important non-plan memories that name this date ("February 14"); of equal
    importance, what was learned comes before whole transcripts of talks (which repeat it at
    length and would crowd it out), then the latest. Only the memories that hold a part of the
    month's labels are read (a label is any substring, so "February 1" is in "February 14")."""
    # The ways a memory may name the date, each with the part every date of the month shares.
    month, short, date = f"{day:%B}", f"{day:%b}", day.day
    labels = ((f"{month} {date}", f"{month} "), (f"{short} {date}", f"{short} "),
              (f"{date} {month}", f" {month}"))
    holding = set().union(*(stream.ids_containing(part) for _, part in labels))
    named = [m for m in (stream.memories[i] for i in holding) if m.kind not in ("plan", "reflection")
             and any(label in m.text for label, _ in labels)]
    return sorted(named, key=lambda m: (-m.importance, " talked with " in m.text, -m.id))[:limit]


def notable_memories(stream: MemoryStream, day: date, limit: int = 4) -> list[Memory]:
    """The most important memories made on this date other than plans; of equal importance,
    the earliest (the ids come ascending and the sort keeps their order among equals)."""
    memories = stream.memories
    made = [memories[i] for i in stream.ids_created_on(day)]
    return sorted([m for m in made if m.kind != "plan"], key=attrgetter("importance"),
                  reverse=True)[:limit]


def insert_block(blocks: list[PlanBlock], new: PlanBlock) -> list[PlanBlock]:
    """Cut `new` into the schedule: what it overlaps is shortened, and the part of a block
    that resumes after it keeps the steps still ahead (the first one starting when `new`
    ends); a part with none left is decomposed again when it resumes."""
    result: list[PlanBlock] = []
    for block in blocks:
        if block.end <= new.start or block.start >= new.end:
            result.append(block)
            continue
        # Copied before the part ahead of `new` is cut short.
        ahead = [replace(step, start=max(step.start, new.end))
                 for step in block.steps if step.end > new.end]
        if block.start < new.start:
            kept = [s for s in block.steps if s.start < new.start]
            if kept:
                kept[-1].end = min(kept[-1].end, new.start)
            result.append(PlanBlock(block.start, new.start, block.activity, block.sector,
                                    block.arena, kept))
        if block.end > new.end:
            result.append(PlanBlock(new.end, block.end, block.activity, block.sector,
                                    block.arena, ahead, resumed=True))
    result.append(new)
    return sorted(result, key=attrgetter("start"))


async def plan_day(model: LanguageModel, persona: Persona, today: datetime, yesterday: str,
                   summary: str, intentions: list[str]) -> list[str]:
    """The day in broad strokes, from the summary, yesterday and what is on the agent's mind."""
    question = DayPlanQuestion(persona, summary, today, yesterday, tuple(intentions))
    return (await model.ask(question.ask(persona.name))).items


def known_spot(place: str, known: dict[str, list[str]]) -> tuple[str | None, str | None]:
    """'Hobbs Cafe: cafe' as (sector, arena) when it is a known area; else (None, None), and
    the block's place is chosen when it begins."""
    sector, _, arena = place.rpartition(": ")
    return (sector, arena) if arena in known.get(sector, ()) else (None, None)


def blocks_from_schedule(schedule: HourlySchedule, persona: Persona, day: datetime,
                         start: datetime | None = None,
                         known: dict[str, list[str]] | None = None) -> list[PlanBlock]:
    """Anchor the schedule to the date. A block lasts its minutes, cut short where the next
    begins; a gap up to SMALL_GAP joins the block before it, a longer one (and the evening after
    the last block) is filled from the resident's routine for those hours, one block per routine
    step, so no single step stretches over the rest of the day. A block keeps the place it names
    when that is a known area; activities lose the clock times a model wrote into them."""
    known = known or {}
    midnight = day.replace(hour=0, minute=0, second=0, microsecond=0)
    bedtime = midnight + timedelta(minutes=persona.sleeps)
    starts = [midnight + timedelta(minutes=parse_clock(b.start)) for b in schedule.blocks]
    # (start, end, activity, sector, arena) of each block, made a PlanBlock once it is cut
    spans: list[tuple[datetime, datetime, str, str | None, str | None]] = []
    for index, entry in enumerate(schedule.blocks):
        following = starts[index + 1] if index + 1 < len(starts) else bedtime
        end = min(following, starts[index] + timedelta(minutes=entry.minutes))
        if following - end <= SMALL_GAP:
            end = following
        spans.append((starts[index], end, without_clock_times(entry.activity),
                      *known_spot(entry.place, known)))
        if end < following:
            spans += routine_spans(persona, midnight, end, following, known)
    cut = []
    for begin, end, activity, sector, arena in spans:
        begin = max(begin, start) if start else begin
        if begin < bedtime and end > begin:
            cut.append(PlanBlock(begin, min(end, bedtime), activity, sector, arena))
    return cut


def routine_spans(persona: Persona, midnight: datetime, begin: datetime, end: datetime,
                  known: dict[str, list[str]],
                  ) -> list[tuple[datetime, datetime, str, str | None, str | None]]:
    """The routine's steps over [begin, end): the one under way at `begin`, then each that
    starts before `end`, each lasting until the next (with its place when that is known)."""
    routine = persona.routine
    first, last = minute_of_day(begin), minute_of_day(end) if end.date() == begin.date() else 1440
    under_way = [s for s in routine if s.minute <= first][-1:] or list(routine[:1])
    steps = under_way + [s for s in routine if first < s.minute < last]
    spans = []
    for index, step in enumerate(steps):
        since = max(begin, midnight + timedelta(minutes=step.minute))
        until = (midnight + timedelta(minutes=steps[index + 1].minute)
                 if index + 1 < len(steps) else end)
        if until > since:
            spans.append((since, until, step.activity,
                          *known_spot(f"{step.sector}: {step.arena}", known)))
    return spans


async def plan_hours(model: LanguageModel, persona: Persona, day: datetime, items: list[str],
                     intentions: list[str], known: dict[str, list[str]], *,
                     start: datetime | None = None, directive: str | None = None) -> list[PlanBlock]:
    """The hour-level schedule of the waking day, or of its rest from `start` (replanning),
    each block with its place among the known ones (so most blocks need no place call)."""
    question = ScheduleQuestion(persona, day, tuple(items), tuple(intentions), known, start,
                                directive)
    answer = await model.ask(question.ask(persona.name))
    return blocks_from_schedule(answer, persona, day, start, known)


async def should_revise(model: LanguageModel, persona: Persona, summary: str, now: datetime,
                        doing: str, rest: list[PlanBlock], news: list[str],
                        places: list[str]) -> PlanRevision:
    """Whether what was just learned changes the rest of today (paper 4.3.1: the plan is
    regenerated from the moment of a reaction)."""
    question = RevisionQuestion(persona.name, summary, now, doing,
                                tuple((minute_of_day(b.start), b.activity) for b in rest),
                                tuple(news), tuple(places))
    return await model.ask(question.ask(persona.name))


def steps_in_block(answer: Decomposition, block: PlanBlock, objects: list[str]) -> list[PlanStep]:
    """Lay steps end to end from the block's start; the last one stretches to the block's end."""
    steps: list[PlanStep] = []
    cursor = block.start
    for step in answer.steps:
        if cursor >= block.end:
            break
        end = min(block.end, cursor + span_of_minutes(step.minutes))
        obj = step.object if step.object in objects else (objects[0] if objects else "")
        steps.append(PlanStep(cursor, end, as_ongoing(without_clock_times(step.action)), obj,
                              step.object_state, step.emoji))
        cursor = end
    if steps:
        steps[-1].end = block.end
    return steps


async def decompose(model: LanguageModel, persona: Persona, block: PlanBlock,
                    objects: list[str], now: datetime) -> list[PlanStep]:
    """Steps for the next part of a block (at most DECOMPOSE_MINUTES: a long block is broken
    down again when its steps run out, so the steps asked for fit the schema's 40)."""
    start = max(block.start, now)
    until = min(block.end, start + timedelta(minutes=DECOMPOSE_MINUTES))
    minutes = max(5, int((until - start).total_seconds() // 60))
    question = DecomposeQuestion(persona, block.activity, f"{block.sector}: {block.arena}", start,
                                 minutes, tuple(objects), block.resumed)
    answer = await model.ask(question.ask(persona.name))
    partial = PlanBlock(start, until, block.activity, block.sector, block.arena)
    return steps_in_block(answer, partial, objects)


async def choose_place(model: LanguageModel, persona: Persona, activity: str, now: datetime,
                       known: dict[str, list[str]], current: Spot, hint: Spot,
                       norms: dict[str, str], availability: Availability) -> Spot:
    """Where an activity happens: a known place and one of its areas, in one call (none when
    only one area is known). `current` is where the agent is, `hint` its routine's place."""
    known = {sector: arenas for sector, arenas in known.items() if arenas}
    spots = [(sector, arena) for sector in sorted(known) for arena in known[sector]]
    if len(spots) == 1:
        return spots[0]
    question = PlaceQuestion(persona, activity, now, known, current, hint, norms, availability)
    answer = await model.ask(question.ask(persona.name))
    return answer.place, answer.area
