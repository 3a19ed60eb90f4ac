"""Talks that outlast their tick (Engine.tick(carry_after=...)): a paced platform lets a slow
model's conversation go on beside the next ticks instead of holding the town up."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from townbot.llm.offline import OfflineModel
from townbot.llm.port import AnswerT, Ask, CallContext, LanguageModel
from townbot.llm.stack import build_model_stack
from townbot.mind.agent import Intent
from townbot.store.database import Store
from townbot.town import commands
from townbot.town.engine import Engine
from townbot.world.clock import format_game_time

CAFE = ("Hobbs Cafe", "cafe")
ISABELLA, KLAUS = "Isabella Rodriguez", "Klaus Mueller"


class SlowTalker(LanguageModel):
    """The offline model, except that no line of a conversation is written until `gate` opens:
    a model slower than the tick's patience."""

    def __init__(self) -> None:
        self.inner = OfflineModel(seed=0)
        self.label, self.embedding_model = self.inner.label, self.inner.embedding_model
        self.embedding_dim = self.inner.embedding_dim
        self.gate = asyncio.Event()
        self.lines_asked = 0

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        if request.purpose == "utterance":
            self.lines_asked += 1
            await self.gate.wait()
        return await self.inner.ask(request)

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        return await self.inner.embed(texts, call)


@pytest.fixture
async def slow(world, tmp_path: Path):
    model = SlowTalker()
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, build_model_stack(model))
    engine.clock.tick = 9  # 08:30: both are up
    for name in (ISABELLA, KLAUS):
        body = engine.bodies[name]
        body.sector, body.arena, body.action = *CAFE, "having coffee"
        body.travel_sector = body.travel_arena = body.arrive_at = None
    yield engine, model
    engine.drop_talks()
    await store.close()


async def start_talk(engine: Engine, second: str = KLAUS) -> list:
    """Isabella asks to talk; the tick's patience (50 ms) runs out before any line is written."""
    events: list = []
    deadline = asyncio.get_running_loop().time() + 0.05
    await engine._hold_conversations([Intent(ISABELLA, *CAFE, "having coffee", "☕",
                                             talk_to=second)], events, deadline)
    return events


async def conversation_rows(engine: Engine) -> int:
    rows = await engine.store.db.execute_fetchall("SELECT COUNT(*) FROM conversations")
    return rows[0][0]


async def test_a_talk_outlasting_its_tick_goes_on_and_is_posted_when_it_ends(slow):
    engine, model = slow
    started = engine.clock.now
    assert not [e for e in await start_talk(engine) if e.kind == "speech"]
    assert engine.talking() == {ISABELLA, KLAUS}
    assert engine.bodies[KLAUS].action == f"talking with {ISABELLA}"

    quiet = await engine.tick(carry_after=0.05)  # the talk is still under way
    assert not [e for e in quiet if e.kind == "speech"]
    assert engine.talking() == {ISABELLA, KLAUS}
    assert engine.bodies[ISABELLA].action == f"talking with {KLAUS}", "talkers do not think"
    assert not [e for e in quiet if e.actor in (ISABELLA, KLAUS)]
    assert await conversation_rows(engine) == 0, "nothing of an unfinished talk is stored"

    model.gate.set()
    ended = await engine.tick(carry_after=5.0)
    speech = [e for e in ended if e.kind == "speech"]
    assert {e.actor for e in speech} == {ISABELLA, KLAUS}
    assert [e.game_time for e in speech] == [format_game_time(started + timedelta(minutes=i))
                                        for i in range(len(speech))], "spoken when it began"
    assert engine.talking() == set()
    assert await conversation_rows(engine) == 1
    remembered = engine.minds[KLAUS].stream.by_kind("conversation")
    assert any(f"talked with {ISABELLA}" in m.text for m in remembered)


async def test_without_patience_a_tick_waits_for_its_talks(slow):
    engine, model = slow
    events: list = []
    waiting = asyncio.ensure_future(engine._hold_conversations(
        [Intent(ISABELLA, *CAFE, "having coffee", "☕", talk_to=KLAUS)], events))
    await asyncio.sleep(0.05)
    assert not waiting.done(), "no deadline: the tick waits for the talk"
    model.gate.set()
    await waiting
    assert {e.actor for e in events if e.kind == "speech"} == {ISABELLA, KLAUS}


async def test_a_town_put_back_after_a_failure_drops_its_talks_under_way(slow):
    engine, model = slow
    await start_talk(engine)
    talk = engine._talks[0]
    await engine._restore()  # what a failed tick or use case does
    await asyncio.sleep(0)
    assert talk.lines.cancelled() and engine.talking() == set()
    model.gate.set()
    events = await engine.tick(carry_after=5.0)
    assert not [e for e in events if e.kind == "speech" and e.actor == KLAUS]
    assert await conversation_rows(engine) == 0


async def test_a_visitor_who_leaves_mid_talk_breaks_nothing(slow):
    engine, model = slow
    await commands.arrive(engine, "p1", "Alex", "a reporter", *CAFE)
    await start_talk(engine, second="Alex")
    await commands.leave(engine, "p1")
    model.gate.set()
    events = await engine.tick(carry_after=5.0)
    greeting = [e for e in events if e.kind == "speech"]
    assert [e.actor for e in greeting] == [ISABELLA]
    assert await conversation_rows(engine) == 1


async def test_a_new_talk_never_takes_someone_already_talking(slow):
    engine, model = slow
    await start_talk(engine)
    body = engine.bodies["Maria Lopez"]
    body.sector, body.arena, body.action = *CAFE, "having coffee"
    body.travel_sector = body.travel_arena = body.arrive_at = None
    engine._start_talks([Intent("Maria Lopez", *CAFE, "having coffee", "☕", talk_to=KLAUS)])
    assert len(engine._talks) == 1, "Klaus is busy talking with Isabella"
