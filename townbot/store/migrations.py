"""Schema migrations, applied in order; PRAGMA user_version records the last one applied. A
migration is SQL, or a coroutine given the connection (inside the migration's transaction)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import aiosqlite

from townbot.store.disk import schema_version, table_names
from townbot.store.errors import StoreError
from townbot.store.towns import pack, unpack


def _apply_sights(part: dict[str, Any], change: list[Any]) -> None:
    """One logged change of an attention part: texts seen at a time, texts forgotten, a step."""
    seen, texts, gone, step = change
    sights = part.setdefault("sights", {})
    for text in gone:
        sights.pop(text, None)
    for text in texts:
        sights[text] = seen
    if step is not None:
        part["last_step"] = step


def _apply_plan(part: dict[str, Any], change: list[Any]) -> None:
    """One logged change of a planning part: blocks [start, stop) replaced, and the fields
    beside the blocks when they changed."""
    head, start, stop, blocks = change
    if head is not None:
        part["day"], part["day_plan"], part["notable"], part["last_revision"] = head
    part.setdefault("blocks", [])[start:stop] = blocks


# Each logged part's key for where its log starts (rows before it belong to an older base).
LOGGED = {"attention": ("sight_log_from", _apply_sights), "planning": ("plan_log_from", _apply_plan)}


async def _fold_logs(db: aiosqlite.Connection, parts: str, log: str | None, keys: str) -> None:
    """Each logged part of `parts` with the rows of its `log` (if any) applied, stored whole."""
    changes: dict[tuple[Any, ...], list[tuple[int, str]]] = {}
    if log is not None:
        async with db.execute(f"SELECT {keys}, agent, part, n, change FROM {log} "
                              "ORDER BY id") as cursor:
            async for *key, agent, part, n, change in cursor:
                changes.setdefault((*key, agent, part), []).append((n, unpack(change)))
        await db.execute(f"DROP TABLE {log}")
    async with db.execute(f"SELECT rowid, {keys}, agent, part, state FROM {parts}") as cursor:
        rows = await cursor.fetchall()
    whole = []
    for rowid, *key, agent, part, state in rows:
        if part not in LOGGED:
            continue
        fields = json.loads(unpack(state))
        start_key, apply = LOGGED[part]
        start = int(fields.pop(start_key, 0))
        for n, change in changes.get((*key, agent, part), []):
            if n >= start:
                apply(fields, json.loads(change))
        whole.append((pack(json.dumps(fields)), rowid))
    await db.executemany(f"UPDATE {parts} SET state = ? WHERE rowid = ?", whole)


async def plain_minds(db: aiosqlite.Connection) -> None:
    """14: each mind part is stored whole whenever it changes. The attention and planning
    parts were stored as bases with their changes logged in part_log (migration 7): every part
    gets its log applied and part_log goes, in the town and in the copies its day checkpoints
    keep (townbot.store.checkpoints)."""
    tables = await table_names(db)
    for parts, log, keys in (("mind_parts", "part_log", "town_id"),
                             ("checkpoint_mind_parts", "checkpoint_part_log", "town_id, day")):
        if parts in tables:
            await _fold_logs(db, parts, log if log in tables else None, keys)


def _sights_by_time(fields: dict[str, Any]) -> dict[str, Any]:
    """An attention part's sights, {text: time seen}, as stored from migration 16 on:
    {time seen: [texts]}."""
    seen_at: dict[str, list[str]] = {}
    for text, seen in fields.pop("sights").items():
        seen_at.setdefault(seen, []).append(text)
    return {**fields, "seen_at": seen_at}


async def sights_by_time(db: aiosqlite.Connection) -> None:
    """16: an attention part keeps its sights by the time they were seen, in the town and in
    the copies its day checkpoints keep (a mind as founded, agents.mind, has seen nothing)."""
    for table in {"mind_parts", "checkpoint_mind_parts"} & await table_names(db):
        async with db.execute(f"SELECT rowid, state FROM {table} WHERE part = 'attention'") \
                as cursor:
            rows = [(rowid, json.loads(unpack(state))) for rowid, state in await cursor.fetchall()]
        await db.executemany(f"UPDATE {table} SET state = ? WHERE rowid = ?",
                             [(pack(json.dumps(_sights_by_time(fields))), rowid)
                              for rowid, fields in rows if "sights" in fields])


MIGRATIONS: list[str | Callable[[aiosqlite.Connection], Awaitable[None]]] = [
    # 1: the town, its residents, memories, objects, conversations, outbox and model usage.
    """
    CREATE TABLE towns (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        start TEXT NOT NULL,
        tick_minutes INTEGER NOT NULL,
        tick INTEGER NOT NULL DEFAULT 0,
        seed INTEGER NOT NULL DEFAULT 0,
        model TEXT NOT NULL,
        embedding_model TEXT NOT NULL,
        embedding_dim INTEGER NOT NULL,
        created_at TEXT NOT NULL DEFAULT (datetime('now'))
    );
    CREATE TABLE agents (
        town_id INTEGER NOT NULL REFERENCES towns(id),
        name TEXT NOT NULL,
        body TEXT NOT NULL,
        mind TEXT NOT NULL,
        PRIMARY KEY (town_id, name)
    );
    CREATE TABLE memories (
        town_id INTEGER NOT NULL REFERENCES towns(id),
        agent TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        created TEXT NOT NULL,
        last_accessed TEXT NOT NULL,
        importance INTEGER NOT NULL,
        embedding BLOB NOT NULL,
        evidence TEXT NOT NULL DEFAULT '[]',
        PRIMARY KEY (town_id, agent, seq)
    );
    CREATE TABLE objects (
        town_id INTEGER NOT NULL REFERENCES towns(id),
        path TEXT NOT NULL,
        state TEXT NOT NULL,
        updated TEXT NOT NULL,
        PRIMARY KEY (town_id, path)
    );
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        town_id INTEGER NOT NULL REFERENCES towns(id),
        started TEXT NOT NULL,
        ended TEXT,
        sector TEXT NOT NULL,
        arena TEXT NOT NULL,
        participants TEXT NOT NULL
    );
    CREATE TABLE utterances (
        conversation_id INTEGER NOT NULL REFERENCES conversations(id),
        seq INTEGER NOT NULL,
        speaker TEXT NOT NULL,
        text TEXT NOT NULL,
        game_time TEXT NOT NULL,
        PRIMARY KEY (conversation_id, seq)
    );
    CREATE TABLE outbox (
        id INTEGER PRIMARY KEY,
        town_id INTEGER NOT NULL REFERENCES towns(id),
        tick INTEGER NOT NULL,
        game_time TEXT NOT NULL,
        channel TEXT NOT NULL,
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        text TEXT NOT NULL,
        emoji TEXT NOT NULL DEFAULT '',
        place TEXT NOT NULL DEFAULT '',
        sent_at TEXT
    );
    CREATE INDEX outbox_unsent ON outbox (town_id, sent_at, id);
    CREATE TABLE llm_usage (
        id INTEGER PRIMARY KEY,
        town_id INTEGER NOT NULL REFERENCES towns(id),
        tick INTEGER NOT NULL,
        game_day INTEGER NOT NULL,
        agent TEXT,
        purpose TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        estimated INTEGER NOT NULL,
        latency_ms REAL NOT NULL,
        outcome TEXT NOT NULL
    );
    """,
    # 2: people in the town: visitors (and residents they take over), the audit log, and
    # the town's pause switch and real-time tick interval.
    """
    ALTER TABLE towns ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE towns ADD COLUMN tick_seconds REAL NOT NULL DEFAULT 10;
    CREATE TABLE visitors (
        town_id INTEGER NOT NULL REFERENCES towns(id),
        person_id TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        body TEXT NOT NULL,
        resident TEXT,
        joined TEXT NOT NULL,
        left_at TEXT,
        PRIMARY KEY (town_id, person_id)
    );
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        town_id INTEGER NOT NULL REFERENCES towns(id),
        at TEXT NOT NULL,
        game_time TEXT NOT NULL,
        person_id TEXT NOT NULL,
        person_name TEXT NOT NULL,
        role TEXT NOT NULL,
        use_case TEXT NOT NULL,
        arguments TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT ''
    );
    """,
    # 3: a mind is stored part by part (planning, places, attention, memory_queue, summary,
    # reflection, reacting, dialogue), each written when it changed; a part's row overrides
    # the keys of agents.mind, the mind as founded (or as saved by schema 2).
    """
    CREATE TABLE mind_parts (
        town_id INTEGER NOT NULL REFERENCES towns(id),
        agent TEXT NOT NULL,
        part TEXT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (town_id, agent, part)
    );
    """,
    # 4: a re-accessed or re-scored memory's new last access and importance are appended to
    # memory_access (the latest row wins) instead of rewriting the memory's row; long mind
    # parts are stored zlib-compressed (see towns.pack).
    """
    CREATE TABLE memory_access (
        id INTEGER PRIMARY KEY,
        town_id INTEGER NOT NULL REFERENCES towns(id),
        agent TEXT NOT NULL,
        seq INTEGER NOT NULL,
        last_accessed TEXT NOT NULL,
        importance INTEGER NOT NULL
    );
    """,
    # 5: an embedding may be stored packed (see memories.pack_vectors): a blob of embedding_dim
    # float32s is raw, any other is packed. Nothing to change in the tables; the version keeps
    # an older townbot from misreading such a blob.
    "",
    # 6: memories lose their (agent, seq) primary key and are read in the order written (id),
    # which keeps each resident's in order of seq; bodies, which change nearly every tick, get
    # a table of their own (agents.body keeps the body as founded).
    """
    CREATE TABLE memories_in_order (
        id INTEGER PRIMARY KEY,
        town_id INTEGER NOT NULL REFERENCES towns(id),
        agent TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        created TEXT NOT NULL,
        last_accessed TEXT NOT NULL,
        importance INTEGER NOT NULL,
        embedding BLOB NOT NULL,
        evidence TEXT NOT NULL DEFAULT '[]'
    );
    INSERT INTO memories_in_order (town_id, agent, seq, kind, text, created, last_accessed,
        importance, embedding, evidence)
        SELECT town_id, agent, seq, kind, text, created, last_accessed, importance, embedding,
               evidence FROM memories ORDER BY town_id, agent, seq;
    DROP TABLE memories;
    ALTER TABLE memories_in_order RENAME TO memories;
    CREATE TABLE bodies (
        town_id INTEGER NOT NULL REFERENCES towns(id),
        agent TEXT NOT NULL,
        body NOT NULL,
        PRIMARY KEY (town_id, agent)
    );
    INSERT INTO bodies (town_id, agent, body) SELECT town_id, name, body FROM agents;
    """,
    # 7: the attention and planning parts were stored as bases with their changes logged in
    # part_log; 8 and 9: packed copies of the memory rows and their accesses, read by resumes.
    # Migrations 14 and 15 fold those logs and drop those copies: a town older than 7 never
    # needs them.
    "",
    "",
    "",
    # 10: memory_access holds one row per resident per commit instead of one per memory: the
    # positions (`seqs`, joined by commas), their last access (`times`, joined by database.UNIT,
    # or one game time for all) and their importances.
    """
    CREATE TABLE memory_access_rows (
        id INTEGER PRIMARY KEY,
        town_id INTEGER NOT NULL REFERENCES towns(id),
        agent TEXT NOT NULL,
        seqs TEXT NOT NULL,
        times TEXT NOT NULL,
        importances TEXT NOT NULL
    );
    INSERT INTO memory_access_rows (id, town_id, agent, seqs, times, importances)
        SELECT id, town_id, agent, CAST(seq AS TEXT), last_accessed, CAST(importance AS TEXT)
        FROM memory_access ORDER BY id;
    DROP TABLE memory_access;
    ALTER TABLE memory_access_rows RENAME TO memory_access;
    """,
    # 11: mind_parts rows are kept in order of part, then agent (a tick rewrites most
    # residents' memory queues: side by side they share pages).
    """
    CREATE TABLE mind_parts_by_part (
        town_id INTEGER NOT NULL REFERENCES towns(id),
        agent TEXT NOT NULL,
        part TEXT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (town_id, agent, part)
    );
    INSERT INTO mind_parts_by_part (town_id, agent, part, state)
        SELECT town_id, agent, part, state FROM mind_parts ORDER BY town_id, part, agent;
    DROP TABLE mind_parts;
    ALTER TABLE mind_parts_by_part RENAME TO mind_parts;
    """,
    # 12: the secret of each town's web page (see townbot.platforms.web): its pages answer only
    # under this token, which moderators can replace. No row: none made yet; an empty token: a
    # moderator closed the page.
    """
    CREATE TABLE IF NOT EXISTS web_links (
        town_id INTEGER PRIMARY KEY REFERENCES towns(id),
        token TEXT NOT NULL,
        changed TEXT NOT NULL
    );
    """,
    # 13: the prompt tokens a server read from its prefix cache, where it reports them
    # (usage.prompt_tokens_details.cached_tokens: OpenAI, vLLM); 0 where it does not.
    """
    ALTER TABLE llm_usage ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
    """,
    plain_minds,  # 14
    # 15: resumes read the memory rows themselves (townbot.store.memories): the packed copies
    # of migrations 8 and 9 are no longer written or read, and being copies, nothing goes with them.
    """
    DROP TABLE IF EXISTS memory_packs;
    DROP TABLE IF EXISTS access_packs;
    """,
    sights_by_time,  # 16
]


async def check_version(db: aiosqlite.Connection, path: str) -> None:
    """A reader cannot migrate: the database must already be at this townbot's version."""
    version = await schema_version(db)
    if version != len(MIGRATIONS):
        older = "older" if version < len(MIGRATIONS) else "newer"
        raise StoreError(f"{path} has schema version {version}, {older} than this "
                         f"townbot ({len(MIGRATIONS)}); "
                         + ("open it once with `townbot sim --hours 0.2` or `townbot run` to "
                            "upgrade it" if older == "older" else "upgrade townbot to read it"))


async def migrate(db: aiosqlite.Connection, path: str) -> None:
    """Apply every migration newer than the database, each in its own transaction."""
    version = await schema_version(db)
    if version > len(MIGRATIONS):
        raise StoreError(f"{path} has schema version {version}, newer than this "
                         f"townbot ({len(MIGRATIONS)}); upgrade townbot to open it")
    for number in range(version + 1, len(MIGRATIONS) + 1):
        script = MIGRATIONS[number - 1]
        await db.execute("BEGIN IMMEDIATE")
        try:
            if callable(script):
                await script(db)
            else:
                for statement in filter(str.strip, script.split(";")):
                    await db.execute(statement)
            await db.execute(f"PRAGMA user_version = {number}")
        except BaseException:
            await db.execute("ROLLBACK")
            raise
        await db.execute("COMMIT")
