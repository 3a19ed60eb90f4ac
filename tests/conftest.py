"""Shared fixtures: the shipped town, and fresh engines on temporary databases."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from townbot.llm.offline import OfflineModel
from townbot.llm.stack import build_model_stack
from townbot.mind import state
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.world.loading import load_world
from townbot.world.model import World

ROOT = Path(__file__).resolve().parents[1]
# Every commit in every test checks that no mind part changed without being marked dirty.
state.CHECK_UNMARKED = True


@pytest.fixture(scope="session")
def world() -> World:
    return load_world(ROOT / "world.yaml", ROOT / "personas")


async def open_engine(world: World, db: Path, seed: int = 0) -> Engine:
    store = await Store.open(db)
    return await Engine.open(world, store, build_model_stack(OfflineModel(seed=seed)), seed=seed)


@pytest.fixture
async def engine(world: World, tmp_path: Path):
    town = await open_engine(world, tmp_path / "town.db")
    yield town
    await town.store.close()


def accesses_as_before_migration_10(raw: sqlite3.Connection) -> None:
    """memory_access laid out as schema 9 had it: a row for each memory logged."""
    logged = []
    for town, agent, seqs, times, importances in raw.execute(
            "SELECT town_id, agent, seqs, times, importances FROM memory_access ORDER BY id"):
        positions, scores = seqs.split(","), importances.split(",")
        when = times.split("\x1f")
        logged += [(town, agent, int(seq), (when * len(positions))[index], int(importance))
                   for index, (seq, importance) in enumerate(zip(positions, scores, strict=True))]
    raw.execute("DROP TABLE memory_access")
    raw.execute("CREATE TABLE memory_access (id INTEGER PRIMARY KEY, town_id INTEGER NOT NULL, "
                "agent TEXT NOT NULL, seq INTEGER NOT NULL, last_accessed TEXT NOT NULL, "
                "importance INTEGER NOT NULL)")
    raw.executemany("INSERT INTO memory_access (town_id, agent, seq, last_accessed, importance) "
                    "VALUES (?, ?, ?, ?, ?)", logged)


@pytest.fixture
def clean_env(monkeypatch, tmp_path: Path):
    """A private working folder, no proxy, and a chat model named: for runs against a fake
    server on 127.0.0.1 (its address is the test's to set)."""
    from local_server import PROXY_VARIABLES

    monkeypatch.chdir(tmp_path)
    for variable in PROXY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("TOWNBOT_CHAT_MODEL", "fake-chat")
    return monkeypatch
