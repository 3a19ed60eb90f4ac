"""The attention and planning parts are stored as a base (the part) and a log of what each
commit changed (part_log, migration 7): applied in order, the log gives back the very part in
memory, entry order included, through new bases, and from a town of schema 6."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import date, datetime, timedelta

from conftest import accesses_as_before_migration_10, open_engine

from townbot.mind import state
from townbot.mind.attention import note, sort_sightings
from townbot.mind.planning import insert_block
from townbot.mind.plans import PlanBlock, PlanStep
from townbot.mind.reacting import Sighting
from townbot.mind.state import AttentionState, LogRow, MindState, PlanState, apply_logs
from townbot.store.database import Store, TickChanges, pack
from townbot.store.migrations import MIGRATIONS

NINE = datetime(2023, 2, 13, 9, 0)
GAP = timedelta(hours=6)


def replayed(kind, base: dict, rows: list[LogRow], key: str):
    """The part as loading builds it: the stored base, then every row logged (those before
    the base's start are left over and skipped)."""
    return kind.from_dict(apply_logs({**json.loads(json.dumps(base)),
                                      key: [(row.n, row.change) for row in rows]}))


def test_a_sight_table_comes_back_from_its_log_in_its_order():
    rng = random.Random(7)
    texts = [f"Resident {i} is doing thing {j}" for i in range(6) for j in range(4)]
    part = AttentionState()
    assert part.take_log() is None, "never stored whole: the part is stored whole"
    base, rows, now = part.to_dict(), [], NINE
    for commit in range(150):
        now += timedelta(minutes=rng.choice([10, 10, 10, 60, 240]))
        seen = [Sighting(t, "agent", t, "here") for t in rng.sample(texts, rng.randint(0, 5))]
        sort_sightings(part.sights, seen, now, GAP)
        if rng.random() < 0.3:
            part.last_step = f"step {commit}"
            note(part.sights, f"me doing step {commit % 5}", now, GAP)
        if rng.random() < 0.05:
            part.sights.pop(rng.choice(texts), None)
        logged = part.take_log()
        if logged is None:
            base = part.to_dict()
        else:
            rows += logged
        again = replayed(AttentionState, base, rows, "sight_log")
        assert again == part and list(again.sights.items()) == list(part.sights.items()), commit
        assert (again.log_from, again.next_n) == (part.log_from, part.next_n), commit
    assert part.log_from > 0, "the part was stored whole again on the way"


def block(start: datetime, hours: int, activity: str, steps: int = 0) -> PlanBlock:
    end = start + timedelta(hours=hours)
    return PlanBlock(start, end, activity, "Hobbs Cafe", "cafe", [
        PlanStep(start + timedelta(minutes=10 * i), start + timedelta(minutes=10 * i + 10),
                 f"{activity}, part {i}", "", "", "🙂") for i in range(steps)])


def test_a_plan_comes_back_from_its_log():
    rng = random.Random(3)
    part = PlanState(date(2023, 2, 13), ["work"], [block(NINE + timedelta(hours=h), 1, f"hour {h}")
                                                   for h in range(10)])
    assert part.take_log() is None
    base, rows = part.to_dict(), []
    for commit in range(120):
        choice = rng.random()
        if choice < 0.4:  # a block decomposed into steps
            at = rng.randrange(len(part.blocks))
            part.blocks[at].steps = block(part.blocks[at].start, 1, "steps", rng.randint(1, 6)).steps
        elif choice < 0.6:  # a reaction cut in
            start = NINE + timedelta(minutes=rng.randrange(0, 600, 10))
            part.blocks = insert_block(part.blocks, block(start, 1, f"reaction {commit}", 1))
        elif choice < 0.7:  # a new plan for the rest of the day
            keep = rng.randrange(len(part.blocks) + 1)
            part.blocks = part.blocks[:keep] + [block(NINE + timedelta(hours=12 + h), 1, "new")
                                                for h in range(rng.randint(0, 3))]
        elif choice < 0.85:
            part.notable = [*part.notable, f"news {commit}"][-3:]
        elif choice < 0.9:
            part.last_revision = NINE + timedelta(minutes=commit)
        logged = part.take_log()
        if logged is None:
            base = json.loads(part.encode())
        else:
            rows += logged
        again = replayed(PlanState, base, rows, "plan_log")
        assert again == part, commit
        assert (again.log_from, again.next_n) == (part.log_from, part.next_n), commit
        assert again.take_log() == [], "as loaded, nothing has changed"
    assert part.log_from > 0


def test_a_loaded_plan_logs_only_its_changes_and_an_older_block_anew():
    """A block as stored is what the first commit after a resume compares with: one of an
    older format (no "resumed") is logged in today's, the others only when they change."""
    blocks = [block(NINE + timedelta(hours=h), 1, f"hour {h}", steps=h % 3) for h in range(4)]
    stored = json.loads(PlanState(date(2023, 2, 13), ["work"], blocks).encode())
    del stored["blocks"][3]["resumed"]
    plan = PlanState.from_dict(apply_logs(stored))
    rows = plan.take_log()
    assert [json.loads(row.change)[1:3] for row in rows] == [[3, 4]], "the older block, anew"
    plan.blocks[1].steps[0].action = "changed"
    rows += plan.take_log()
    assert json.loads(rows[-1].change)[1:3] == [1, 2] and plan.take_log() == []
    log = [(row.n, row.change) for row in rows]
    assert PlanState.from_dict(apply_logs({**stored, "plan_log": log})) == plan


def test_a_part_is_stored_whole_again_after_a_full_log(monkeypatch):
    monkeypatch.setattr(state, "LOG_LIMIT", 3)
    mind = MindState.from_dict({})
    for minute in range(4):
        note(mind.attention.sights, "Maria is reading", NINE + timedelta(minutes=minute), GAP)
        mind.attention.mark()
        parts, rows = mind.take_changes(), mind.take_logs()
        if minute < 3:
            assert "attention" not in parts and [r.n for r in rows["attention"]] == [minute]
        else:
            assert json.loads(parts["attention"])["sight_log_from"] == 3 and rows == {}
            assert mind.log_starts() == {"attention": 3, "planning": 0}


async def test_a_running_town_reloads_as_in_memory_through_new_bases(world, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setattr(state, "LOG_LIMIT", 4)
    engine = await open_engine(world, tmp_path / "town.db")
    try:
        for _ in range(16):  # 7:00 to 9:40, plans made and decomposed, people seen
            await engine.tick()
            stored = await engine.store.agents(engine.town.id)
            for name, mind in engine.minds.items():
                again = MindState.from_dict(stored[name][1])
                assert again == mind.state, name
                assert list(again.attention.sights) == list(mind.state.attention.sights), name
    finally:
        await engine.store.close()
    with sqlite3.connect(tmp_path / "town.db") as raw:
        parts = {part for (part,) in raw.execute("SELECT DISTINCT part FROM part_log")}
    assert parts == {"attention", "planning"}


async def test_compacting_drops_the_rows_before_each_log_start(tmp_path):
    store = await Store.open(tmp_path / "town.db")
    try:
        town = await store.create_town("T", "2023-02-13 07:00", 10, 0, "m", "e", 8,
                                       {"Ann": ({}, {}), "Bob": ({}, {})}, {})
        rows = [(agent, part, LogRow(n, "[]")) for agent in ("Ann", "Bob")
                for part in ("attention", "planning") for n in range(4)]
        await store.save_tick(TickChanges(town.id, 1, logged=rows))
        await store.save_tick(TickChanges(town.id, 2, compact=True, log_starts=[
            ("Ann", "attention", 2), ("Ann", "planning", 0), ("Bob", "attention", 4)]))
        async with store.db.execute("SELECT agent, part, n FROM part_log ORDER BY id") as cursor:
            kept = [tuple(row) for row in await cursor.fetchall()]
    finally:
        await store.close()
    assert kept == [("Ann", "attention", 2), ("Ann", "attention", 3),
                    *(("Ann", "planning", n) for n in range(4)),
                    *(("Bob", "planning", n) for n in range(4))]


async def test_a_town_of_schema_6_keeps_its_parts_and_logs_from_then_on(world, tmp_path):
    """A town saved before the log stored each part whole: made here by storing the parts
    of a running town whole and taking the town back to schema 6."""
    db = tmp_path / "town.db"
    engine = await open_engine(world, db)
    try:
        for _ in range(9):  # to 8:30: people up and seeing each other
            await engine.tick()
        old = {name: {part.name: {k: v for k, v in part.to_dict().items()
                                  if not k.endswith("_log_from")}
                      for part in (mind.state.attention, mind.state.planning)}
               for name, mind in engine.minds.items()}
    finally:
        await engine.store.close()
    assert any(parts["attention"]["sights"] for parts in old.values())
    with sqlite3.connect(db) as raw:
        raw.executemany("UPDATE mind_parts SET state = ? WHERE agent = ? AND part = ?",
                        [(pack(json.dumps(stored)), name, part) for name, parts in old.items()
                         for part, stored in parts.items()])
        raw.execute("DROP TABLE part_log")
        accesses_as_before_migration_10(raw)
        raw.execute("ALTER TABLE llm_usage DROP COLUMN cached_tokens")  # added by migration 12
        raw.execute("PRAGMA user_version = 6")

    engine = await open_engine(world, db)
    try:
        assert await engine.store.schema_version() == len(MIGRATIONS) >= 7
        for name, mind in engine.minds.items():
            assert mind.state.attention == AttentionState.from_dict(old[name]["attention"])
            assert mind.state.planning == PlanState.from_dict(old[name]["planning"])
        await engine.tick()
        memory = {name: mind.state for name, mind in engine.minds.items()}
    finally:
        await engine.store.close()
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT count(*) FROM part_log").fetchone()[0] > 0
    resumed = await open_engine(world, db)
    try:
        assert {name: mind.state for name, mind in resumed.minds.items()} == memory
    finally:
        await resumed.store.close()
