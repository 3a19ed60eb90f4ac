"""`townbot check`, `export`, `usage`, `reembed`, `backup` and `fork`: look at a town's files
or database, bring its memories to the configured embedding model, copy it while it runs, or
start a new town from it. Their arguments are in townbot/cli.py; this module loads once one of
them is chosen."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path

from townbot.llm.budget import Budget
from townbot.llm.metering import CollectedUsage
from townbot.llm.port import CallContext, LanguageModel, ModelError, ServerUnavailable
from townbot.llm.settings import ModelSettings
from townbot.store.backup import backup_database
from townbot.store.checkpoints import open_copy, rewind_to_day
from townbot.store.database import AuditEntry, Store, StoreError, TownRow, replace_embeddings
from townbot.town.costs import real_day_cost, real_day_line
from townbot.town.export import export_town, to_markdown
from townbot.town.launch import TownFiles, make_model
from townbot.town.usage import render_usage, summarise
from townbot.world.clock import GameClock, parse_game_time

REEMBED_CHUNK = 1024  # texts per embedding round: bounded memory, batched further by the client


def run_check(args: argparse.Namespace) -> int:
    world = TownFiles(args.world, args.personas).load()
    arenas = sum(len(s.arenas) for s in world.sectors.values())
    print(f"{world.town}: {len(world.sectors)} sectors, {arenas} arenas, "
          f"{len(world.object_paths())} objects, {len(world.personas)} residents: all valid")
    for sector in world.sectors.values():
        hours = f", open {sector.hours.describe()}" if sector.hours else ""
        print(f"  #{sector.channel:<24} {sector.name} ({sector.kind}{hours})")
    return 0


async def _stored_town(store: Store) -> TownRow:
    town = await store.town()
    if town is None:
        raise StoreError(f"{store.path} holds no town yet; run `townbot sim --db {store.path}` first")
    return town


async def run_usage(args: argparse.Namespace, settings: ModelSettings) -> int:
    store = await Store.open(args.db, read_only=True)
    try:
        town = await _stored_town(store)
        rows = await store.usage_rows(town.id)
    finally:
        await store.close()
    print(f"{town.name} (database {args.db}; founded with {town.model})")
    summary = summarise(rows, settings, town.tick_minutes)
    print(render_usage(summary, "model usage, town totals (all runs):"))
    cost = real_day_cost(summary, town.tick, town.tick_minutes, town.tick_seconds)
    print(real_day_line(cost, town.tick_minutes, town.tick_seconds))
    if settings.caps.any:
        budget = Budget(settings.caps)
        budget.restore(rows)
        print(budget.status(max((row["game_day"] for row in rows), default=1)))
    return 0


async def run_reembed(args: argparse.Namespace, settings: ModelSettings) -> int:
    store = await Store.open(args.db)
    model = None
    try:
        town = await _stored_town(store)
        model = make_model(town.seed, settings)
        await model.prepare()
        count = await reembed_town(store, town, model)
    finally:
        if model is not None:
            await model.close()
        await store.close()
    print(f"re-embedded {count} memories with {model.embedding_model} ({model.embedding_dim} "
          f"dimensions); they were embedded with {town.embedding_model} ({town.embedding_dim})")
    return 0


async def reembed_town(store: Store, town: TownRow, model: LanguageModel) -> int:
    """Every memory's vector from the model's embedder, written in one transaction."""
    memories = await store.memories(town.id)
    clock = GameClock(parse_game_time(town.start), town.tick_minutes, town.tick)
    usage = CollectedUsage()  # stored with the vectors, all or nothing
    call = CallContext(game_day=clock.day_number, purpose="reembed", usage=usage)
    vectors = []
    for start in range(0, len(memories), REEMBED_CHUNK):
        chunk = memories[start:start + REEMBED_CHUNK]
        try:
            embedded = await model.embed_report([stored.memory.text for stored in chunk], call)
        except ServerUnavailable as error:
            raise ModelError(f"{error}; nothing was changed, try again later") from None
        if embedded.failed:
            raise ModelError(f"{embedded.failed} memories could not be embedded (the server stayed "
                             "unavailable); nothing was changed, try again later")
        vectors += [(s.agent, s.memory.id, v)
                    for s, v in zip(chunk, embedded.vectors, strict=True)]
    await replace_embeddings(store, town.id, model.embedding_model, model.embedding_dim, vectors,
                             town.tick, usage.records)
    return len(vectors)


async def run_export(args: argparse.Namespace) -> int:
    store = await Store.open(args.db, read_only=True)
    try:
        data = await export_town(store)
    finally:
        await store.close()
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.format == "json"
          else to_markdown(data))
    return 0


def run_backup(args: argparse.Namespace) -> int:
    made = backup_database(Path(args.db), Path(args.to))
    print(f"backed up {made.town} (tick {made.tick}) from {args.db} to {made.path}: "
          f"{made.bytes / 1e6:.1f} MB, integrity check ok")
    return 0


async def run_fork(args: argparse.Namespace) -> int:
    """A new town in `args.to`: a consistent copy of `args.db` (a running town or a backup),
    rewound to the start of game day `args.at` when given, with an audit line saying so."""
    source, target = Path(args.db), Path(args.to)
    if target.is_dir():
        raise StoreError(f"{target} is a folder; give --to the new town's file name")
    backup_database(source, target)
    try:
        where = _rewind(target, args.at) if args.at is not None else None
        store = await Store.open(target)
        try:
            town = await _stored_town(store)
            clock = GameClock(parse_game_time(town.start), town.tick_minutes, town.tick)
            origin = f"day {args.at}'s start" if where else "its latest commit"
            await store.add_audits(town.id, [AuditEntry(
                datetime.now(UTC).isoformat(timespec="seconds"), where or
                f"{clock.now:%Y-%m-%d %H:%M}", "cli:fork", "townbot fork", "moderator", "fork",
                {"from": str(source), "day": args.at, "tick": town.tick}, "ok",
                f"forked from {source} at {origin}")])
        finally:
            await store.close()
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    print(f"forked {town.name} from {source} at {origin} (tick {town.tick}, "
          f"{clock.now:%a %b %d %H:%M}) into {target}; go on with `townbot sim --db {target}`")
    return 0


def _rewind(copy: Path, day: int) -> str:
    """The copy back at the start of game `day`; returns that moment's game time."""
    if day < 1:
        raise StoreError(f"--at {day} is not a game day; days count from 1, e.g. --at 2")
    connection = open_copy(copy)
    try:
        [(town_id,)] = connection.execute("SELECT id FROM towns ORDER BY id LIMIT 1").fetchall()
        return rewind_to_day(connection, town_id, day).game_time
    finally:
        connection.close()
