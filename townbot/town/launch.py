"""Open a town from files and a database: what every front end (sim, play, Discord) starts with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from townbot.llm.metering import MeteredModel
from townbot.llm.offline import OfflineModel
from townbot.store.database import Store
from townbot.town.engine import Engine
from townbot.world.loading import load_world
from townbot.world.model import World

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def data_path(given: str | None, default_name: str) -> Path:
    """An explicit path, else ./NAME, else the copy shipped beside the package."""
    if given:
        return Path(given)
    local = Path(default_name)
    return local if local.exists() else PROJECT_ROOT / default_name


@dataclass
class TownFiles:
    world: str | None = None
    personas: str | None = None

    def load(self) -> World:
        return load_world(data_path(self.world, "world.yaml"), data_path(self.personas, "personas"))


def make_model(seed: int) -> MeteredModel:
    return MeteredModel(OfflineModel(seed=seed))


async def open_engine(files: TownFiles, db: str, *, seed: int = 0,
                      model: MeteredModel | None = None) -> Engine:
    world = files.load()
    store = await Store.open(db)
    try:
        town = await store.town()
        if town is not None:
            seed = town.seed  # a resumed town keeps the seed it was founded with
        return await Engine.open(world, store, model or make_model(seed), seed=seed)
    except BaseException:
        await store.close()
        raise
