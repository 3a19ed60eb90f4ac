"""Two offline game days of the whole town, checked through `townbot export` (issue 4's
done-when): reflections with real evidence, plans at three levels, reactions to people and
objects, two-sided conversations, and the party and the candidacy spreading by word of mouth."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import open_engine
from party_measures import NEWS, accepted, at_party, duplicate_observations, tellers

from townbot.cli import main


@pytest.fixture(scope="module")
def export(world, tmp_path_factory):
    db = tmp_path_factory.mktemp("two-days") / "town.db"

    async def run() -> None:
        engine = await open_engine(world, db)
        for _ in range(engine.clock.ticks_for(days=2)):
            await engine.tick()
        await engine.store.close()

    asyncio.run(run())
    return db


@pytest.fixture(scope="module")
def data(export):
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["export", "--db", str(export)]) == 0
    return json.loads(out.getvalue())


def test_every_resident_reflected_citing_real_memories(data):
    for agent in data["agents"]:
        reflections = agent["memories"]["reflection"]
        assert reflections, agent["name"]
        ids = {m["id"] for kind in agent["memories"].values() for m in kind}
        for reflection in reflections:
            assert reflection["evidence"] and set(reflection["evidence"]) <= ids
            assert all(e < reflection["id"] for e in reflection["evidence"]), "cites the past"


def test_plans_are_stored_at_three_levels(data):
    for agent in data["agents"]:
        plans = [m["text"] for m in agent["memories"]["plan"]]
        assert any("'s plan for" in p for p in plans), agent["name"]
        assert any("'s schedule for" in p for p in plans), agent["name"]
        assert any("'s steps for" in p for p in plans), agent["name"]


def test_residents_react_to_each_other_and_to_objects(data):
    speech = [e for e in data["events"] if e["kind"] == "speech"]
    assert len({e["actor"] for e in speech}) >= 15
    mishaps = [e for e in data["events"] if e["kind"] == "object"]
    assert mishaps, "appliances in use now and then go wrong"
    reactions = [m for a in data["agents"] for m in a["memories"]["observation"]
                 if "reacted to 'The " in m["text"]]
    assert reactions, "someone deals with a burning stove or a leak"


def test_conversations_have_both_sides(data):
    assert len(data["conversations"]) >= 20
    for talk in data["conversations"]:
        assert {u["speaker"] for u in talk["utterances"]} == set(talk["participants"])


@pytest.mark.parametrize(("secret", "source"), [("Valentine", "Isabella Rodriguez"),
                                                 ("mayor", "Sam Moore")])
def test_news_spreads_by_conversation(data, secret, source):
    heard = {a["name"] for a in data["agents"] if a["name"] != source
             for m in a["memories"]["conversation"]
             if secret in m["text"] and "(heard from" in m["text"]}
    assert len(heard - {"Isabella Rodriguez", "Sam Moore"}) >= 2, heard


def test_guests_who_heard_of_the_party_come_to_it(data):
    guests = {e["actor"] for e in data["events"]
              if e["channel"] == "hobbs-cafe" and e["kind"] == "action"
              and "2023-02-14 17:00" <= e["time"] < "2023-02-14 19:00"
              and "Valentine's Day party" in e["text"] and e["actor"] != "Isabella Rodriguez"}
    told = {a["name"] for a in data["agents"]
            for m in a["memories"]["conversation"]
            if "Valentine" in m["text"] and "(heard from" in m["text"]
            and m["created"] < "2023-02-14 17:00"}
    assert guests, "somebody besides the host comes to the party"
    assert guests <= told | {"Isabella Rodriguez"}, "only people who were invited turn up"


def test_everyone_who_accepted_before_five_is_at_the_party(data):
    """An invitation accepted on the 13th or earlier on the 14th reaches the plan in time."""
    said_yes = accepted(data, "2023-02-14 17:00")
    assert len(said_yes) >= 3, said_yes
    assert set(said_yes) <= at_party(data), sorted(set(said_yes) - at_party(data))


@pytest.mark.parametrize("news", sorted(NEWS))
def test_someone_passes_each_piece_of_news_to_more_than_one_listener(data, news):
    keyword, source = NEWS[news]
    relayed = {s: t for s, t in tellers(data, keyword).items() if s != source}
    assert max(map(len, relayed.values()), default=0) >= 2, relayed


def test_an_unchanged_sight_is_not_stored_again(data):
    repeats, agent_days = duplicate_observations(data)
    # 14.5 per agent-day when every sight was stored again each hour: at most a tenth of that
    assert repeats / agent_days <= 1.45, repeats
