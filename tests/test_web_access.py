"""A town's web page is for its members only (issue 39): the link comes from discord.py's own
CommandTree and Interaction on the in-memory Discord, and is followed with an HTTP client
against the real aiohttp server that `townbot run` starts beside the bot."""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import ClientSession, web
from aiohttp.test_utils import TestClient, TestServer
from discord_harness import Server, connect, fake_fixture, server_fixture  # noqa: F401  (fixtures)
from towns import busy_morning

from townbot.platforms.discord.config import DiscordConfig
from townbot.platforms.web.cli import is_loopback, page_token, serve_beside
from townbot.platforms.web.site import ACCESS_LOG, AccessLog, make_app
from townbot.platforms.web.town import WebTown
from townbot.store.database import StoreError

LINK = re.compile(r"<(http://[^>]+/)>")
# Every kind of thing a town serves: pages, API, map pictures, static files.
PATHS = ("", "api/town", "api/moment", "api/events?area=hobbs-cafe", "map.png?tick=0",
         "resident/Klaus%20Mueller", "static/app.js", "static/style.css")


@dataclass
class Served:
    """A bot in two servers, and the web page beside it at `address`."""

    first: Server
    second_guild: int
    second_member: int
    address: str

    async def link(self, guild: int | None = None, user: int | None = None) -> str:
        """What `/town web` gives a member: the link, privately."""
        guild = guild or self.first.guild
        user = user or (self.first.ada if guild == self.first.guild else self.second_member)
        exchange = await self.first.fake.slash(self.first.bot, guild, user, "town web")
        assert exchange.ephemeral, "the link is shown only to the member who asked"
        return LINK.search(exchange.text).group(1)


@pytest.fixture
async def served(fake, tmp_path) -> AsyncIterator[Served]:
    with socket.socket() as probe:  # the page's address must be known to the bot's settings
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"http://127.0.0.1:{port}"
    first = await connect(fake, tmp_path, web_port=port, web_url=address)
    world = first.town.engine.world
    stop = await serve_beside(world, DiscordConfig(data_dir=tmp_path).database, "127.0.0.1",
                              port)
    second = fake.add_guild("Another server")
    member = fake.add_member(second, "Bea")
    await fake.join(second)
    for guild in (first.guild, second):
        await first.bot.hub.towns[guild].service.tick()
    try:
        yield Served(first, second, member, address)
    finally:
        await stop()
        await first.bot.close()


async def statuses(link: str, paths=PATHS) -> dict[str, int]:
    async with ClientSession() as session:
        found = {}
        for path in paths:
            async with session.get(link + path, allow_redirects=False) as response:
                await response.read()
                found[path] = response.status
        return found


def without_token(link: str) -> str:
    return link.rsplit("/", 2)[0] + "/"


async def test_a_member_gets_the_link_and_reads_the_town(served):
    link = await served.link()
    assert link.startswith(f"{served.address}/town/{served.first.guild}/")
    assert set((await statuses(link)).values()) == {200}
    async with ClientSession() as session:
        async with session.get(link) as response:
            assert "Smallville" in await response.text()
        async with session.get(link + "api/town") as response:
            assert (await response.json())["name"] == "Smallville"
        async with session.get(link + "map.png") as response:
            assert (await response.read())[:4] == b"\x89PNG"
        async with session.get(link + "resident/Klaus%20Mueller") as response:
            page = await response.text()
    assert 'href="../static/style.css"' in page and 'href="../"' in page, \
        "links between pages are relative, so they carry the token"
    engine = served.first.town.engine
    audit = await engine.store.audit_rows(engine.town.id)
    token = link.rstrip("/").rsplit("/", 1)[1]
    assert any(row["use_case"] == "web_link" for row in audit) and token not in str(audit)


async def test_without_the_right_token_every_route_answers_404(served):
    link = await served.link()
    guild = served.first.guild
    other = await served.link(served.second_guild)
    for attempt in (without_token(link), f"{served.address}/town/{guild}/wrong-token/",
                    other.replace(f"/town/{served.second_guild}/", f"/town/{guild}/"),
                    link.replace(f"/town/{guild}/", "/town/123456/")):
        assert set((await statuses(attempt)).values()) == {404}, attempt


async def test_a_wrong_token_and_a_missing_town_look_the_same(served):
    link = await served.link()
    token = link.rstrip("/").rsplit("/", 1)[1]
    async with ClientSession() as session:
        answers = []
        for url in (f"{served.address}/town/{served.first.guild}/not-{token}/api/town",
                    f"{served.address}/town/987654321/{token}/api/town"):
            async with session.get(url) as response:
                answers.append((response.status, await response.text()))
    assert answers[0] == answers[1] == (404, "404: Not Found")


async def test_one_servers_token_does_not_open_another_servers_town(served):
    first, second = await served.link(), await served.link(served.second_guild)
    assert first != second
    swapped = second.replace(f"/town/{served.second_guild}/", f"/town/{served.first.guild}/")
    assert set((await statuses(swapped)).values()) == {404}
    assert set((await statuses(second)).values()) == {200}


async def test_a_rotated_link_shuts_out_the_old_one_and_the_pinned_welcome_follows(served):
    server = served.first
    old = await served.link()
    hall = server.channel("town-hall")
    [welcome] = server.fake.pins(hall)
    assert old.rstrip("/") in str(welcome["embeds"][0]["fields"]), "the welcome gives the link"

    exchange = await server.slash("mod web", user=server.admin, action="rotate")
    new = LINK.search(exchange.text).group(1)
    assert exchange.ephemeral and new != old
    assert set((await statuses(old)).values()) == {404}
    assert set((await statuses(new)).values()) == {200}
    assert await served.link() == new
    [welcome] = server.fake.pins(hall)
    fields = str(welcome["embeds"][0]["fields"])
    assert new.rstrip("/") in fields and old.rstrip("/") not in fields
    assert welcome["components"], "the Join button stays"


async def test_a_closed_page_opens_for_no_link_until_a_new_one_is_made(served):
    server = served.first
    link = await served.link()
    exchange = await server.slash("mod web", user=server.admin, action="off")
    assert "closed" in exchange.text and not LINK.search(exchange.text)
    assert set((await statuses(link)).values()) == {404}
    refused = await server.slash("town web")
    assert refused.ephemeral and "closed" in refused.text and not LINK.search(refused.text)
    shown = await server.slash("town map")
    assert shown.attachments and "Live map" not in shown.text
    [welcome] = server.fake.pins(server.channel("town-hall"))
    assert "town/" not in str(welcome["embeds"][0]["fields"])
    await server.slash("mod web", user=server.admin, action="rotate")
    assert set((await statuses(await served.link())).values()) == {200}


async def test_without_a_web_page_the_member_is_told_why(server):
    exchange = await server.slash("town web")
    assert exchange.ephemeral and exchange.text == (
        "this bot serves no web page; its owner can set TOWNBOT_WEB_PORT and TOWNBOT_WEB_URL")
    assert "Live map" not in (await server.slash("town map")).text
    rotated = await server.slash("mod web", user=server.admin, action="rotate")
    assert rotated.text.endswith("This bot serves no web page; its owner can set "
                                 "TOWNBOT_WEB_PORT and TOWNBOT_WEB_URL.")


async def test_only_moderators_change_the_link(served):
    server = served.first
    link = await served.link()
    exchange = await server.slash("mod web", action="rotate")
    assert "only moderators" in exchange.text
    assert await served.link() == link


async def test_every_answer_keeps_the_token_out_of_referrers(served):
    link = await served.link()
    async with ClientSession() as session:
        for url in (link, link + "map.png", link + "static/app.js", without_token(link),
                    f"{served.address}/nothing"):
            async with session.get(url) as response:
                assert response.headers["Referrer-Policy"] == "no-referrer", url
                assert response.headers["X-Content-Type-Options"] == "nosniff", url


async def test_the_access_log_never_writes_a_token(served, caplog):
    link = await served.link()
    token = link.rstrip("/").rsplit("/", 1)[1]
    with caplog.at_level(logging.DEBUG, logger="townbot.web.access"):
        await statuses(link, ("", "api/town", "no-such-page"))
        await statuses(link.replace(token, token[:-1] + "x"))
        await asyncio.sleep(0.05)  # the log line is written after the response
    lines = [r.getMessage() for r in caplog.records if r.name == "townbot.web.access"]
    assert len(lines) >= 4 and all(token[:-1] not in line for line in lines)
    assert any(f"/town/{served.first.guild}/<token>/api/town 200" in line for line in lines)


async def test_whispers_stay_off_the_residents_page(served):
    server = served.first
    exchange = await server.slash("whisper", resident="Klaus",
                                  text="You should bake a cake for Maria")
    assert "Klaus Mueller hears the thought" in exchange.text
    engine = server.town.engine
    remembered = [m.text for m in engine.minds["Klaus Mueller"].stream.memories]
    assert any("bake a cake" in text for text in remembered), "the resident has the thought"
    link = await served.link()
    async with ClientSession() as session, session.get(link + "resident/Klaus%20Mueller") as page:
        assert page.status == 200 and "bake a cake" not in await page.text()


# --- `townbot web`: one town from the command line ----------------------------------------------

@pytest.fixture(scope="module")
def town_db(world, tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("access") / "town.db"
    asyncio.run(busy_morning(world, db))
    return db


async def test_one_town_under_a_token_answers_only_there(world, town_db):
    town = await WebTown.open(world, town_db)
    token = "a-token-of-sixteen-or-more"
    async with TestClient(TestServer(make_app(town, token))) as client:
        answer = await client.get(f"/{token}", allow_redirects=False)
        assert answer.status == 302 and answer.headers["Location"] == f"/{token}/"
        assert (await client.get("/not-the-token", allow_redirects=False)).status == 404
        for path in PATHS:
            assert (await client.get(f"/{token}/{path}")).status == 200, path
            assert (await client.get(f"/{path}")).status == 404, path
            assert (await client.get(f"/not-the-token/{path}")).status == 404, path
    await town.close()


async def test_the_log_shows_a_route_of_no_town_as_it_is(world, town_db, caplog):
    town = await WebTown.open(world, town_db)
    token = "a-token-of-sixteen-or-more"
    app = make_app(town, token)

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="ok")
    app.router.add_get("/healthz", health)  # as a health check is added: no token
    server = TestServer(app)
    await server.start_server(access_log_class=AccessLog, access_log=ACCESS_LOG)
    with caplog.at_level(logging.DEBUG, logger="townbot.web.access"):
        async with TestClient(server) as client:
            for path in ("/healthz", f"/{token}/api/town", f"/{token}/no-such-page"):
                assert (await client.get(path)).status in (200, 404)
            await asyncio.sleep(0.05)
    await town.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "townbot.web.access"]
    assert [line.split()[2:4] for line in lines] == [
        ["/healthz", "200"], ["/<token>/api/town", "200"], ["/<token>/no-such-page", "404"]]


def test_off_localhost_the_page_needs_a_token():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert not is_loopback("town.example.org")
    assert page_token("127.0.0.1", None) is None
    made = page_token("0.0.0.0", None)
    assert made and len(made) >= 32 and made != page_token("0.0.0.0", None)
    assert page_token("0.0.0.0", "my-own-token-1234") == "my-own-token-1234"
    with pytest.raises(StoreError, match="--token must be at least 16"):
        page_token("0.0.0.0", "short")
    with pytest.raises(StoreError, match="letters, digits"):
        page_token("127.0.0.1", "a token with spaces in it")


async def test_townbot_web_on_every_interface_prints_a_made_token(town_db):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "townbot", "web", "--db", str(town_db), "--host", "0.0.0.0",
         "--port", str(port)], stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[1])
    try:
        line = await asyncio.to_thread(process.stdout.readline)
        match = re.search(rf"http://0\.0\.0\.0:{port}/([A-Za-z0-9_-]{{32}})/ ", line)
        assert match, line
        link = f"http://127.0.0.1:{port}/{match.group(1)}/"
        assert set((await statuses(link)).values()) == {200}
        assert set((await statuses(f"http://127.0.0.1:{port}/")).values()) == {404}
    finally:
        process.terminate()
        process.wait(30)
