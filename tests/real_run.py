"""A scripted run of a small town: an interview of every resident, then one game hour.

Run as a script against a real server to record its replies for the tests (the run's calls,
tokens and wall time are printed; the server is not needed afterwards):

    TOWNBOT_BASE_URL=http://127.0.0.1:8011/v1 TOWNBOT_CHAT_MODEL=qwen2.5-coder-0.5b \\
    TOWNBOT_STRUCTURED_OUTPUT=json_object TOWNBOT_CONCURRENCY=1 TOWNBOT_TIMEOUT=70 \\
        .venv/bin/python tests/real_run.py tests/real_replies/qwen-0.5b-hour.jsonl

The tests replay the file (`ReplayModel`) through the same script: the same town, seed and
questions, so most prompts come out the same and get the very reply they got live.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from townbot.llm.port import LanguageModel
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


async def record(path: Path) -> None:
    from townbot.llm.settings import load_settings
    from townbot.town.launch import checked_model

    os.environ["TOWNBOT_RECORD"] = str(path)
    path.unlink(missing_ok=True)
    model = await checked_model(SEED, load_settings())
    started = time.perf_counter()
    db = path.with_suffix(".db")
    db.unlink(missing_ok=True)
    try:
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


if __name__ == "__main__":
    asyncio.run(record(Path(sys.argv[1])))
