"""A town rests when nobody is there and wakes at the first sign of someone (on a fake clock);
`townbot run`'s /healthz and /metrics; JSON logs; every REST request through one base URL."""

from __future__ import annotations

import asyncio
import json
import logging

import aiohttp
import discord
import pytest
from aiohttp import web
from discord_harness import Server, fake_fixture, until  # noqa: F401  (fixture)
from prometheus_client.parser import text_string_to_metric_families

from townbot.llm.settings import load_settings
from townbot.platforms.discord.bot import TownBot
from townbot.platforms.discord.config import (
    API_BASE,
    LOG_FORMAT,
    ConfigError,
    DiscordConfig,
    Upkeep,
    load_upkeep,
    use_api_base,
)
from townbot.platforms.discord.hosting import tick_town
from townbot.platforms.discord.hub import Hub
from townbot.platforms.discord.scheduler import TownScheduler
from townbot.platforms.log_format import formatter
from townbot.town.rest import WOKE, Rest, RestSettings, rest_settings
from townbot.town.service import Person


class FakeClock:
    def __init__(self) -> None:
        self.seconds = 1000.0

    def __call__(self) -> float:
        return self.seconds


def test_a_town_rests_once_after_the_quiet_time_and_any_sign_of_someone_wakes_it():
    clock = FakeClock()
    rest = Rest(RestSettings(after=900, seconds=600), clock)
    clock.seconds += 899
    assert not rest.due() and rest.interval(10) == 10
    clock.seconds += 1
    assert rest.due() and rest.resting and rest.interval(10) == 600
    assert not rest.due(), "it says so once"
    assert rest.seen() and not rest.resting and rest.interval(10) == 10
    assert not rest.seen(), "only a resting town wakes"
    assert not Rest(RestSettings(after=0), clock).due()


def test_rest_settings_have_defaults_and_refuse_what_cannot_work():
    assert rest_settings({}) == RestSettings(900.0, None)
    assert rest_settings({"TOWNBOT_IDLE_AFTER": "300", "TOWNBOT_IDLE_SPEED": "600"}) == \
        RestSettings(300.0, 600.0)
    for bad in ({"TOWNBOT_IDLE_AFTER": "soon"}, {"TOWNBOT_IDLE_SPEED": "0"},
                {"TOWNBOT_IDLE_SPEED": "slow"}):
        with pytest.raises(ConfigError, match="e.g. TOWNBOT_IDLE"):
            load_upkeep(bad)
    with pytest.raises(ConfigError, match="use text or json"):
        load_upkeep({LOG_FORMAT: "xml"})
    with pytest.raises(ConfigError, match="is not a URL"):
        load_upkeep({API_BASE: "proxy:8080"})


async def resting_server(fake, tmp_path, clock, seconds: float | None = None) -> Server:
    guild = fake.add_guild("Test server")
    ada = fake.add_member(guild, "Ada")
    admin = fake.add_member(guild, "Admin", manage_guild=True)
    hub = Hub(DiscordConfig(data_dir=tmp_path, tick_seconds=3600.0), TownScheduler(),
              settings=load_settings({}), clock=clock,
              upkeep=Upkeep(rest=RestSettings(after=900, seconds=seconds)))
    bot = TownBot(hub)
    await fake.connect(bot)
    return Server(fake, bot, guild, ada, admin)


def hall(server: Server) -> list[str]:
    return [text for _, text in server.fake.said(server.channel("town-hall"))]


async def test_a_town_alone_rests_and_a_message_or_a_command_wakes_it_saying_so(fake, tmp_path):
    clock = FakeClock()
    server = await resting_server(fake, tmp_path, clock)
    hub, town = server.bot.hub, server.town
    try:
        clock.seconds += 600
        await hub.rest_round()
        assert not hub.scheduler.is_paused(town.key)
        clock.seconds += 300
        await hub.rest_round()
        assert hub.scheduler.is_paused(town.key) and town.rest.resting
        assert "the town rests (paused)" in hall(server)[-1]
        await server.write("hobbs-cafe", "hello, anyone?")
        assert not hub.scheduler.is_paused(town.key)
        assert hub.scheduler.interval(town.key) == 3600.0 and hall(server)[-1] == WOKE
        clock.seconds += 900
        await hub.rest_round()
        assert hub.scheduler.is_paused(town.key)
        await server.slash("town status")
        assert not hub.scheduler.is_paused(town.key)
        await asyncio.gather(*hub.notices)  # posted beside the command's answer
        assert hall(server)[-1] == WOKE
        clock.seconds += 900
        await hub.rest_round()
        [welcome] = server.fake.pins(server.channel("town-hall"))
        await server.fake.click(server.bot, server.guild, server.ada, welcome, "townbot:join")
        await until(lambda: hall(server)[-1] == WOKE)  # the notice is posted in the background
        assert not hub.scheduler.is_paused(town.key)
        assert hub.health()["resting"] == []
    finally:
        await server.bot.close()


async def test_a_slow_rest_keeps_ticking_and_a_moderators_pause_is_left_alone(fake, tmp_path):
    clock = FakeClock()
    server = await resting_server(fake, tmp_path, clock, seconds=600)
    hub, town = server.bot.hub, server.town
    try:
        clock.seconds += 900
        await hub.rest_round()
        assert hub.scheduler.interval(town.key) == 600 and not hub.scheduler.is_paused(town.key)
        assert "one tick every 600 real seconds" in hall(server)[-1]
        await server.slash("mod pause", server.admin)  # the command wakes it, then pauses it
        assert hub.scheduler.is_paused(town.key) and town.service.paused
        clock.seconds += 3600
        await hub.rest_round()
        notices = len(hall(server))
        await server.write("hobbs-cafe", "still paused?")
        assert hub.scheduler.is_paused(town.key), "activity never resumes a moderator's pause"
        assert len(hall(server)) == notices
    finally:
        await server.bot.close()


async def test_healthz_and_metrics_beside_the_towns_pages_and_a_visit_wakes_a_town(fake, tmp_path):
    from townbot.platforms.web.cli import serve_beside

    clock = FakeClock()
    server = await resting_server(fake, tmp_path, clock)
    hub, town = server.bot.hub, server.town
    await tick_town(town, hub.metrics)
    token = (await town.service.web_link(Person("test:ada", "Ada"))).data["token"]
    status = await server.slash("town status")
    cost = {f["name"]: f["value"] for f in status.embeds[0]["fields"]}["Cost"]
    assert cost.startswith("one tick (10 game minutes) every 3600 real seconds, 0.167 game "
                           "days: ")
    clock.seconds += 900
    await hub.rest_round()
    stop = await serve_beside(hub.files.load(), lambda guild: hub.config.database(guild),
                              "127.0.0.1", 0, on_visit=hub.seen, metrics=hub.metrics,
                              health=hub.health)
    host, port = stop.addresses[0][:2]
    try:
        async with aiohttp.ClientSession(f"http://{host}:{port}") as session:
            async with session.get("/healthz") as response:
                health = await response.json()
            assert response.status == 200 and health["towns"] == 1
            assert health["resting"] == [server.guild]
            async with session.get("/metrics") as response:
                text = await response.text()
                assert response.headers["Content-Type"].startswith("text/plain")
            families = {f.name: f for f in text_string_to_metric_families(text)}
            guild = str(server.guild)
            ticks = [s for s in families["townbot_ticks"].samples if s.name == "townbot_ticks_total"]
            assert [(s.labels["guild"], s.value) for s in ticks] == [(guild, 1.0)]
            assert any(s.name == "townbot_tick_duration_seconds_count" and s.value == 1
                       for s in families["townbot_tick_duration_seconds"].samples)
            for name in ("townbot_model_calls", "townbot_defaulted_share",
                         "townbot_outbox_backlog", "townbot_resting"):
                assert name in families
            assert families["townbot_resting"].samples[0].value == 1.0
            async with session.get(f"/town/{server.guild}/not-the-token-at-all/api/town") as response:
                assert response.status == 404
            assert town.rest.resting, "a page answered 404 is nobody's visit"
            async with session.get(f"/town/{server.guild}/{token}/api/town") as response:
                assert response.status == 200
            assert not town.rest.resting and hall(server)[-1] == WOKE
            hub.closing = True
            async with session.get("/healthz") as response:
                assert response.status == 503
    finally:
        hub.closing = False
        await stop()
        await server.bot.close()


def test_json_logs_are_one_object_a_line_with_the_traceback():
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("townbot.x", logging.ERROR, __file__, 1, "tick %d failed", (3,),
                                   exc_info=__import__("sys").exc_info())
    line = formatter("json").format(record)
    entry = json.loads(line)
    assert "\n" not in line
    assert entry["level"] == "ERROR" and entry["logger"] == "townbot.x"
    assert entry["message"] == "tick 3 failed" and "ValueError: boom" in entry["traceback"]


async def test_every_rest_request_goes_to_the_configured_base(monkeypatch):
    """The bot's own requests and its webhooks' reach a proxy on 127.0.0.1 (a fake one here)."""
    from discord.http import Route

    seen: list[tuple[str, str, str | None]] = []

    def as_discord_does(payload: dict) -> web.Response:  # discord.py wants exactly this type
        return web.Response(body=json.dumps(payload).encode(),
                            headers={"Content-Type": "application/json"})

    async def answer(request: web.Request) -> web.Response:
        seen.append((request.method, request.path, request.headers.get("Authorization")))
        me = {"id": "1", "username": "townbot", "discriminator": "0", "avatar": None,
              "bot": True, "global_name": None}
        if request.path.endswith("/users/@me"):
            return as_discord_does(me)
        if request.path.endswith("/applications/@me"):
            return as_discord_does({"id": "1", "name": "townbot", "description": "", "icon": None,
                                    "bot_public": True, "bot_require_code_grant": False,
                                    "owner": me, "verify_key": "", "flags": 0})
        return as_discord_does({"id": "5", "channel_id": "6", "content": "hi", "type": 0,
                                  "author": {"id": "7", "username": "hook", "discriminator": "0",
                                             "avatar": None}, "attachments": [], "embeds": [],
                                  "mentions": [], "mention_roles": [], "pinned": False,
                                  "mention_everyone": False, "tts": False,
                                  "timestamp": "2026-01-01T00:00:00+00:00", "edited_timestamp": None,
                                  "flags": 0, "components": []})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    monkeypatch.setattr(Route, "BASE", Route.BASE)  # put back after the test
    use_api_base(load_upkeep({API_BASE: f"http://127.0.0.1:{port}/api/v10/"}).api_base)
    client = discord.Client(intents=discord.Intents.none())
    try:
        await client.login("a.fake.token")
        async with aiohttp.ClientSession() as session:
            hook = discord.Webhook.partial(42, "hooktoken", session=session)
            await hook.send("hi", wait=True)
    finally:
        await client.close()
        await runner.cleanup()
    assert seen[0] == ("GET", "/api/v10/users/@me", "Bot a.fake.token")
    assert seen[-1][:2] == ("POST", "/api/v10/webhooks/42/hooktoken")
    assert all(path.startswith("/api/v10/") for _, path, _ in seen)


@pytest.mark.parametrize("speed", ["", "600"])  # the default (pause), and a slow rest
async def test_an_idle_town_makes_at_most_a_tenth_of_the_calls_per_real_hour(tmp_path, speed):
    """On a fake clock, as benchmarks/rest.py measures it: an hour with a visitor every five
    minutes, then three hours alone (counted from the rest's start)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from rest import active_and_idle

    settings = rest_settings({"TOWNBOT_IDLE_SPEED": speed})
    active, idle = await active_and_idle(tmp_path, "3", settings)
    assert active.ticks == 359 and active.calls > 0 and idle.hours > 2
    assert idle.per_hour <= active.per_hour / 10


def test_a_running_long_setting_that_cannot_work_stops_run_at_start(tmp_path, monkeypatch, capsys):
    from townbot.cli import main

    monkeypatch.setenv("TOWNBOT_IDLE_SPEED", "slow")
    assert main(["run", "--dry-run", "--env-file", str(tmp_path / "none.env")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: TOWNBOT_IDLE_SPEED='slow' is not usable") and err[-1] == "\n"
    assert err.count("\n") == 1


async def test_scheduled_backups_copy_every_town_and_keep_the_newest(fake, tmp_path):
    import sqlite3

    folder = tmp_path / "backups"
    guild = fake.add_guild("Test server")
    hub = Hub(DiscordConfig(data_dir=tmp_path / "data", tick_seconds=3600.0), TownScheduler(),
              settings=load_settings({}), upkeep=Upkeep(backup_dir=folder, backup_keep=2))
    bot = TownBot(hub)
    await fake.connect(bot)
    try:
        assert hub.scheduler.interval("backups") == 6 * 3600
        await tick_town(hub.towns[guild])
        for _ in range(3):
            await hub.backup_round()
    finally:
        await bot.close()
    kept = sorted(folder.glob(f"{guild}-*.db"))
    assert len(kept) == 2
    for copy in kept:
        with sqlite3.connect(copy) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert connection.execute("SELECT tick FROM towns").fetchone() == (1,)
