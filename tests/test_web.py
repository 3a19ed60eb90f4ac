"""The read-only web page (issue 14): its API in-process, and the page itself in a real
headless Chromium (Debian's package, driven by Playwright; skipped when none is installed)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from conftest import open_engine
from towns import STOVE, busy_morning

from townbot.platforms.web import town as web_town
from townbot.platforms.web.site import make_app
from townbot.platforms.web.town import WebTown

os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")  # never fetch a browser


@pytest.fixture(scope="module")
def morning_db(world, tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("web") / "morning.db"
    asyncio.run(busy_morning(world, db))
    return db


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
async def client(world, morning_db):
    town = await WebTown.open(world, morning_db)
    async with TestClient(TestServer(make_app(town))) as test_client:
        yield test_client
    await town.close()


# --- the API, in-process -----------------------------------------------------------------------

async def test_the_town_and_a_moment_say_where_everyone_is(client):
    town = await (await client.get("/api/town")).json()
    assert town["name"] == "Smallville" and town["ticks"] == 19 and town["start"] == "2023-02-13 07:00"
    moment = await (await client.get("/api/moment")).json()
    people = {p["name"]: p for p in moment["people"]}
    assert len(people) == 26 and people["Ada"]["visitor"]
    assert moment["tick"] == 18 and moment["time"] == town["latest"]
    assert all(0 <= p["x"] < moment["width"] and 0 <= p["y"] < moment["height"]
               for p in people.values())
    first = await (await client.get("/api/moment?tick=0")).json()
    assert "Ada" not in {p["name"] for p in first["people"]} and first["time"] == "2023-02-13 07:00"


async def test_the_map_is_a_png_and_the_feed_filters_by_area(client):
    response = await client.get("/map.png?tick=10")
    assert response.status == 200 and response.content_type == "image/png"
    assert (await response.read())[:8] == b"\x89PNG\r\n\x1a\n"
    events = await (await client.get("/api/events?area=hobbs-cafe")).json()
    assert events and {e["channel"] for e in events} == {"hobbs-cafe"}
    assert events == sorted(events, key=lambda e: e["time"], reverse=True)
    early = await (await client.get("/api/events?tick=2")).json()
    assert all(e["time"] <= "2023-02-13 07:20" for e in early)


async def test_a_resident_page_has_plan_memories_reflections_and_talks(client):
    page = await (await client.get("/resident/Isabella%20Rodriguez")).text()
    for section in ("summary", "plan", "memories", "reflections", "conversations"):
        assert f"id={section}" in page
    assert "Hobbs Cafe" in page and "Isabella Rodriguez" in page


async def test_bad_requests_are_refused_with_the_reason(client):
    response = await client.get("/api/moment?tick=999")
    assert response.status == 400 and "outside this town's history" in await response.text()
    response = await client.get("/api/moment?tick=soon")
    assert response.status == 400 and "not a number" in await response.text()
    response = await client.get("/map.png?area=Nowhere")
    assert response.status == 400 and "no area called" in await response.text()
    assert (await client.get("/resident/Nobody")).status == 404
    assert (await client.post("/api/town")).status == 405  # nothing can be changed


async def test_serving_never_changes_the_database(world, morning_db):
    before = digest(morning_db)
    town = await WebTown.open(world, morning_db)
    async with TestClient(TestServer(make_app(town))) as test_client:
        for url in ("/", "/api/town", "/api/moment?tick=3", "/map.png", "/api/events",
                    "/resident/Klaus%20Mueller"):
            assert (await test_client.get(url)).status == 200
    await town.close()
    assert digest(morning_db) == before


async def test_the_page_reads_on_as_the_town_ticks(world, morning_db, tmp_path, monkeypatch):
    db = tmp_path / "copy.db"
    shutil.copy(morning_db, db)
    monkeypatch.setattr(web_town, "REFRESH_SECONDS", 0.0)
    town = await WebTown.open(world, db)
    async with TestClient(TestServer(make_app(town))) as test_client:
        before = await (await test_client.get("/api/town")).json()
        engine = await open_engine(world, db)
        await engine.tick()
        await engine.store.close()
        after = await (await test_client.get("/api/town")).json()
    await town.close()
    assert after["ticks"] == before["ticks"] + 1 and after["latest"] > before["latest"]


async def test_trouble_shows_in_the_moment(client):
    moments = [await (await client.get(f"/api/moment?tick={t}")).json() for t in range(8, 19)]
    assert any(STOVE in m["troubles"] for m in moments)


# --- beside the bot ------------------------------------------------------------------------------

async def test_townbot_run_serves_each_servers_town_at_its_own_address(world, morning_db,
                                                                       tmp_path):
    from aiohttp import ClientSession

    from townbot.platforms.web.cli import serve_beside
    from townbot.store.database import Store

    db = tmp_path / "town.db"
    shutil.copy(morning_db, db)
    store = await Store.open(db)
    await store.set_web_token((await store.town()).id, "a-token-for-server-123")
    await store.close()
    stop = await serve_beside(world, lambda guild: db if guild == 123 else None, "127.0.0.1", 0)
    host, port = stop.addresses[0][:2]
    town = "/town/123/a-token-for-server-123"
    try:
        async with ClientSession(f"http://{host}:{port}") as session:
            async with session.get(f"{town}/api/town") as response:
                assert response.status == 200 and (await response.json())["ticks"] == 19
            async with session.get(f"{town}/resident/Klaus%20Mueller") as response:
                assert response.status == 200
            async with session.get(town, allow_redirects=False) as response:
                assert response.status == 302 and response.headers["Location"] == f"{town}/"
            for missing in ("/town/5/a-token-for-server-123/api/town", "/town/abc/x/",
                            "/town/123/api/town", "/town/123/", "/"):
                async with session.get(missing) as response:
                    assert response.status == 404
    finally:
        await stop()


def test_web_settings_of_townbot_run_are_checked():
    from townbot.platforms.discord.config import ConfigError, load_config

    config = load_config({"TOWNBOT_WEB_PORT": "8080", "TOWNBOT_WEB_URL": "https://t.example/"},
                         dotenv=Path("/nonexistent/.env"))
    assert config.web_port == 8080
    assert config.web_link(42, "secret") == "https://t.example/town/42/secret/"
    assert load_config({}, dotenv=Path("/nonexistent/.env")).web_link(42, "secret") is None
    with pytest.raises(ConfigError, match="TOWNBOT_WEB_PORT='http' is not a port"):
        load_config({"TOWNBOT_WEB_PORT": "http"}, dotenv=Path("/nonexistent/.env"))
    with pytest.raises(ConfigError, match="TOWNBOT_WEB_URL='town' is not a URL"):
        load_config({"TOWNBOT_WEB_URL": "town"}, dotenv=Path("/nonexistent/.env"))


# --- the page in a real browser ------------------------------------------------------------------
# Last in this file: Playwright's sync API holds the main thread's event loop while it runs.

def chromium_path() -> str | None:
    for name in (os.environ.get("TOWNBOT_CHROMIUM"), "chromium", "chromium-browser"):
        found = name and shutil.which(name)
        if found:
            return found
    return None


BROWSER_TOKEN = "a-token-the-browser-keeps-from-page-to-page"


class ServerThread:
    """The web page on 127.0.0.1 in its own thread and event loop, as `townbot web --token`
    runs it: every link the pages follow must carry the token."""

    def __init__(self, world, db: Path) -> None:
        self.world, self.db = world, db
        self.ready = threading.Event()
        self.url = ""
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self.main(),),
                                       daemon=True)
        self.stop: asyncio.Event | None = None

    async def main(self) -> None:
        from aiohttp import web
        town = await WebTown.open(self.world, self.db)
        runner = web.AppRunner(make_app(town, BROWSER_TOKEN), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{runner.addresses[0][1]}/{BROWSER_TOKEN}/"
        self.stop = asyncio.Event()
        self.ready.set()
        await self.stop.wait()
        await runner.cleanup()
        await town.close()

    def __enter__(self) -> ServerThread:
        self.thread.start()
        assert self.ready.wait(30), "the web server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.stop is not None
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(30)


@pytest.fixture(scope="module")
def browser_page(world, morning_db, tmp_path_factory):
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium installed (apt-get install chromium, or set TOWNBOT_CHROMIUM): "
                    "the browser tests of the web page are skipped")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    db = tmp_path_factory.mktemp("browser") / "town.db"
    shutil.copy(morning_db, db)
    with ServerThread(world, db) as server, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable,
                                             args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(60_000)  # a loaded 2-core machine is slow, never wrong
        yield page, server, db
        browser.close()


def open_town(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(".marker[data-name='Isabella Rodriguez']", state="attached")
    page.wait_for_function("() => { const m = document.getElementById('map');"
                           " return m.complete && m.naturalWidth > 0; }")


def marker_places(page) -> dict[str, tuple[str, str]]:
    return page.eval_on_selector_all(
        ".marker", "els => Object.fromEntries(els.map(e => [e.dataset.name,"
                   " [e.style.left, e.style.top]]))")


def test_the_map_renders_with_everyone_on_it(browser_page):
    page, server, _ = browser_page
    open_town(page, server.url)
    assert page.eval_on_selector("#map", "m => m.naturalWidth") > 1000
    places = marker_places(page)
    assert len(places) == 26 and "Ada" in places
    assert page.text_content("#clock") == "2023-02-13 10:00"
    assert page.locator("#feed li").count() > 10


def test_the_replay_slider_moves_the_residents(browser_page):
    page, server, _ = browser_page
    open_town(page, server.url)
    live = marker_places(page)
    page.eval_on_selector("#replay", "s => { s.value = '0'; s.dispatchEvent(new Event('input')); }")
    page.wait_for_function("() => document.getElementById('clock').textContent === "
                           "'2023-02-13 07:00'")
    page.wait_for_function("() => !document.querySelector(\".marker[data-name='Ada']\")")
    early = marker_places(page)
    moved = [name for name in early if early[name] != live[name]]
    assert len(moved) >= 5, moved
    assert page.text_content("#mode") == "replay"


def test_a_resident_page_opens_from_the_map(browser_page):
    page, server, _ = browser_page
    open_town(page, server.url)
    page.click(".marker[data-name='Isabella Rodriguez']")
    page.wait_for_selector("#resident-name")
    assert page.text_content("#resident-name") == "Isabella Rodriguez"
    assert page.locator("#plan li").count() >= 3
    assert page.url.startswith(server.url)
    page.click("#back")
    page.wait_for_selector("#map")
    assert page.url == server.url


def test_the_live_map_follows_a_new_tick(browser_page, world):
    page, server, db = browser_page
    open_town(page, server.url)
    before = page.text_content("#clock")

    async def one_tick() -> None:
        engine = await open_engine(world, db)
        await engine.tick()
        await engine.store.close()

    with ThreadPoolExecutor(1) as writer:  # Playwright's sync API holds this thread's loop
        writer.submit(asyncio.run, one_tick()).result(timeout=120)
    page.wait_for_function(f"() => document.getElementById('clock').textContent > '{before}'")
    assert page.text_content("#mode") == "live"

