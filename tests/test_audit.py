"""The audit log commits with the change it records: a process killed at any statement of a use
case's write, or right after its COMMIT, leaves the change with its audit row or neither; and
moderator commands turned away are audited too."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import open_engine
from discord_harness import connect, fake_fixture, server_fixture  # noqa: F401  (fixtures)

from townbot.store.database import TickWrite
from townbot.town.service import Person, TownService

ALEX = Person("test:alex", "Alex")
MOD = Person("test:mod", "Mo", moderator=True)
STATEMENTS = 8  # more than any of these writes has (3 to 5): the last kill points are "after COMMIT"


class Killed(BaseException):
    """The process dies here: nothing after it runs (not an Exception: nobody may catch it)."""


def on_disk(db: Path, sql: str, *values: object) -> list[tuple]:
    """What a fresh process would find in the database."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as raw:
        return raw.execute(sql, values).fetchall()


def die_at(monkeypatch, statement: int) -> list[int]:
    """Kill the next use case's write before its `statement`-th step, or after its COMMIT when
    it has fewer; returns the number of steps the write had (once it ran)."""
    steps_seen: list[int] = []
    run = TickWrite.run

    async def killed(_db: object) -> None:
        raise Killed()

    async def dying(write: TickWrite, db: object) -> None:
        steps_seen.append(len(write.steps))
        if statement < len(write.steps):
            write.steps = [*write.steps[:statement], killed]
        await run(write, db)
        raise Killed()

    monkeypatch.setattr(TickWrite, "run", dying)
    return steps_seen


USE_CASES = {
    "whisper": (lambda town: town.whisper(ALEX, "Klaus", "You KILLTEST want tea"),
                "SELECT COUNT(*) FROM memories WHERE text LIKE '%KILLTEST%'"),
    "set": (lambda town: town.set_object(ALEX, "<Hobbs Cafe: cafe: cafe customer seating>",
                                         "KILLTEST wobbly"),
            "SELECT COUNT(*) FROM objects WHERE state LIKE '%KILLTEST%'"),
    "pause": (lambda town: town.pause(MOD), "SELECT COUNT(*) FROM towns WHERE paused = 1"),
    "announce": (lambda town: town.announce(MOD, "KILLTEST the library opens at noon"),
                 "SELECT COUNT(*) FROM outbox WHERE text LIKE '%KILLTEST%'"),
}


@pytest.mark.parametrize("statement", range(STATEMENTS))
@pytest.mark.parametrize("case", list(USE_CASES))
async def test_a_kill_at_any_point_leaves_the_change_with_its_audit_row_or_neither(
        world, tmp_path, monkeypatch, case, statement):
    db = tmp_path / "town.db"
    engine = await open_engine(world, db)
    use_case, changed = USE_CASES[case]
    steps = die_at(monkeypatch, statement)
    try:
        with pytest.raises(Killed):
            await use_case(TownService(engine))
    finally:
        monkeypatch.undo()
        await engine.store.close()
    if statement > steps[0]:
        return  # the same as a kill after COMMIT, tried already
    done = on_disk(db, changed)[0][0] > 0
    audited = on_disk(db, "SELECT COUNT(*) FROM audit_log WHERE use_case = ? AND outcome = 'ok'",
                      case)[0][0]
    assert audited == int(done), f"killed at statement {statement} of {steps[0]}: change " \
                                 f"{'saved' if done else 'lost'}, {audited} audit rows"
    assert done == (statement >= steps[0]), "only a COMMIT saves it"


async def test_a_use_case_that_changes_nothing_and_a_refusal_are_audited_alone(world, tmp_path):
    engine = await open_engine(world, tmp_path / "town.db")
    town = TownService(engine)
    await town.status(ALEX)
    with pytest.raises(Exception, match="only moderators may use pause"):
        await town.pause(ALEX)
    rows = await engine.store.audit_rows(engine.town.id)
    assert [(r["use_case"], r["outcome"]) for r in rows] == [("status", "ok"),
                                                             ("pause", "refused")]
    await engine.store.close()


async def test_a_moderator_command_turned_away_on_discord_is_audited(server):
    exchange = await server.slash("mod pause")
    assert "only moderators may use /mod pause" in exchange.text
    engine = server.town.engine
    rows = await engine.store.audit_rows(engine.town.id)
    refused = [r for r in rows if r["outcome"] == "refused"]
    assert [(r["use_case"], r["person_id"]) for r in refused] == [
        ("mod pause", f"discord:{server.ada}")]
    assert "only moderators may use /mod pause" in refused[0]["detail"]
    assert not engine.town.paused
