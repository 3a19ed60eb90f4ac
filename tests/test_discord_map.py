"""`/town map` through discord.py's own CommandTree, Interaction and follow-up webhook on the
in-memory Discord: a PNG attachment within Discord's limits, a caption of who is where."""

from __future__ import annotations

import io

from discord_harness import connect, fake_fixture, server_fixture  # noqa: F401  (fixtures)
from PIL import Image

from townbot.platforms.discord.townmap import current_picture


def picture_of(exchange) -> Image.Image:
    (attachment,) = exchange.attachments
    assert attachment["filename"] == "town-map.png" and attachment["content_type"] == "image/png"
    return Image.open(io.BytesIO(attachment["x_data"]))


async def test_town_map_posts_the_map_for_everyone_with_who_is_where(server):
    for _ in range(8):  # 07:00 -> 08:20: people are up and about
        await server.town.service.tick()
    exchange = await server.slash("town map")
    assert not exchange.ephemeral, "the map is posted in the channel for everyone"
    image = picture_of(exchange)
    assert image.format == "PNG" and image.width >= 1000
    assert exchange.attachments[0]["size"] <= 10 * 1024 * 1024
    assert exchange.text.startswith("**The town**, Monday February 13, 08:20")
    assert "Isabella" in exchange.text and "Live map" not in exchange.text


async def test_the_picture_shows_everyone_where_the_engine_has_them(server):
    for _ in range(9):
        await server.town.service.tick()
    town = server.town
    _, picture = await current_picture(town.service, town.engine.world, town.engine.store.path, None)
    for name, body in town.engine.bodies.items():
        marker = picture.positions[name]
        if body.walking:
            assert marker.walking_to == body.travel_sector or marker.sector == body.travel_sector
        else:
            assert (marker.sector, marker.arena) == (body.sector, body.arena), name


async def test_a_close_up_of_one_area_lists_who_is_there_and_what_they_do(server):
    for _ in range(9):
        await server.town.service.tick()
    exchange = await server.slash("town map", area="Hobbs Cafe")
    image = picture_of(exchange)
    assert image.width == 960
    assert exchange.text.startswith("**Hobbs Cafe**")
    here = [n for n, b in server.town.engine.bodies.items() if b.sector == "Hobbs Cafe"]
    assert all(name in exchange.text for name in here)


async def test_an_unknown_area_is_refused_with_a_suggestion_and_no_picture(server):
    exchange = await server.slash("town map", area="Hobs Cafe")
    assert exchange.ephemeral and "Hobbs Cafe" in exchange.text and not exchange.attachments


async def test_visitors_show_on_the_map(server):
    await server.slash("town join", name="Ada", description="a reporter")
    _, picture = await current_picture(server.town.service, server.town.engine.world,
                                       server.town.engine.store.path, None)
    assert picture.positions["Ada"].visitor and picture.positions["Ada"].sector == "Johnson Park"


async def test_the_map_links_to_the_web_page_when_it_is_served(fake, tmp_path):
    server = await connect(fake, tmp_path, web_port=8080, web_url="https://town.example.org")
    try:
        exchange = await server.slash("town map")
        token = await server.town.engine.store.web_token(server.town.engine.town.id)
    finally:
        await server.bot.close()
    assert token and f"<https://town.example.org/town/{server.guild}/{token}/>" in exchange.text
    assert len(exchange.attachments) == 1
