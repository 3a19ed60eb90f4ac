"""Open a town from files and a database: what every front end (sim, play, Discord) starts with."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from townbot.llm.budget import Budget
from townbot.llm.offline import OfflineModel
from townbot.llm.port import LanguageModel
from townbot.llm.settings import ModelSettings, load_settings
from townbot.llm.stack import build_model_stack
from townbot.store.database import Store
from townbot.store.errors import StoreError
from townbot.town.engine import Engine
from townbot.world.loading import load_world, select_residents
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
    residents: str | None = None  # a number or "Name, Name": a smaller town (select_residents)

    def load(self) -> World:
        world = load_world(data_path(self.world, "world.yaml"), data_path(self.personas, "personas"))
        return select_residents(world, self.residents) if self.residents else world


def pin_blas_threads(openblas_starts_with_one: bool = False) -> None:
    """One BLAS thread for the whole process, set once at start-up: retrieval's products are
    small, and threads only add hand-offs that stall on shared cores (benchmarks/speed.py).
    `openblas_starts_with_one`: OPENBLAS_NUM_THREADS was 1 before numpy loaded (the CLI sees to
    it), so the OpenBLAS of numpy's own wheels already runs one thread and threadpoolctl (~10 ms
    of start-up) is skipped; any other BLAS is pinned."""
    import numpy  # loaded first, so that threadpoolctl finds its BLAS

    blas = getattr(numpy.__config__, "CONFIG", {}).get("Build Dependencies", {}).get("blas", {})
    if openblas_starts_with_one and blas.get("name") == "scipy-openblas":
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def _stacked(model: LanguageModel, settings: ModelSettings) -> LanguageModel:
    return build_model_stack(model, budget=Budget(settings.caps) if settings.caps.any else None,
                             max_unusable=None if settings.offline else settings.max_unusable)


def make_model(seed: int, settings: ModelSettings | None = None) -> LanguageModel:
    """The configured server's model (settings from the environment and townbot.toml when not
    given), or the offline model when no chat model is configured."""
    settings = settings or load_settings()
    if settings.offline:
        return _stacked(OfflineModel(seed=seed), settings)
    from townbot.llm.openai_client import OpenAIModel  # openai takes ~1 s to import

    return _stacked(OpenAIModel(settings), settings)


async def checked_client(seed: int, settings: ModelSettings) -> LanguageModel:
    """The configured model without layers: the offline one, or the server's after the start-up
    check (townbot.llm.probe), so that settings that cannot work stop here, before the first
    tick, with a message naming what to change."""
    if settings.offline:
        return OfflineModel(seed=seed)
    from townbot.llm.openai_client import OpenAIModel  # only with a server: openai is slow to import
    from townbot.llm.probe import start_up_check

    client = OpenAIModel(settings)
    try:
        await start_up_check(client)
    except BaseException:
        await client.close()
        raise
    return client


async def checked_model(seed: int, settings: ModelSettings) -> LanguageModel:
    """A server's `checked_client` in the town's layers, recording its replies when
    TOWNBOT_RECORD names a file."""
    from townbot.llm.recording import RECORD_ENV, ReplyRecorder

    client = await checked_client(seed, settings)
    recording = os.environ.get(RECORD_ENV)
    return _stacked(ReplyRecorder(client, Path(recording)) if recording else client, settings)


async def open_engine(files: TownFiles, db: str, *, seed: int = 0,
                      model: LanguageModel | None = None,
                      settings: ModelSettings | None = None) -> Engine:
    world = files.load()
    settings = settings or load_settings()
    made = None
    if model is None and not settings.offline:
        # The server is checked before the database is opened: a setting that cannot work
        # stops the run without creating a file (a server's model does not use the seed).
        model = made = await checked_model(seed, settings)
    try:
        store = await Store.open(db)
    except BaseException:
        if made is not None:
            await made.close()
        raise
    town = None
    try:
        town = await store.town()
        if town is not None:
            seed = town.seed  # a resumed town keeps the seed it was founded with
        if model is None:
            model = made = make_model(seed, settings)
        await model.prepare()  # a server's embedding dimension must be known before resuming
        budget = model.report().budget
        if town is not None and budget is not None:
            budget.restore(await store.usage_rows(town.id))
        return await Engine.open(world, store, model, seed=seed)
    except BaseException as error:
        if made is not None:
            await made.close()
        # a town that could not be founded (a full disk) leaves no file behind
        await store.close(refused=town is None and isinstance(error, StoreError))
        raise
