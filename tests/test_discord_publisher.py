"""The publisher: the outbox reaches Discord in order, paced, once, whatever Discord does."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import discord
import pytest
from discord_harness import Crash, FakeTime, ScriptedOutlet, http_error

from townbot.platforms.discord.posts import split_text
from townbot.platforms.discord.publisher import RATE, Publisher, Seen, classify
from townbot.platforms.discord.store import Delivery, DiscordStore, WaitingWords
from townbot.store.database import Store, TickChanges
from townbot.world.events import TownEvent

CAFE, PARK = "hobbs-cafe", "johnson-park"


async def new_town(path: Path) -> tuple[Store, int]:
    store = await Store.open(path)
    town = await store.create_town("Smallville", "2023-02-13 07:00", 10, 0, "offline", "hash", 8,
                                   {}, {})
    return store, town.id


async def write(store: Store, town_id: int, tick: int, events: list[TownEvent]) -> None:
    await store.save_tick(TickChanges(town_id=town_id, next_tick=tick + 1, tick=tick,
                                      events=events))


def act(channel: str, actor: str, text: str, minute: int = 0) -> TownEvent:
    return TownEvent(f"2023-02-13 07:{minute:02d}", channel, "action", actor, text, "☕",
                     "cafe: counter")


def speech(channel: str, actor: str, text: str) -> TownEvent:
    return TownEvent("2023-02-13 07:00", channel, "speech", actor, text, "💬", "cafe")


async def busy_day(store: Store, town_id: int) -> None:
    """Three channels, ticks of actions and conversations, one speech too long for a message."""
    long_speech = " ".join(f"word{i}" for i in range(700))
    for tick in range(4):
        events = [act(CAFE, "Isabella Rodriguez", f"is serving coffee {tick}"),
                  act(CAFE, "Klaus Mueller", f"is reading {tick}"),
                  speech(CAFE, "Isabella Rodriguez", f"Good morning, Klaus ({tick})!"),
                  speech(CAFE, "Klaus Mueller", f"Morning! ({tick})"),
                  act(PARK, "Sam Moore", f"is walking the dog {tick}"),
                  speech(PARK, "Sam Moore", long_speech if tick == 2 else f"What a day {tick}"),
                  act("town-hall", "Town hall", f"notice {tick}")]
        await write(store, town_id, tick, events)


async def publisher(path: Path, town_id: int, outlet: ScriptedOutlet, clock: FakeTime) -> Publisher:
    discord_store = await DiscordStore.open(path, town_id)
    return Publisher(discord_store, outlet, "Smallville", clock=clock, sleep=clock.sleep)


async def crash_process(first: Publisher) -> None:
    """Drain until the outlet's fault crashes the process; the process is then gone, so
    whatever it was doing stops there and its database closes."""
    with pytest.raises(Crash):
        await first.drain()
    await first.stop(grace=0)
    await first.store.close()


async def clean_run(tmp_path: Path) -> ScriptedOutlet:
    """What Discord shows when nothing goes wrong: the reference for the failure tests."""
    store, town_id = await new_town(tmp_path / "clean.db")
    await busy_day(store, town_id)
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    posting = await publisher(tmp_path / "clean.db", town_id, outlet, clock)
    await posting.drain()
    await posting.store.close()
    await store.close()
    return outlet


async def unsent(store: Store) -> list[int]:
    async with store.db.execute("SELECT id FROM outbox WHERE sent_at IS NULL") as cursor:
        return [row[0] for row in await cursor.fetchall()]


async def test_speech_goes_under_the_speakers_name_and_a_ticks_actions_share_one_message(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [act(CAFE, "Isabella Rodriguez", "is opening the cafe"),
                                    act(CAFE, "**Klaus**", "is reading _a_ paper @everyone"),
                                    speech(CAFE, "Isabella Rodriguez", "Coffee, Klaus?"),
                                    act(CAFE, "Klaus Mueller", "is nodding")])
    await write(store, town_id, 1, [act(CAFE, "Klaus Mueller", "is drinking coffee", 10)])
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    posting = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await posting.drain()

    posts = outlet.posts[CAFE]
    assert [p.username for p in posts] == ["Smallville", "Isabella Rodriguez", "Smallville",
                                           "Smallville"]
    assert posts[0].content == ("`07:00` ☕ **Isabella Rodriguez** is opening the cafe · "
                                "*cafe: counter*\n`07:00` ☕ **\\*\\*Klaus\\*\\*** is reading "
                                "\\_a\\_ paper @\u200beveryone · *cafe: counter*"), \
        "no mention pill either"
    assert posts[1].content == "Coffee, Klaus?"
    assert "is nodding" in posts[2].content, "an action after speech starts a new message"
    assert "`07:10`" in posts[3].content, "the next tick is a message of its own"
    assert await unsent(store) == []
    await posting.store.close()
    await store.close()


async def test_a_long_speech_is_split_at_2000_characters_and_no_word_is_lost(tmp_path):
    words = [f"word{i}" for i in range(600)]
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(PARK, "Sam Moore", " ".join(words))])
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    posting = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await posting.drain()

    parts = outlet.contents(PARK)
    assert len(parts) == 3 and all(len(p) <= 2000 for p in parts)
    assert " ".join(parts).split() == words
    assert {p.username for p in outlet.posts[PARK]} == {"Sam Moore"}
    await posting.store.close()
    await store.close()


def test_splitting_prefers_line_breaks_and_cuts_words_only_when_it_must():
    text = "a" * 1500 + "\n" + "b" * 1000
    assert split_text(text) == ["a" * 1500, "b" * 1000]
    assert split_text("x" * 4500) == ["x" * 2000, "x" * 2000, "x" * 500]


async def test_429s_5xx_and_disconnects_delay_posts_but_lose_and_repeat_none(tmp_path):
    expected = await clean_run(tmp_path)
    store, town_id = await new_town(tmp_path / "t.db")
    await busy_day(store, town_id)
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    outlet.faults = ["429", "500", "500 after", "disconnect", "disconnect after", "history 500",
                     "ok", "500 after", "gone", "429", "disconnect after", "ok", "500"]
    posting = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await posting.drain()

    assert outlet.faults == [], "every fault was met"
    for channel in (CAFE, PARK, "town-hall"):
        assert outlet.contents(channel) == expected.contents(channel), channel
    assert outlet.repairs == 1, "a deleted channel is made again"
    assert await unsent(store) == []
    assert posting.counts["rate"] == 2 and posting.counts["uncertain"] >= 6
    await posting.store.close()
    await store.close()


@pytest.mark.parametrize("crash_at", [0, 3, 8, 14])
async def test_a_restart_after_discord_accepted_a_post_loses_and_repeats_nothing(tmp_path, crash_at):
    expected = await clean_run(tmp_path)
    store, town_id = await new_town(tmp_path / "t.db")
    await busy_day(store, town_id)
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)  # Discord's side survives the restart
    outlet.faults = ["ok"] * crash_at + ["crash after"]
    first = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await crash_process(first)
    waiting = await unsent(store)
    assert waiting, "the post Discord accepted was not yet marked sent"

    second = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await second.drain()
    for channel in (CAFE, PARK, "town-hall"):
        assert outlet.contents(channel) == expected.contents(channel), channel
    assert await unsent(store) == []
    await second.store.close()
    await store.close()


async def test_a_restart_between_the_parts_of_a_long_post_sends_only_the_missing_parts(tmp_path):
    words = [f"word{i}" for i in range(600)]
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(PARK, "Sam Moore", " ".join(words))])
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    outlet.faults = ["ok", "crash after"]  # the second of three parts lands, then the crash
    first = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    with pytest.raises(Crash):
        await first.drain()
    await first.store.close()

    second = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await second.drain()
    assert len(outlet.contents(PARK)) == 3
    assert " ".join(outlet.contents(PARK)).split() == words
    await second.store.close()
    await store.close()


@pytest.mark.parametrize("crash", ["crash before", "crash after"])
async def test_a_crash_around_a_single_part_post_sends_it_exactly_once(tmp_path, crash):
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "Coffee is ready!")])
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)  # Discord's side survives the restart
    outlet.faults = [crash]
    first = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await crash_process(first)
    assert await unsent(store), "not marked sent before Discord's answer"
    second = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await second.drain()
    assert outlet.contents(CAFE) == ["Coffee is ready!"]
    assert await unsent(store) == []
    await second.store.close()
    await store.close()


def within_limits(times: list[float], count: int, seconds: float) -> bool:
    """No `count + 1` sends inside any `seconds` window."""
    ordered = sorted(times)
    return all(ordered[i + count] - ordered[i] >= seconds for i in range(len(ordered) - count))


async def test_pacing_stays_inside_discords_limits_and_wastes_no_time(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    for tick in range(70):
        await write(store, town_id, tick, [speech(CAFE, "Isabella Rodriguez", f"cafe {tick}"),
                                           speech(PARK, "Sam Moore", f"park {tick}")])
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    outlet.faults = ["ok"] * 20 + ["429"]
    posting = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await posting.drain()

    for channel in (CAFE, PARK):
        times = outlet.times[channel]
        assert len(times) == 70
        assert within_limits(times, 5, 2.0), "at most 5 webhook posts per 2 s"
        assert within_limits(times, 30, 60.0), "at most 30 posts per minute in a channel"
    everything = outlet.times[CAFE] + outlet.times[PARK]
    assert within_limits(everything, 40, 1.0)
    # 70 posts need two full minutes of the per-minute limit; the pacer adds little to that.
    assert 120.0 <= max(everything) <= 128.0
    await posting.store.close()
    await store.close()


async def test_speech_a_visitor_wrote_in_the_channel_is_not_posted_again(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    posting = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await posting.store.expect_echo(CAFE, "Ada", "Hello   Isabella!")
    await write(store, town_id, 0, [speech(CAFE, "Ada", "Hello Isabella!"),
                                    speech(CAFE, "Isabella Rodriguez", "Welcome, Ada!"),
                                    speech(CAFE, "Ada", "Hello Isabella!")])
    await posting.drain()

    assert [(p.username, p.content) for p in outlet.posts[CAFE]] == [
        ("Isabella Rodriguez", "Welcome, Ada!"), ("Ada", "Hello Isabella!")], \
        "only the line the visitor wrote on Discord is left out"
    assert await unsent(store) == []
    await posting.store.close()
    await store.close()


async def test_a_post_discord_refuses_for_good_is_recorded_and_the_rest_still_goes(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "first"),
                                    speech(CAFE, "Isabella Rodriguez", "second")])
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    outlet.faults = ["400"]
    posting = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await posting.drain()

    assert outlet.contents(CAFE) == ["second"]
    rejected = await posting.store.rejected()
    assert len(rejected) == 1 and "refused" in rejected[0][1]
    await posting.store.close()
    await store.close()


async def running_publisher(path: Path, town_id: int, poll: float,
                            outlet: ScriptedOutlet | None = None) -> Publisher:
    """A started publisher on real time, polling every `poll` seconds."""
    discord_store = await DiscordStore.open(path, town_id)
    posting = Publisher(discord_store, outlet or ScriptedOutlet(FakeTime()), "Smallville",
                        poll=poll)
    posting.start()
    return posting


async def until(condition, seconds: float = 10.0) -> None:
    """Wait on the loop until `condition()` holds, up to `seconds` (a busy machine is slow)."""
    for _ in range(int(seconds * 100)):
        if condition():
            return
        await asyncio.sleep(0.01)


async def test_the_running_publisher_posts_new_rows_when_woken(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    posting = await running_publisher(tmp_path / "t.db", town_id, poll=60)
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "Hello!")])
    posting.wake()
    await until(lambda: posting.outlet.contents(CAFE))
    assert posting.outlet.contents(CAFE) == ["Hello!"], "posted long before the 60 s poll"
    await posting.stop()
    await posting.store.close()
    await store.close()


@pytest.mark.parametrize(("headers", "wait"), [({"Retry-After": "12.5"}, 12.5), ({}, 5.0),
                                               ({"Retry-After": "soon"}, 5.0), (None, 5.0)])
def test_a_429_waits_as_long_as_discord_asks_else_five_seconds(headers, wait):
    fields = {"status": 429, "reason": "slow down"} | ({} if headers is None else
                                                        {"headers": headers})
    error = discord.HTTPException(type("Response", (), fields)(), "rate limited")
    assert classify(error) == (RATE, wait)


async def test_the_running_publisher_finds_new_rows_at_each_poll_unwoken(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    posting = await running_publisher(tmp_path / "t.db", town_id, poll=0.05)
    for tick, text in enumerate(("Hello!", "Again!")):  # never woken: two polls must find them
        await write(store, town_id, tick, [speech(CAFE, "Isabella Rodriguez", text)])
        await until(lambda text=text: text in posting.outlet.contents(CAFE))
    assert posting.outlet.contents(CAFE) == ["Hello!", "Again!"]
    await posting.stop()
    await posting.store.close()
    await store.close()


@pytest.mark.parametrize(("status", "kind"), [(500, "uncertain"), (501, "uncertain"),
                                              (503, "uncertain"), (400, "rejected")])
def test_any_5xx_may_have_landed_and_is_tried_again_a_4xx_is_refused(status, kind):
    assert classify(http_error(discord.HTTPException, status)) == (kind, 0.0)


class RecordingTime(FakeTime):
    def __init__(self) -> None:
        super().__init__()
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await super().sleep(seconds)


async def test_a_read_waits_for_another_workers_transaction_and_never_sees_it_undone(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "Coffee is ready!")])
    discord_store = await DiscordStore.open(tmp_path / "t.db", town_id)
    [row] = await discord_store.unsent(CAFE)
    inside, release = asyncio.Event(), asyncio.Event()

    async def mark_then_fail() -> None:
        await discord_store._mark_sent([row.id])
        inside.set()
        await release.wait()
        raise OSError("the disk went away")

    failing = asyncio.create_task(discord_store._transaction(mark_then_fail))
    await inside.wait()
    counting = asyncio.create_task(discord_store.backlog())
    await asyncio.wait([counting], timeout=0.5)
    assert not counting.done(), "a read waits while another worker's transaction is open"
    release.set()
    with pytest.raises(OSError):
        await failing
    assert await counting == 1, "the mark was rolled back: the post is still to be sent"
    await discord_store.close()
    await store.close()


async def test_failures_back_off_doubling_from_one_second(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "Coffee is ready!")])
    clock = RecordingTime()
    outlet = ScriptedOutlet(clock)
    outlet.faults = ["500", "500", "500"]
    posting = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await posting.drain()
    assert [s for s in clock.sleeps if s >= 0.5] == [1.0, 2.0, 4.0]
    assert outlet.contents(CAFE) == ["Coffee is ready!"]
    await posting.store.close()
    await store.close()


@pytest.mark.parametrize("other", ["Good morning!", "Something else"])
async def test_a_crash_before_a_line_lands_sends_it_even_beside_look_alike_posts(tmp_path, other):
    """The look for a post that may have landed reads only after the last confirmed one, and
    needs both the name and the text: an earlier same line, or another line under the same
    name, is not it."""
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "Good morning!")])
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    first = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await first.drain()
    await write(store, town_id, 1, [speech(CAFE, "Isabella Rodriguez", "Good morning!")])
    outlet.faults = ["crash before"]
    await crash_process(first)
    if other != "Good morning!":  # another line under her name landed meanwhile
        outlet.posts[CAFE].append(Seen(10**18, "Isabella Rodriguez", other))
    second = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await second.drain()
    assert outlet.contents(CAFE).count("Good morning!") == 2
    await second.store.close()
    await store.close()


class HeldOutlet(ScriptedOutlet):
    """Posts to one channel wait until released; the rest go at once."""

    def __init__(self, held: str) -> None:
        super().__init__(FakeTime())
        self.held, self.release, self.waiting = held, asyncio.Event(), 0

    async def post(self, channel: str, content: str, username: str) -> int:
        if channel == self.held:
            self.waiting += 1
            await self.release.wait()
        return await super().post(channel, content, username)


async def test_a_held_channel_delays_no_other_and_many_wakes_start_one_worker(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    outlet = HeldOutlet(CAFE)
    posting = await running_publisher(tmp_path / "t.db", town_id, poll=60, outlet=outlet)
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "Coffee!"),
                                    speech(PARK, "Sam Moore", "Lovely day!")])
    posting.wake()
    await until(lambda: outlet.contents(PARK) and outlet.waiting)
    assert outlet.contents(PARK) == ["Lovely day!"], "the park did not wait for the cafe"
    await write(store, town_id, 1, [speech(PARK, "Sam Moore", "Still lovely!")])
    posting.wake()  # the cafe's worker is still held: the park's new line must not wait for it
    await until(lambda: len(outlet.contents(PARK)) == 2)
    assert outlet.contents(PARK) == ["Lovely day!", "Still lovely!"]
    for _ in range(5):
        posting.wake()
        await asyncio.sleep(0.02)
    outlet.release.set()
    await until(lambda: outlet.contents(CAFE))
    await asyncio.sleep(0.2)
    assert outlet.contents(CAFE) == ["Coffee!"] and outlet.waiting == 1, "one worker, one post"
    await posting.stop()
    await posting.store.close()
    await store.close()


async def test_stop_lets_a_post_under_way_finish_within_the_grace_and_no_longer(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    outlet = HeldOutlet(CAFE)
    posting = await running_publisher(tmp_path / "t.db", town_id, poll=60, outlet=outlet)
    discord_store = posting.store
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "Coffee!"),
                                    speech(CAFE, "Klaus Mueller", "Tea?")])
    posting.wake()
    await until(lambda: outlet.waiting)
    asyncio.get_running_loop().call_later(0.1, outlet.release.set)
    await asyncio.wait_for(posting.stop(grace=5), 10)
    assert outlet.contents(CAFE) == ["Coffee!"], "the post under way finished, no other began"
    await write(store, town_id, 1, [speech(CAFE, "Isabella Rodriguez", "Tea!")])
    outlet.release = asyncio.Event()  # never released: stop must give up after the grace
    again = Publisher(discord_store, outlet, "Smallville", poll=60)
    again.start()
    again.wake()
    await until(lambda: outlet.waiting == 2)
    await asyncio.wait_for(again.stop(grace=0.1), 5)
    assert again._task.done() and all(t.done() for t in again._workers.values())
    await discord_store.close()
    await store.close()


async def test_after_a_visitors_own_line_the_running_publisher_posts_the_next_at_once(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    posting = await running_publisher(tmp_path / "t.db", town_id, poll=60)
    await posting.store.expect_echo(CAFE, "Ada", "Hello Isabella!")
    await write(store, town_id, 0, [speech(CAFE, "Ada", "Hello Isabella!"),
                                    speech(CAFE, "Isabella Rodriguez", "Welcome, Ada!")])
    posting.wake()
    await until(lambda: posting.outlet.contents(CAFE))
    assert posting.outlet.contents(CAFE) == ["Welcome, Ada!"], "not held until the 60 s poll"
    await posting.stop()
    await posting.store.close()
    await store.close()


class WatchedOutlet(ScriptedOutlet):
    """Counts reads of a channel's history and names the channels made again; its first
    `refused_reads` history reads get a 429."""

    def __init__(self, clock: FakeTime, refused_reads: int = 0) -> None:
        super().__init__(clock)
        self.history_reads, self.refused_reads, self.repaired = 0, refused_reads, []

    async def recent(self, channel: str, after: int | None) -> list[Seen]:
        self.history_reads += 1
        if self.history_reads <= self.refused_reads:
            raise http_error(discord.HTTPException, 429, retry_after=2.0)
        return await super().recent(channel, after)

    async def repair(self, channel: str) -> None:
        self.repaired.append(channel)
        await super().repair(channel)


async def test_each_failure_waits_as_it_deserves_and_only_a_send_that_may_have_landed_is_looked_for(
        tmp_path, caplog):
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "Coffee is ready!")])
    clock = RecordingTime()
    outlet = WatchedOutlet(clock)
    outlet.faults = ["429", "gone", "500"]
    posting = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    with caplog.at_level(logging.WARNING, logger="townbot.platforms.discord.publisher"):
        await posting.drain()
    assert outlet.contents(CAFE) == ["Coffee is ready!"]
    assert [s for s in clock.sleeps if s >= 0.5] == [3.0, 4.0], \
        "Retry-After for the 429, no wait for a channel made again, then the third backoff"
    assert outlet.repaired == [CAFE], "the deleted channel is made again, once"
    assert outlet.history_reads == 1, "a 429 or a deleted channel means nothing landed; a 5xx may"
    first = caplog.records[0].getMessage()
    assert first.startswith("#hobbs-cafe: rate (") and "fake failure" in first
    assert first.endswith("; trying again in 3 s")
    await posting.store.close()
    await store.close()


async def test_a_refused_history_read_after_a_crash_is_tried_again_not_skipped(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "Coffee is ready!")])
    clock = FakeTime()
    outlet = WatchedOutlet(clock, refused_reads=1)
    outlet.faults = ["crash after"]
    first = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await crash_process(first)
    second = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await second.drain()
    assert outlet.contents(CAFE) == ["Coffee is ready!"], "looked for again, found, not repeated"
    await second.store.close()
    await store.close()


async def test_a_refused_last_post_leaves_the_channel_at_its_last_landed_message(tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "first"),
                                    speech(CAFE, "Isabella Rodriguez", "second")])
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    outlet.faults = ["ok", "400"]
    posting = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await posting.drain()
    assert outlet.contents(CAFE) == ["first"]
    assert await posting.store.delivery(CAFE) == Delivery(outlet.posts[CAFE][0].id), \
        "no post under way, and the next look for a landed post starts after 'first'"
    await posting.store.close()
    await store.close()


class BuggyOutlet(ScriptedOutlet):
    """The first post fails with a bug of ours, not a Discord error."""

    async def post(self, channel: str, content: str, username: str) -> int:
        if not self.posts[channel] and not getattr(self, "failed", False):
            self.failed = True
            raise ValueError("a bug")
        return await super().post(channel, content, username)


async def test_an_unreadable_outbox_and_a_dead_worker_are_logged_and_posting_goes_on(tmp_path,
                                                                                     caplog):
    store, town_id = await new_town(tmp_path / "t.db")
    discord_store = await DiscordStore.open(tmp_path / "t.db", town_id)
    readable = discord_store.pending_channels
    reads = 0

    async def locked_once() -> list[str]:
        nonlocal reads
        reads += 1
        if reads == 1:
            raise sqlite3.OperationalError("database is locked")
        return await readable()

    discord_store.pending_channels = locked_once  # type: ignore[method-assign]
    outlet = BuggyOutlet(FakeTime())
    posting = Publisher(discord_store, outlet, "Smallville", poll=60)
    with caplog.at_level(logging.WARNING, logger="townbot.platforms.discord.publisher"):
        posting.start()
        await until(lambda: reads)
        await write(store, town_id, 0, [speech(CAFE, "Isabella Rodriguez", "Coffee!")])
        posting.wake()
        await until(lambda: getattr(outlet, "failed", False) and posting._workers[CAFE].done())
        posting.wake()
        await until(lambda: outlet.contents(CAFE))
    assert outlet.contents(CAFE) == ["Coffee!"]
    messages = [record.getMessage() for record in caplog.records]
    assert messages == ["publisher for Smallville cannot read the outbox",
                        "posting to #hobbs-cafe stopped: ValueError('a bug'); starting again"]
    await posting.stop()
    await discord_store.close()
    await store.close()


async def test_a_crash_while_waiting_between_the_parts_of_a_long_post_repeats_no_part(tmp_path):
    words = [f"word{i}" for i in range(600)]
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(PARK, "Sam Moore", " ".join(words))])
    clock = FakeTime()
    outlet = WatchedOutlet(clock)

    async def dies_waiting(seconds: float) -> None:
        raise Crash()

    discord_store = await DiscordStore.open(tmp_path / "t.db", town_id)
    first = Publisher(discord_store, outlet, "Smallville", clock=clock, sleep=dies_waiting,
                      channel_windows=((1, 10.0),))  # one post per 10 s: part two must wait
    with pytest.raises(Crash):
        await first.drain()
    await first.stop(grace=0)
    await discord_store.close()
    assert len(outlet.contents(PARK)) == 1, "the first part landed before the wait"

    second = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await second.drain()
    assert len(outlet.contents(PARK)) == 3, "parts two and three only"
    assert " ".join(outlet.contents(PARK)).split() == words
    assert outlet.history_reads == 0, "no part was under way at the crash: nothing to look for"
    await second.store.close()
    await store.close()


async def test_a_crash_before_a_part_lands_sends_it_even_beside_the_same_part_posted_earlier(
        tmp_path):
    """The look for a part that may have landed starts after the part before it, so the same
    long speech said earlier does not count as this one."""
    long_speech = " ".join(f"word{i}" for i in range(600))
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [speech(PARK, "Sam Moore", long_speech)])
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    first = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await first.drain()
    await write(store, town_id, 1, [speech(PARK, "Sam Moore", long_speech)])
    outlet.faults = ["ok", "crash before"]
    await crash_process(first)
    second = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await second.drain()
    assert outlet.contents(PARK) == outlet.contents(PARK)[:3] * 2, "all three parts, twice"
    await second.store.close()
    await store.close()


async def test_a_row_added_to_a_tick_after_a_crash_is_not_mistaken_for_the_post_under_way(
        tmp_path):
    store, town_id = await new_town(tmp_path / "t.db")
    await write(store, town_id, 0, [act(CAFE, "Isabella Rodriguez", "is serving coffee"),
                                    act(CAFE, "Klaus Mueller", "is reading")])
    clock = FakeTime()
    outlet = ScriptedOutlet(clock)
    outlet.faults = ["crash after"]  # the tick's actions landed; the process died before the mark
    first = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await crash_process(first)
    await write(store, town_id, 0, [act(CAFE, "Maria Lopez", "is studying", minute=5)])
    second = await publisher(tmp_path / "t.db", town_id, outlet, clock)
    await second.drain()
    posted = "\n".join(outlet.contents(CAFE))
    assert posted.count("serving coffee") == 1 and posted.count("studying") == 1, posted
    await second.store.close()
    await store.close()


async def test_a_write_waits_for_a_read_in_flight_on_its_own_connection(tmp_path):
    """A read of the Discord store's between its first and last row, while the engine commits,
    used to make the store's next write fail at once with "database is locked"."""
    store, town_id = await new_town(tmp_path / "t.db")
    discord_store = await DiscordStore.open(tmp_path / "t.db", town_id)
    await discord_store.wait_words(WaitingWords("discord:1", "Ada", False, "Hobbs Cafe", "Hi", 7, 8))
    reading = await discord_store.db.execute("SELECT name FROM sqlite_master")  # snapshot held
    await reading.fetchone()
    await store.db.execute("UPDATE towns SET tick = tick + 1")  # the engine commits meanwhile

    async def finish_reading() -> None:
        await asyncio.sleep(0.05)
        await reading.fetchall()
        await reading.close()

    await asyncio.gather(discord_store.forget_words("discord:1"), finish_reading())
    assert await discord_store.waiting_words() == []
    await discord_store.close()
    await store.close()


async def test_a_tick_waits_for_a_read_in_flight_on_the_engine_connection(tmp_path):
    """The same on the engine's side: its read in flight while the Discord store commits."""
    store, town_id = await new_town(tmp_path / "t.db")
    discord_store = await DiscordStore.open(tmp_path / "t.db", town_id)
    reading = await store.db.execute("SELECT name FROM sqlite_master")  # snapshot held
    await reading.fetchone()
    await discord_store.wait_words(WaitingWords("discord:1", "Ada", False, "Hobbs Cafe", "Hi", 7, 8))

    async def finish_reading() -> None:
        await asyncio.sleep(0.05)
        await reading.fetchall()
        await reading.close()

    await asyncio.gather(write(store, town_id, 0, [act("hobbs-cafe", "Isabella", "opens")]),
                         finish_reading())
    async with store.db.execute("SELECT tick FROM towns WHERE id = ?", (town_id,)) as cursor:
        assert (await cursor.fetchone())[0] == 1
    await discord_store.close()
    await store.close()
