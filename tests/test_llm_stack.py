"""Each layer of the model stack on its own, the stack as composed, and usage that travels
with the call: two callers sharing one stack never mix their records, and a tick killed half-way
keeps the records of the calls it made."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from townbot.llm.budget import Budget, Budgeted
from townbot.llm.cache import Cached
from townbot.llm.checking import Checked
from townbot.llm.metering import CollectedUsage, Recorded
from townbot.llm.offline import OfflineModel
from townbot.llm.port import (
    AnswerT,
    Ask,
    CallContext,
    CallFailed,
    Embedded,
    LanguageModel,
    Layer,
    Reply,
    UsageRecord,
)
from townbot.llm.purposes import ImportanceScores, PlaceChoice
from townbot.llm.settings import Caps
from townbot.llm.stack import WithContext, build_model_stack, find_layer
from townbot.store.database import Store, TickChanges
from townbot.town.engine import Engine
from townbot.world.model import World


class Replies(LanguageModel):
    """A bottom model that gives prepared replies in order (a CallFailed is raised)."""

    label = "prepared"
    embedding_model = "prepared-embed"
    embedding_dim = 2

    def __init__(self, *replies: Reply | CallFailed, embedded: Embedded | None = None) -> None:
        self.replies = list(replies)
        self.embedded = embedded
        self.asked: list[Ask] = []

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        self.asked.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, CallFailed):
            raise reply
        return reply

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        reply = await self.reply(request)
        return reply.answer if reply.answer is not None else request.default()

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        return (await self.embed_report(texts, call)).vectors

    async def embed_report(self, texts: Sequence[str],
                           call: CallContext | None = None) -> Embedded:
        return self.embedded or Embedded(np.zeros((len(texts), 2)), self.embedding_model)


def place(choice: str | None, problem: str | None = None, tokens: int = 10) -> Reply[PlaceChoice]:
    answer = PlaceChoice(choice=choice) if choice else None
    return Reply(answer, "prepared", tokens, 2, False, problem, "invalid_json" if problem else None)


def choose(optional: bool = False, **call) -> Ask[PlaceChoice]:
    return Ask("choose_sector", "Where to?", PlaceChoice, lambda: PlaceChoice(choice="home"),
               agent="Klaus Mueller", optional=optional,
               check=lambda a: None if a.choice != "nowhere" else "'nowhere' is not a place",
               **call)


def rate() -> Ask[ImportanceScores]:
    return Ask("importance", "Rate: 1. a fire", ImportanceScores,
               lambda: ImportanceScores(scores=[3]), agent="Klaus Mueller")


# --- each layer alone ----------------------------------------------------------------------


async def test_checked_repairs_once_then_falls_back_and_answers_a_failed_call_with_the_default():
    layer = Checked(Replies(place(None, "not JSON"), place("Hobbs Cafe")))
    repaired = await layer.reply(choose())
    assert (repaired.answer.choice, repaired.outcome) == ("Hobbs Cafe", "repaired")
    assert repaired.prompt_tokens == 20, "both tries are paid for"
    assert "not JSON" in layer.inner.asked[1].prompt, "the repair names the problem"

    layer = Checked(Replies(place("nowhere"), place("nowhere")))
    fallback = await layer.reply(choose())
    assert (fallback.answer.choice, fallback.outcome) == ("home", "fallback")
    assert layer.problems == {"unusable": 2}

    layer = Checked(Replies(CallFailed("server down after 3 tries")))
    failed = await layer.reply(choose())
    assert (failed.answer.choice, failed.outcome) == ("home", "failed")
    assert "server down" in layer.report().last_failure


async def test_cached_answers_the_same_importance_question_once():
    inner = Replies(Reply(ImportanceScores(scores=[8]), "prepared", 5, 1, False))
    layer = Cached(inner)
    assert (await layer.reply(rate())).outcome == "ok"
    again = await layer.reply(rate())
    assert (again.answer.scores, again.outcome, again.prompt_tokens) == ([8], "cached", 0)
    assert len(inner.asked) == 1


async def test_budgeted_refuses_at_the_cap_of_the_calls_own_game_day():
    layer = Budgeted(Replies(place("Hobbs Cafe"), place("Johnson Park")), Budget(Caps(calls_per_day=1)))
    assert (await layer.reply(choose(game_day=1))).outcome == "ok"
    refused = await layer.reply(choose(game_day=1))
    assert (refused.outcome, refused.answer.choice) == ("over_budget", "home")
    assert (await layer.reply(choose(game_day=2))).answer.choice == "Johnson Park"
    assert layer.report().budget.day_calls == {1: 1, 2: 1}


async def test_recorded_sends_each_record_to_the_sink_the_call_carries():
    default, mine = CollectedUsage(), CollectedUsage()
    layer = Recorded(Replies(place("Hobbs Cafe"), place("Hobbs Cafe")), default)
    await layer.ask(choose(game_day=3, usage=mine))
    await layer.ask(choose())
    [record] = mine.records
    assert (record.purpose, record.agent, record.game_day, record.model, record.outcome) == \
        ("choose_sector", "Klaus Mueller", 3, "prepared", "ok")
    assert len(default.records) == 1 and default.records[0].game_day == 1


async def test_recorded_counts_embedding_requests_hits_and_failures_but_not_local_embeddings():
    usage = CollectedUsage()
    remote = Embedded(np.zeros((3, 2)), "remote-embed", prompt_tokens=9, requests=1, cache_hits=1,
                      failed=1)
    await Recorded(Replies(embedded=remote)).embed(["a", "b", "c"], CallContext(usage=usage))
    assert [r.outcome for r in usage.records] == ["ok", "cached", "failed"]
    await Recorded(Replies()).embed(["a"], CallContext(usage=usage))
    assert len(usage.records) == 3, "a local embedder costs nothing"


async def test_optional_capabilities_have_defaults_and_pass_through_every_layer():
    class Bare(LanguageModel):
        label, embedding_model, embedding_dim = "bare", "bare-embed", 2

        async def ask(self, request: Ask[AnswerT]) -> AnswerT:
            return request.default()

        async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
            return np.zeros((len(texts), 2))

    stack = build_model_stack(Bare(), budget=Budget(Caps()))
    await stack.prepare()
    await stack.close()
    assert stack.model_for("importance") == "bare" and stack.report().budget is not None
    reply = await stack.reply(choose())
    assert reply.estimated and reply.outcome == "ok", "a model without token counts is estimated"
    assert isinstance(find_layer(stack, Bare), Bare) and find_layer(stack, Cached) is not None
    assert [type(layer).__name__ for layer in layers(stack)] == \
        ["Recorded", "Budgeted", "Cached", "Watched", "Checked", "Bare"]


def layers(model: LanguageModel) -> list[LanguageModel]:
    found = [model]
    while isinstance(model, Layer):
        model = model.inner
        found.append(model)
    return found


# --- context that travels with the call ----------------------------------------------------


async def test_two_callers_sharing_a_stack_keep_their_own_records_and_days():
    remote = Embedded(np.zeros((1, 2)), "remote-embed", prompt_tokens=3, requests=1)
    stack = build_model_stack(Replies(*[place("Hobbs Cafe")] * 3, embedded=remote))
    north, south = CollectedUsage(), CollectedUsage()
    a = WithContext(stack, lambda: CallContext(game_day=1, usage=north))
    b = WithContext(stack, lambda: CallContext(game_day=5, usage=south))
    await asyncio.gather(a.ask(choose()), b.ask(choose()), b.ask(choose()))
    await a.embed(["a memory"])
    assert [(r.purpose, r.game_day) for r in north.records] == [("choose_sector", 1),
                                                                 ("embedding", 1)]
    assert [r.game_day for r in south.records] == [5, 5]
    assert not stack.usage.records


async def test_a_tick_killed_half_way_keeps_the_usage_of_the_calls_it_made(world: World,
                                                                           tmp_path: Path):
    class Stalls(OfflineModel):
        """Answers normally until its answers run out, then hangs (a server stops answering)."""

        answers_left: int | None = None

        async def ask(self, request: Ask[AnswerT]) -> AnswerT:
            if self.answers_left is not None:
                if self.answers_left == 0:
                    await asyncio.Event().wait()
                self.answers_left -= 1
            return await super().ask(request)

    inner = Stalls()
    store = await Store.open(tmp_path / "town.db")
    engine = await Engine.open(world, store, build_model_stack(inner))
    await engine.tick()
    committed = len(await store.usage_rows(engine.town.id))
    for _ in range(7):  # to 08:10: everyone awake
        await engine.tick()
    inner.answers_left = 1  # the tick asks more than one question: it stalls half way
    before = len(await store.usage_rows(engine.town.id))
    tick = asyncio.create_task(engine.tick())
    for _ in range(200):  # until some calls of this tick are on disk
        await asyncio.sleep(0.01)
        if len(await store.usage_rows(engine.town.id)) > before:
            break
    tick.cancel()  # the process dies here: the tick never commits
    with pytest.raises(asyncio.CancelledError):
        await tick
    other = await Store.open(tmp_path / "town.db", read_only=True)  # another process reading
    rows = await other.usage_rows(engine.town.id)
    assert committed > 0 and len(rows) > before
    assert (await other.town()).tick == 8, "the killed tick did not commit"
    assert {r["tick"] for r in rows[before:]} == {8}
    await other.close()
    await store.close()


async def test_usage_joins_the_commit_and_is_kept_when_the_commit_fails(tmp_path: Path):
    store = await Store.open(tmp_path / "town.db")
    try:
        town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 8,
                                       {"Ann": ({}, {})}, {})
        tick = 0
        usage = store.usage_log(town.id, lambda: tick)
        statements: list[str] = []
        await store.db.set_trace_callback(statements.append)

        def made(prompt_tokens: int) -> None:  # a call completes; the event loop is not yet free
            usage.record(UsageRecord("plan", "Ann", 1, "m", prompt_tokens, 1, False, 0.0, "ok"))

        made(1), made(2)
        await store.save_tick(TickChanges(town.id, 1), usage)
        kept = [s for s in statements if s.startswith(("BEGIN", "COMMIT", "INSERT INTO llm"))]
        assert kept[0] == "BEGIN IMMEDIATE" and kept[-1] == "COMMIT" and len(kept) == 4, \
            "one transaction, both usage rows in it"
        # The tick's write fails after its usage rows (the first it adds), as a full disk would.
        await store.db.execute("CREATE TEMP TRIGGER broken BEFORE UPDATE OF tick ON towns "
                               "BEGIN SELECT RAISE(ABORT, 'the disk broke'); END")
        tick = 1
        made(3), made(4)
        with pytest.raises(sqlite3.IntegrityError, match="the disk broke"):
            await store.save_tick(TickChanges(town.id, 2, tick=1), usage)
        await store.db.execute("DROP TRIGGER broken")
        made(5)
        await store.save_tick(TickChanges(town.id, 2, tick=1), usage)  # the tick done again
    finally:
        await store.close()
    other = await Store.open(tmp_path / "town.db", read_only=True)  # another process reading
    try:
        rows = await other.usage_rows(town.id)
        assert [(r["tick"], r["prompt_tokens"]) for r in rows] == \
            [(0, 1), (0, 2), (1, 3), (1, 4), (1, 5)], "each call once, in order"
        assert (await other.town()).tick == 2
    finally:
        await other.close()


async def test_a_commit_whose_caller_is_cancelled_keeps_its_usage_once(tmp_path: Path):
    """The caller stops waiting; the database's thread still runs the write to its end."""
    store = await Store.open(tmp_path / "town.db")
    try:
        town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 8,
                                       {"Ann": ({}, {})}, {})
        usage = store.usage_log(town.id, lambda: 0)
        inside, go_on = threading.Event(), threading.Event()

        def traced(statement: str) -> None:  # in the database's thread
            if statement.startswith("UPDATE towns"):
                inside.set()
                go_on.wait(10)

        async def tick() -> None:  # a call completes, then the tick commits
            usage.record(UsageRecord("plan", "Ann", 1, "m", 7, 1, False, 0.0, "ok"))
            await store.save_tick(TickChanges(town.id, 1), usage)

        await store.db.set_trace_callback(traced)
        saving = asyncio.create_task(tick())
        while not inside.is_set():
            await asyncio.sleep(0.001)
        saving.cancel()
        await asyncio.sleep(0.01)
        go_on.set()
        with pytest.raises(asyncio.CancelledError):
            await saving
        await store.db.set_trace_callback(None)
        rows = await store.usage_rows(town.id)
        assert [r["prompt_tokens"] for r in rows] == [7], "committed with the tick, once"
        assert (await store.town()).tick == 1
    finally:
        go_on.set()
        await store.close()


def test_a_record_knows_its_call():
    ask = choose(game_day=2)
    assert ask.within(CallContext(game_day=7)).game_day == 2
    assert choose().within(CallContext(agent="x", game_day=7)).agent == "Klaus Mueller"
