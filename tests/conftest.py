"""Shared fixtures: the shipped town, and fresh engines on temporary databases."""

from __future__ import annotations

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
