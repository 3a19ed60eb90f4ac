"""A scripted run of a small town: an interview of every resident, then one game hour; a
scripted talk followed by a reflection (`--talk`), for the prompts an hour does not reach
(takeaways of both participants in one call, a reflection's insights in one call); and a
morning of the Lin family (`--morning`): three residents from 07:00 to 10:00, the kitchen
stove set burning at 07:50, and each interviewed at the end.

Run as a script against a real server to record its replies for the tests (the run's calls,
tokens and wall time are printed; the server is not needed afterwards):

    TOWNBOT_BASE_URL=http://127.0.0.1:8011/v1 TOWNBOT_CHAT_MODEL=qwen2.5-coder-0.5b \\
    TOWNBOT_STRUCTURED_OUTPUT=json_object TOWNBOT_CONCURRENCY=1 TOWNBOT_TIMEOUT=70 \\
        .venv/bin/python tests/real_run.py tests/real_replies/qwen-0.5b-hour.jsonl
    (the same with --talk tests/real_replies/qwen-0.5b-talk.jsonl, and with
    --morning tests/real_replies/qwen-1.5b-morning.jsonl; `benchmarks/real_model.py FILE`
    reads a recording's figures)

On a busy machine a call may take minutes: raise TOWNBOT_TIMEOUT (1200) and set
TOWNBOT_MAX_FAILURES=0 and TOWNBOT_MAX_UNUSABLE=1, so that nothing stops the run. After a
change to the town, `--reuse EARLIER.jsonl` takes the replies an earlier recording of the same
model holds for the very same prompts (a llama-cpp-python server answers a prompt the same way
each time) and asks the server only what the change made new; those replies say so in their
model's name.

The tests replay the file (`ReplayModel`) through the same script: the same town, seed and
questions, so most prompts come out the same and get the very reply they got live.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from townbot.llm.port import AnswerT, Ask, LanguageModel, Layer, Reply
from townbot.llm.recording import ReplayModel
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.town.service import Person, TownService
from townbot.world.events import TownEvent
from townbot.world.loading import load_world, select_residents

ROOT = Path(__file__).resolve().parents[1]
RESIDENTS = "4"
TICKS = 6  # one game hour of 10-minute ticks from 07:00
SEED = 3
QUESTIONS = ("Tell me about yourself.", "What are you doing this morning?")
INTERVIEWER = Person("script:interviewer", "an interviewer")


async def scripted_run(model: LanguageModel, db: Path) -> tuple[list[TownEvent], list[tuple[str, str]]]:
    """The town's events over TICKS ticks, then (resident, answer) for each interview."""
    world = select_residents(load_world(ROOT / "world.yaml", ROOT / "personas"), RESIDENTS)
    store = await Store.open(db)
    try:
        engine = await Engine.open(world, store, model, seed=SEED)
        service = TownService(engine)
        answers = []
        for resident in sorted(world.personas):  # first, from the seed memories alone
            for question in QUESTIONS:
                # One interviewer per resident: a replay asks faster than the rate limit allows one.
                interviewer = Person(f"script:interviewer:{resident}", INTERVIEWER.name)
                outcome = await service.interview(interviewer, resident, question)
                answers.append((resident, outcome.text))
        events: list[TownEvent] = []
        for _ in range(TICKS):
            events += await engine.tick()
        return events, answers
    finally:
        await store.close()


MORNING_RESIDENTS = "Eddy Lin, John Lin, Mei Lin"
MORNING_TICKS = 18  # three game hours of 10-minute ticks, 07:00 to 10:00
STOVE_AT_TICK = 5  # set burning at 07:50, when the family is about the house at breakfast
STOVE = "Lin family's house: kitchen: stove"
MORNING_QUESTION = "What have you been doing this morning?"


async def scripted_morning(model: LanguageModel, db: Path,
                           tick_done: Callable[[int], None] | None = None, *,
                           ticks: int = MORNING_TICKS, interviews: bool = True,
                           ) -> tuple[list[TownEvent], list[tuple[str, str]]]:
    """The Lin family's morning: the town's events over `ticks` ticks (the stove set burning
    as a user would with /set), then (resident, answer) for an interview of each (a recording
    cut short replays its first ticks, without the interviews)."""
    world = select_residents(load_world(ROOT / "world.yaml", ROOT / "personas"), MORNING_RESIDENTS)
    store = await Store.open(db)
    try:
        engine = await Engine.open(world, store, model, seed=SEED)
        service = TownService(engine)
        events: list[TownEvent] = []
        for tick in range(ticks):
            if tick == STOVE_AT_TICK:
                events += (await service.set_object(INTERVIEWER, STOVE, "burning")).events
            events += await engine.tick()
            if tick_done:
                tick_done(tick + 1)
        answers = []
        for resident in sorted(world.personas) if interviews else ():
            interviewer = Person(f"script:interviewer:{resident}", INTERVIEWER.name)
            outcome = await service.interview(interviewer, resident, MORNING_QUESTION)
            answers.append((resident, outcome.text))
        return events, answers
    finally:
        await store.close()


TALK = [("Isabella Rodriguez", "Hi Klaus! I'm hosting a Valentine's Day party at Hobbs Cafe on "
                               "February 14, from 5 pm to 7 pm. Would you like to come?"),
        ("Klaus Mueller", "I'd love to come! I've been buried in my research on gentrification, "
                          "so a party sounds good."),
        ("Isabella Rodriguez", "Wonderful! Bring a friend if you like."),
        ("Klaus Mueller", "I will ask Maria Lopez. See you there!")]
TALK_AT = datetime(2023, 2, 13, 15, 0)


async def scripted_talk(model: LanguageModel) -> dict[str, list[str]]:
    """Klaus Mueller and Isabella Rodriguez remember TALK (one takeaways call for both), then
    Klaus reflects; returns each one's conversation and reflection memories."""
    from townbot.mind.agent import AgentMind, starting_knowledge
    from townbot.mind.dialogue import JointTakeaways
    from townbot.mind.memory import MemoryStream
    from townbot.mind.settings import MindSettings
    from townbot.mind.state import MindState, PlaceKnowledge

    world = load_world(ROOT / "world.yaml", ROOT / "personas")
    arenas = {s: list(v.arenas) for s, v in world.sectors.items()}
    names = ["Klaus Mueller", "Isabella Rodriguez"]
    minds = {}
    for name in names:
        persona = world.personas[name]
        minds[name] = AgentMind(persona, model, MemoryStream(model.embedding_dim),
                                MindState(places=PlaceKnowledge(starting_knowledge(persona, arenas))),
                                MindSettings(reflection_threshold=1))
        minds[name]._step_time = TALK_AT - timedelta(hours=1)
        for text in persona.seed_memories:
            minds[name].remember("observation", text)
        await minds[name].flush_memories(TALK_AT, force=True)
    shared = JointTakeaways(model, names, TALK)
    end = TALK_AT + timedelta(minutes=4)
    await asyncio.gather(*(minds[name].after_conversation(partner, TALK, "Hobbs Cafe: cafe",
                                                          TALK_AT, end, "Hobbs Cafe", "cafe",
                                                          shared)
                           for name, partner in zip(names, reversed(names), strict=True)))
    await minds["Klaus Mueller"]._maybe_reflect(end)
    return {name: [m.text for m in mind.stream.memories if m.kind in ("conversation", "reflection")]
            for name, mind in minds.items()}


REUSED = " (reused: the same prompt in an earlier recording)"


class Reusing(Layer):
    """Answers a prompt an earlier recording of the same model holds, word for word, with the
    reply it got there (each used once), and asks the server the rest. llama-cpp-python's server
    answers the same prompt the same way (its sampling seed is fixed), so a run changed from
    some tick on gives the same replies up to it without waiting for them again; the reply's
    model says it was reused (benchmarks/real_model.py leaves those out of the wall time)."""

    def __init__(self, inner: LanguageModel, earlier: Path) -> None:
        super().__init__(inner)
        self.earlier = ReplayModel(earlier)
        self.reused = 0

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        held = next((r for r in self.earlier.unused
                     if (r["purpose"], r["prompt"]) == (request.purpose, request.prompt)), None)
        if held is not None and held.get("problem") != "failed":
            found = await self.earlier.reply(request)
            self.reused += 1
            return replace(found, model=found.model + REUSED)
        return await self.inner.reply(request)


async def record(path: Path, talk: bool = False, morning: bool = False,
                 earlier: Path | None = None) -> None:
    from townbot.llm.budget import Budget
    from townbot.llm.openai_client import OpenAIModel
    from townbot.llm.probe import start_up_check
    from townbot.llm.recording import ReplyRecorder
    from townbot.llm.settings import load_settings
    from townbot.llm.stack import build_model_stack

    path.unlink(missing_ok=True)
    settings = load_settings()
    client = OpenAIModel(settings)
    await start_up_check(client)
    reusing = Reusing(client, earlier) if earlier else None
    model = build_model_stack(ReplyRecorder(reusing or client, path),
                              budget=Budget(settings.caps) if settings.caps.any else None,
                              max_unusable=settings.max_unusable)
    started = time.perf_counter()
    db = path.with_suffix(".db")
    db.unlink(missing_ok=True)
    try:
        if talk:
            for name, texts in (await scripted_talk(model)).items():
                print(f"{name}:", *texts, sep="\n  ")
            return
        if morning:
            def tick_done(tick: int) -> None:
                print(f"tick {tick} ({tick * 10} game minutes) done after "
                      f"{time.perf_counter() - started:.0f} s", flush=True)
            events, answers = await scripted_morning(model, db, tick_done)
        else:
            events, answers = await scripted_run(model, db)
    finally:
        await model.close()
    elapsed = time.perf_counter() - started
    for event in events:
        print(event.line())
    for resident, answer in answers:
        print(f"interview {resident}: {answer}")
    print(f"wall time {elapsed:.0f} s (with the interviews); the usage is in {db}: "
          f"townbot usage --db {db}")
    if reusing:
        print(f"{reusing.reused} replies reused from {earlier}")


if __name__ == "__main__":
    reuse = sys.argv[sys.argv.index("--reuse") + 1] if "--reuse" in sys.argv else None
    asyncio.run(record(Path(sys.argv[-1]), talk="--talk" in sys.argv,
                       morning="--morning" in sys.argv, earlier=Path(reuse) if reuse else None))
