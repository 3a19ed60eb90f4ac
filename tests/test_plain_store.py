"""A town saved before the plain store (schema 13: the attention and planning parts logged)
opens with nothing lost: migration 14 stores every mind part whole, and every memory, plan,
conversation, post, usage and audit row is still there, in the town and in its day
checkpoints."""

from __future__ import annotations

import ast
import json
import shutil
import sqlite3
from pathlib import Path

from townbot.llm.offline import OfflineModel
from townbot.llm.stack import build_model_stack
from townbot.mind.state import MindState
from townbot.store.checkpoints import rewind_to_day
from townbot.store.database import Store, conversations
from townbot.store.migrations import MIGRATIONS
from townbot.town.engine import Engine
from townbot.town.launch import TownFiles
from townbot.world.clock import parse_game_time

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "town_v13.db"  # made by fixtures/make_town_v13.py
EXPECTED = json.loads((FIXTURE.parent / "town_v13_minds.json").read_text())
# Tables the migration leaves as they were, row for row.
KEPT = ("towns", "agents", "bodies", "checkpoint_bodies", "memories", "memory_access",
        "objects", "conversations", "utterances", "outbox",
        "llm_usage", "visitors", "audit_log", "web_links", "day_checkpoints",
        "checkpoint_memory_access", "checkpoint_objects")


def table_rows(db: Path, table: str) -> list[tuple]:
    with sqlite3.connect(db) as raw:
        return raw.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()


def small_world():
    return TownFiles(str(ROOT / "world.yaml"), str(ROOT / "personas"), "3").load()


async def open_town(db: Path) -> Engine:
    store = await Store.open(db)
    return await Engine.open(small_world(), store, build_model_stack(OfflineModel(seed=0)))


async def test_a_town_of_schema_13_opens_with_every_row_and_every_mind_as_it_was(tmp_path):
    db = tmp_path / "town.db"
    shutil.copy(FIXTURE, db)
    before = {table: table_rows(db, table) for table in KEPT}
    store = await Store.open(db)
    assert await store.schema_version() == len(MIGRATIONS)
    town = await store.town()
    assert town is not None
    agents = await store.agents(town.id)
    assert set(agents) == set(EXPECTED)
    for name, (body, mind) in agents.items():
        assert body == EXPECTED[name]["body"], name
        expected = dict(EXPECTED[name]["mind"])  # sights as that version kept them (see 16)
        sights = {text: parse_game_time(seen) for text, seen in expected.pop("sights").items()}
        state = MindState.from_dict(mind)
        assert state.attention.sights == sights, name
        assert {k: v for k, v in state.to_dict().items() if k != "seen_at"} == expected, name
    assert len(await store.memories(town.id)) == len(before["memories"]) == 164
    assert len(await conversations(store, town.id)) == 2
    assert len(await store.usage_rows(town.id)) == len(before["llm_usage"]) > 0
    assert [row["use_case"] for row in await store.audit_rows(town.id)] == [
        "join", "say", "whisper", "announce"]
    assert len(await store.events(town.id)) == len(before["outbox"]) > 0
    await store.close()
    for table, rows in before.items():
        assert table_rows(db, table) == rows, table
    with sqlite3.connect(db) as raw:
        tables = {name for (name,) in raw.execute("SELECT name FROM sqlite_master")}
    assert not tables & {"part_log", "checkpoint_part_log", "memory_packs", "access_packs"}


async def test_the_migrated_town_goes_on_and_forks_from_a_day_it_kept(tmp_path):
    db = tmp_path / "town.db"
    shutil.copy(FIXTURE, db)
    engine = await open_town(db)
    tick = engine.clock.tick
    for _ in range(3):
        await engine.tick()
    minds = {name: mind.state for name, mind in engine.minds.items()}
    await engine.store.close()
    resumed = await open_town(db)
    assert resumed.clock.tick == tick + 3
    assert {name: mind.state for name, mind in resumed.minds.items()} == minds
    await resumed.store.close()

    fork = tmp_path / "fork.db"
    shutil.copy(db, fork)
    with sqlite3.connect(fork, isolation_level=None) as raw:
        kept = rewind_to_day(raw, resumed.town.id, 2)
    forked = await open_town(fork)
    assert forked.clock.tick == kept.tick
    await forked.tick()
    await forked.store.close()


def test_the_store_imports_no_mind_module():
    for path in sorted((ROOT / "townbot" / "store").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                    [alias.name for alias in node.names]
                assert not any(name.startswith("townbot.mind") for name in names), path.name
