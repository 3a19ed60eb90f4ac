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


@pytest.mark.parametrize("tick", ["--5", "²", "5" * 5000, "1e3", " 3"])
async def test_a_tick_that_is_not_a_number_is_a_400_with_one_line(client, tick):
    for path in ("/api/moment", "/map.png", "/api/events", "/resident/Klaus%20Mueller"):
        response = await client.get(path, params={"tick": tick})
        reason = await response.text()
        assert response.status == 400 and "use a tick number such as 0" in reason
        assert "\n" not in reason.strip() and len(reason) < 200 and "Traceback" not in reason


async def test_every_answer_says_what_a_browser_may_do_with_it(client):
    for path in ("/", "/api/town", "/static/app.js", "/resident/Nobody", "/api/moment?tick=x"):
        headers = (await client.get(path)).headers
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
        assert "script-src 'self'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"
    icon = await client.get("/static/favicon.svg")
    assert icon.status == 200 and icon.content_type == "image/svg+xml"
    assert 'rel=icon href="static/favicon.svg"' in await (await client.get("/")).text()
    for vendored in ("leaflet.js", "leaflet.css"):
        assert (await client.get(f"/static/{vendored}")).status == 200
    assert (await client.get("/static/LEAFLET-LICENSE")).status == 404  # only what pages use


async def test_a_moment_gives_each_person_a_look_of_their_own(client):
    moment = await (await client.get("/api/moment")).json()
    people = {p["name"]: p for p in moment["people"]}
    residents = [p for p in people.values() if not p["visitor"]]
    assert len({p["colour"] for p in residents}) == len(residents) == 25
    assert len({p["initials"] for p in people.values()}) == 26
    assert people["Maria Lopez"]["initials"] != people["Mei Lin"]["initials"]
    assert moment["night"] is False and isinstance(moment["speech"], list)
    bare = await client.get("/map.png?people=0")
    assert bare.status == 200 and await bare.read() != await (await client.get("/map.png")).read()
    assert (await client.get("/map.png?people=maybe")).status == 400
    areas = (await (await client.get("/api/town")).json())["areas"]
    assert areas["hobbs-cafe"]["name"] == "Hobbs Cafe" and len(areas["hobbs-cafe"]["box"]) == 4


async def test_a_visitor_who_arrived_is_no_longer_walking(client):
    moments = [await (await client.get(f"/api/moment?tick={t}")).json() for t in (9, 18)]
    walking, arrived = ({p["name"]: p for p in m["people"]}["Ada"] for m in moments)
    assert walking["walking_to"] == "Hobbs Cafe" and walking["action"].startswith("walking")
    assert arrived["place"] == "Hobbs Cafe: cafe" and "walking" not in arrived["action"]


async def test_the_feed_runs_newest_first_by_game_time(client):
    events = await (await client.get("/api/events")).json()
    assert [e["time"] for e in events] == sorted((e["time"] for e in events), reverse=True)


async def test_a_resident_page_can_show_a_moment_of_the_replay(client):
    page = await (await client.get("/resident/Isabella%20Rodriguez?tick=0")).text()
    assert "As at 2023-02-13 07:00 in the replay" in page and "kitchen" in page
    assert "2023-02-13 09:" not in page  # nothing remembered after that moment
    now = await (await client.get("/resident/Isabella%20Rodriguez")).text()
    assert "id=as-of" not in now


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
PHONE, DESKTOP = {"width": 390, "height": 844}, {"width": 1440, "height": 900}
SCREENS = pytest.mark.parametrize("screen", [PHONE, DESKTOP], ids=["phone", "desktop"])


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
def party_db(tmp_path_factory) -> Path:
    """The Valentine's Day party at Hobbs Cafe, 17:20 on the second day (offline model)."""
    from townbot.cli import main

    db = tmp_path_factory.mktemp("party") / "party.db"
    assert main(["sim", "--days", "1", "--db", str(db), "--scenario", "valentines-party",
                 "--quiet"]) == 0
    assert main(["sim", "--hours", "10.5", "--db", str(db), "--quiet"]) == 0
    return db


@pytest.fixture(scope="module")
def browser(world, morning_db, party_db, tmp_path_factory):
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium installed (apt-get install chromium, or set TOWNBOT_CHROMIUM): "
                    "the browser tests of the web page are skipped")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    db = tmp_path_factory.mktemp("browser") / "town.db"
    shutil.copy(morning_db, db)
    with ServerThread(world, db) as server, ServerThread(world, party_db) as party, \
            sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable,
                                              args=["--no-sandbox", "--disable-gpu"])
        yield chromium, server, party, db
        chromium.close()


@pytest.fixture
def browser_page(browser):
    """A desktop page on the busy morning."""
    chromium, server, _, db = browser
    page = chromium.new_page(viewport=DESKTOP)
    page.set_default_timeout(60_000)  # a loaded 2-core machine is slow, never wrong
    yield page, server, db
    page.close()


def screen_page(browser, screen: dict):
    page = browser[0].new_page(viewport=screen, has_touch=screen is PHONE,
                               is_mobile=screen is PHONE)
    page.set_default_timeout(60_000)
    return page


def open_town(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(".marker[data-name='Isabella Rodriguez']", state="attached")
    page.wait_for_function("() => { const m = document.querySelector('.town-picture');"
                           " return m && m.complete && m.naturalWidth > 0; }")


def marker_boxes(page) -> dict[str, dict[str, float]]:
    """Where each person's tap target is on the screen, in CSS pixels."""
    return page.eval_on_selector_all(
        ".marker", "els => Object.fromEntries(els.map(e => { const r = e.getBoundingClientRect();"
                   " return [e.dataset.name, {x: r.x, y: r.y, w: r.width, h: r.height}]; }))")


def marker_places(page) -> dict[str, tuple[float, float]]:
    """Where the map puts each person, in the drawn town's pixels (independent of the zoom)."""
    return {p["name"]: (p["x"], p["y"]) for p in page.evaluate("moment.people")}


def overlapping(boxes: dict[str, dict[str, float]]) -> list[tuple[str, str]]:
    names = sorted(boxes)
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
            if boxes[a]["x"] < boxes[b]["x"] + boxes[b]["w"] and
            boxes[b]["x"] < boxes[a]["x"] + boxes[a]["w"] and
            boxes[a]["y"] < boxes[b]["y"] + boxes[b]["h"] and
            boxes[b]["y"] < boxes[a]["y"] + boxes[a]["h"]]


def covered(page, names: list[str]) -> list[str]:
    """Who among `names` cannot be tapped: off the map's visible part, or something else on
    top of their target's centre."""
    return page.evaluate(
        """names => names.filter(name => {
             const target = document.querySelector(`.marker[data-name="${name}"]`);
             const r = target.getBoundingClientRect();
             const [x, y] = [r.x + r.width / 2, r.y + r.height / 2];
             const view = document.getElementById("map").getBoundingClientRect();
             const top = document.elementFromPoint(x, y);
             return x < view.left || x > view.right || y < view.top || y > view.bottom ||
                    !(top && target.contains(top)); })""", names)


def shown_on_map(page) -> list[str]:
    """Who is inside the visible part of the map."""
    return page.evaluate(
        """() => [...document.querySelectorAll(".marker")].filter(target => {
             const r = target.getBoundingClientRect();
             const view = document.getElementById("map").getBoundingClientRect();
             return r.left >= view.left && r.right <= view.right && r.top >= view.top &&
                    r.bottom <= view.bottom; }).map(target => target.dataset.name)""")


def move_slider(page, tick: int) -> None:
    page.eval_on_selector("#replay", f"s => {{ s.value = '{tick}';"
                                     " s.dispatchEvent(new Event('input')); }")
    page.wait_for_function(f"() => moment && moment.tick === {tick}")


@SCREENS
def test_the_page_fits_the_screen_and_the_map_fills_its_width(browser, screen):
    page = screen_page(browser, screen)
    open_town(page, browser[1].url)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= screen["width"], "the page scrolls sideways"
    box = page.locator("#map").bounding_box()
    share = 0.9 if screen is PHONE else 0.6
    assert box["width"] >= share * screen["width"] and box["height"] >= 0.5 * screen["height"]
    for control in ("#replay", "#live-button", "#area"):
        control_box = page.locator(control).bounding_box()
        assert control_box["height"] >= 24 and control_box["x"] + control_box["width"] <= width
    assert page.locator("#replay").bounding_box()["width"] >= 0.5 * screen["width"]
    page.close()


@SCREENS
def test_everyone_at_the_party_can_be_tapped(browser, screen):
    page = screen_page(browser, screen)
    open_town(page, browser[2].url)
    at_party = [p["name"] for p in page.evaluate("moment.people") if p["sector"] == "Hobbs Cafe"]
    assert len(at_party) >= 10, at_party
    boxes = marker_boxes(page)
    assert len(boxes) == 25
    assert all(b["w"] >= 24 and b["h"] >= 24 for b in boxes.values())
    assert overlapping(boxes) == []
    assert covered(page, at_party) == []  # on screen and on top
    assert covered(page, shown_on_map(page)) == []
    for name in at_party:  # each opens their card
        page.locator(f".marker[data-name='{name}']").click()
        assert page.text_content("#card-name") == name
    card = page.locator("#card").bounding_box()
    assert card["x"] >= 0 and card["x"] + card["width"] <= screen["width"]
    page.close()


@SCREENS
def test_the_feed_and_the_map_work_after_zooming(browser, screen):
    page = screen_page(browser, screen)
    open_town(page, browser[2].url)
    for _ in range(2):  # as a visitor zooms: a tap, then the next when the map has moved
        zoom = page.evaluate("map.getZoom()")
        page.click(".leaflet-control-zoom-in")
        page.wait_for_function(f"() => map.getZoom() > {zoom}")
        page.wait_for_timeout(400)  # the zoom's animation
    boxes = marker_boxes(page)
    assert overlapping(boxes) == []
    page.select_option("#area", "hobbs-cafe")
    page.wait_for_function("() => [...document.querySelectorAll('#feed li')].every("
                           "li => li.title.startsWith('#hobbs-cafe '))")
    assert page.locator("#feed li").count() > 5
    faded = page.eval_on_selector_all(".person.elsewhere", "els => els.map(e => e.dataset.name)")
    at_party = {p["name"] for p in page.evaluate("moment.people") if p["sector"] == "Hobbs Cafe"}
    assert faded and not at_party & set(faded)  # the map shows the area's people
    page.wait_for_timeout(800)  # the flight to the cafe
    inside = covered(page, sorted(at_party))
    assert inside == []
    page.locator(".marker[data-name='Isabella Rodriguez']").click()
    assert page.text_content("#card-name") == "Isabella Rodriguez"
    page.close()


def speech_tick(world, db: Path) -> tuple[int, str]:
    """A tick of the party town before its last in which someone spoke, and who."""
    async def find() -> tuple[int, str]:
        town = await WebTown.open(world, db)
        try:
            for tick in range(town.tick_count() - 2, 0, -1):  # in the replay
                lines = town.speech_at(tick)
                if lines:
                    return tick, lines[-1]["actor"]
        finally:
            await town.close()
        raise AssertionError("no one spoke in the party town")

    with ThreadPoolExecutor(1) as reader:  # Playwright's sync API holds this thread's loop
        return reader.submit(asyncio.run, find()).result(timeout=120)


def test_a_speech_bubble_shows_who_is_talking(browser, world, party_db):
    tick, speaker = speech_tick(world, party_db)
    page = screen_page(browser, PHONE)
    open_town(page, browser[2].url)
    move_slider(page, tick)
    page.wait_for_selector(f".bubble[data-name='{speaker}']")
    assert speaker.split()[0] in page.text_content(f".bubble[data-name='{speaker}']")
    assert page.text_content("#mode") == "replay"
    page.close()


def test_the_map_darkens_at_night(browser):
    page = screen_page(browser, DESKTOP)
    open_town(page, browser[2].url)
    assert not page.evaluate("document.getElementById('map').classList.contains('night')")
    move_slider(page, 96)  # 23:00 on the first day
    assert page.text_content("#clock") == "2023-02-13 23:00"
    assert page.evaluate("document.getElementById('map').classList.contains('night')")
    filtered = page.eval_on_selector(".town-picture", "m => getComputedStyle(m).filter")
    assert "brightness" in filtered
    page.close()


def test_the_map_renders_with_everyone_on_it(browser_page):
    page, server, _ = browser_page
    open_town(page, server.url)
    assert page.eval_on_selector(".town-picture", "m => m.naturalWidth") > 1000
    places = marker_places(page)
    assert len(places) == 26 and "Ada" in places
    assert page.text_content("#clock") == "2023-02-13 10:00"
    assert page.locator("#feed li").count() > 10
    initials = page.eval_on_selector_all(".person", "els => els.map(e => e.textContent)")
    assert len(set(initials)) == 26  # no two people look alike


def test_the_replay_slider_moves_the_residents(browser_page):
    page, server, _ = browser_page
    open_town(page, server.url)
    live = marker_places(page)
    move_slider(page, 0)
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
    assert page.text_content("#card-name") == "Isabella Rodriguez"
    page.click("#card-link")
    page.wait_for_selector("#resident-name")
    assert page.text_content("#resident-name") == "Isabella Rodriguez"
    assert page.locator("#plan li").count() >= 3
    assert page.url.startswith(server.url) and page.locator("#as-of").count() == 0
    page.click("#back")
    page.wait_for_selector("#map")
    assert page.url == server.url


def test_a_resident_page_opened_in_the_replay_shows_that_moment(browser_page):
    page, server, _ = browser_page
    open_town(page, server.url)
    move_slider(page, 2)
    page.click(".marker[data-name='Isabella Rodriguez']")
    page.click("#card-link")
    page.wait_for_selector("#as-of")
    assert "2023-02-13 07:20" in page.text_content("#as-of")
    assert page.url.startswith(server.url) and page.url.endswith("?tick=2")


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
