"""Interviews never stop the clock: no town lock is held while the model answers, so ticks and
other commands go on; what the answer starts from is read between ticks, and the interview
memory (when asked to remember) commits like any use case. The figures under load (50
interviews at once at 1 s a call, ticks every 10 s) come from benchmarks/interviews.py."""

from __future__ import annotations

import asyncio

import pytest

from townbot.llm.offline import OfflineModel
from townbot.llm.port import AnswerT, Ask, Layer, Reply
from townbot.llm.stack import build_model_stack
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.town.service import Person, TownService

ALEX = Person("test:alex", "Alex")
BYSTANDER = Person("test:bo", "Bo")


class HeldAnswers(Layer):
    """Interview answers wait until the test lets them go; everything else passes."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.waiting = asyncio.Event()  # an answer is waiting
        self.held = 0  # answers waiting
        self.release = asyncio.Event()

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        if request.purpose == "answer":
            self.waiting.set()
            self.held += 1
            await self.release.wait()
        return await self.inner.reply(request)


@pytest.fixture
async def held(world, tmp_path):
    """A town whose interview answers wait for `release`: (the model layer, the service)."""
    held = HeldAnswers(OfflineModel())
    store = await Store.open(tmp_path / "town.db")
    service = TownService(await Engine.open(world, store, build_model_stack(held)))
    yield held, service
    held.release.set()
    await store.close()


async def test_ticks_and_a_status_go_on_while_an_interview_waits_for_its_answer(held):
    held, service = held
    engine, store = service.engine, service.engine.store
    interview = asyncio.create_task(service.interview(
        ALEX, "Isabella Rodriguez", "What are you planning this week?", remember=True))
    await held.waiting.wait()  # the model is answering the interview now
    asked_at = engine.clock.now
    for _ in range(3):
        await service.tick()  # before: waited for the lock the interview held
    status = await service.status(BYSTANDER)
    assert status.data["tick"] == 3 and not interview.done()
    held.release.set()
    outcome = await interview
    assert outcome.data["resident"] == "Isabella Rodriguez"
    memory = engine.minds["Isabella Rodriguez"].stream.memories[-1]
    assert memory.kind == "conversation" and "What are you planning this week?" in memory.text
    assert memory.created == engine.clock.now != asked_at, "remembered when it was answered"
    rows = await store.usage_rows(engine.town.id)
    assert rows, "the town kept going"
    async with store.db.execute("SELECT COUNT(*) FROM memories WHERE text LIKE ?",
                                ("%planning this week%",)) as cursor:
        assert (await cursor.fetchone())[0] == 1, "the interview memory was committed"
    audit = await store.db.execute_fetchall(
        "SELECT use_case, outcome FROM audit_log ORDER BY id")
    assert [tuple(row) for row in audit] == [("status", "ok"), ("interview", "ok")]


async def test_interviews_at_once_count_toward_the_rate_limit_when_admitted(held):
    held, service = held
    asked = [asyncio.create_task(service.interview(ALEX, "Klaus Mueller", f"Question {n}?"))
             for n in range(6)]
    while held.held < 5 or not any(task.done() for task in asked):
        await asyncio.sleep(0)  # five admitted and waiting on the model, one refused
    refused = [task for task in asked if task.done() and task.exception() is not None]
    assert len(refused) == 1 and "5 times in the last 60 s" in str(refused[0].exception())
    held.release.set()
    answered = await asyncio.gather(*(t for t in asked if t not in refused))
    assert len(answered) == 5
