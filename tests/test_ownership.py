"""Who may change what: only the engine and the mind write minds and bodies, and a change that
fails (at its commit or before) leaves the town in memory exactly as last committed, so the
next use case and the next tick run."""

from __future__ import annotations

import ast
import json
from dataclasses import asdict
from pathlib import Path

import pytest
from conftest import open_engine

from townbot.store import database
from townbot.store.ticks import TickWrite
from townbot.town.engine import Engine
from townbot.town.service import Person, TownService

PACKAGE = Path(__file__).resolve().parents[1] / "townbot"
# The engine, its commands and the body change bodies; the mind changes itself.
WRITERS = ("town/engine.py", "town/commands.py", "town/body.py", "mind/")
MIND_OR_BODY = ("mind", "body", "minds[", "bodies[", ".state")

MOD = Person("test:mod", "Mo", moderator=True)
ALEX = Person("test:alex", "Alex")


def assigned_attributes(tree: ast.AST) -> list[ast.Attribute]:
    targets: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets += node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets.append(node.target)
    flat: list[ast.expr] = []
    while targets:
        target = targets.pop()
        if isinstance(target, ast.Tuple | ast.List):
            targets += target.elts
        else:
            flat.append(target)
    return [t for t in flat if isinstance(t, ast.Attribute)]


def test_no_module_outside_the_engine_and_the_mind_writes_a_mind_or_a_body():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(WRITERS):
            continue
        for target in assigned_attributes(ast.parse(path.read_text(encoding="utf-8"))):
            owner = ast.unparse(target.value)
            if any(word in owner for word in MIND_OR_BODY):
                offenders.append(f"{relative}:{target.lineno}: {ast.unparse(target)} = ...")
    assert not offenders, "only town/engine.py, town/commands.py and mind/ may write minds " \
        "and bodies:\n" + "\n".join(offenders)


def in_memory(engine: Engine) -> str:
    """The town as held in memory: minds, memories, bodies, objects, people, the clock."""
    return json.dumps({
        "minds": {name: mind.state.to_dict() for name, mind in engine.minds.items()},
        "memories": {name: [asdict(m) for m in mind.stream.memories]
                     for name, mind in engine.minds.items()},
        "bodies": {name: body.to_dict() for name, body in engine.bodies.items()},
        "objects": engine.objects, "people": sorted(engine.people), "tick": engine.clock.tick,
    }, sort_keys=True, default=str)


class CommitFails:
    """The next commit fails as one with text Python cannot encode did (issue 16)."""

    def __init__(self, engine: Engine, monkeypatch) -> None:
        self.store = engine.store
        self.write = database.tick_write
        monkeypatch.setattr(database, "tick_write", self._fail_once)
        self.failed = False

    def _fail_once(self, *args) -> TickWrite:
        if not self.failed:
            self.failed = True
            self.write(*args)  # the tick's rows are made, then it fails
            "\ud800".encode()
        return self.write(*args)


@pytest.fixture
async def town(world, tmp_path):
    engine = await open_engine(world, tmp_path / "town.db")
    service = TownService(engine)
    for _ in range(7):  # 07:00 -> 08:10: the cafe is open and Isabella is at work
        await service.tick()
    await service.join(ALEX, "Alex", "a traveller", "Hobbs Cafe")
    yield service
    await engine.store.close()


async def test_a_use_case_whose_commit_fails_leaves_the_town_as_it_was_and_the_next_one_runs(
        town: TownService, monkeypatch):
    engine = town.engine
    before = in_memory(engine)
    stored = await engine.store.agents(engine.town.id)
    CommitFails(engine, monkeypatch)
    with pytest.raises(UnicodeEncodeError):
        await town.say(ALEX, "Isabella, is the party on Valentine's Day?")
    assert in_memory(engine) == before, "no memory, plan or body change survives the failure"
    assert await engine.store.agents(engine.town.id) == stored

    answered = await town.say(ALEX, "Isabella, is the party on Valentine's Day?")
    assert answered.data["reply"], "the next use case runs and commits"
    listeners = await engine.store.memories(engine.town.id, "Isabella Rodriguez")
    assert any("Valentine" in m.memory.text for m in listeners)
    await town.tick()


async def test_a_tick_whose_commit_fails_is_rolled_back_and_the_next_tick_runs(
        town: TownService, monkeypatch):
    engine = town.engine
    before, tick = in_memory(engine), engine.clock.tick
    CommitFails(engine, monkeypatch)
    with pytest.raises(UnicodeEncodeError):
        await town.tick()
    assert in_memory(engine) == before and engine.clock.tick == tick
    events = await town.tick()
    assert engine.clock.tick == tick + 1 and events
    assert (await engine.store.town()).tick == tick + 1


async def test_a_use_case_that_fails_before_its_commit_changes_nothing(town: TownService,
                                                                       monkeypatch):
    engine = town.engine
    before = in_memory(engine)

    async def server_gone(*args, **kwargs):
        raise RuntimeError("the model went away mid-use-case")

    monkeypatch.setattr("townbot.town.engine.dialogue.next_line", server_gone)
    with pytest.raises(RuntimeError):  # listeners had already heard the words
        await town.say(ALEX, "Isabella, hello!")
    assert in_memory(engine) == before
