"""The welcome, /help, the cards and the buttons, word for word, on the in-memory Discord."""

from __future__ import annotations

from dataclasses import replace

from discord_harness import connect, fake_fixture, server_fixture, until  # noqa: F401  (fixtures)

from townbot.platforms.discord.cards import help_card, welcome_card
from townbot.platforms.discord.respond import fit
from townbot.platforms.discord.setup import avatar_for

COMMANDS = (
    "`/town join`: arrive as a visitor with a name and a one-line description\n"
    "`/town go`: walk to an area (it takes game time)\n"
    "`/town where`: who is where and what they are doing\n"
    "`/town status`: the clock, the speed and how many people are here\n"
    "`/town profile`: a resident's card: who they are, where, their day\n"
    "`/town map`: the map of the town now, or one area close up\n"
    "`/town web`: the link to the town's web page, for this server's people only\n"
    "`/interview`: ask a resident anything; a thread opens for more questions\n"
    "`/whisper`: be a resident's inner voice: they take it as their own thought\n"
    "`/object set`: change a thing, e.g. set the cafe's stove burning\n"
    "`/say`: speak where you are (writing in the area's channel does the same)\n"
    "`/town leave`: leave the town")
MODERATION = (
    "`/mod pause, /mod resume, /mod speed`: the town's clock\n"
    "`/mod announce, /mod seed, /mod scenario`: news in #town-hall, an idea planted in a "
    "resident, a prepared event\n"
    "`/mod takeover, /mod memories`: speak as a resident; see what a resident recalls\n"
    "`/mod events`: who has heard of a seeded event, from whom, and who plans to go\n"
    "`/mod web`: a new link to the web page (the old one stops working), or none")
OFFLINE_RESIDENTS = (
    "They are generative agents (after Park et al., 2023). This town runs on townbot's offline "
    "stand-in: their words come from rules and phrase lists on the bot's own machine, not from "
    "a language model and not from a person.")
KEPT = ("What you write in the town (your name and description, what you say, whisper, ask or "
        "set) is stored in this town's database with your Discord id and name, kept in its "
        "audit log, and remembered by the residents who hear it. ")
OFFLINE_KEPT = KEPT + "It is sent nowhere else: the offline stand-in runs on the bot's own machine."


def fields(card: dict) -> dict[str, str]:
    return {f["name"]: f["value"] for f in card.get("fields", [])}


async def test_the_town_hall_has_a_pinned_welcome_with_a_join_button(server):
    [welcome] = server.fake.pins(server.channel("town-hall"))
    [card] = welcome["embeds"]
    assert card["title"] == "Welcome to Smallville"
    assert card["description"] == (
        "Smallville is a small town of 25 residents who live their own days: they wake up, "
        "work, meet, talk, remember and make plans. Each area of the town is a channel in this "
        "category, and what happens there is posted there as it happens. #town-hall is for news "
        "and for people.")
    assert fields(card) == {
        "The residents are AI characters": OFFLINE_RESIDENTS,
        "What is kept": OFFLINE_KEPT,
        "How to join": (
            "Press **Join** below, or use `/town join`. You arrive in Johnson Park as a visitor. "
            "Then write in any area's channel to speak there: you walk there first, everyone "
            "there hears you, and the resident you name answers."),
        "Commands": COMMANDS,
        "Moderators (Manage Server)": MODERATION}
    assert card["footer"]["text"] == "/help shows this again at any time."
    assert list(server.fake.button_ids(welcome)) == ["Join"]


async def test_each_area_has_a_short_pinned_note_with_a_go_here_button(server, world):
    cafe = server.channel("hobbs-cafe")
    [note] = server.fake.pins(cafe)
    assert note["content"] == (
        "**Hobbs Cafe**: " + " ".join(world.sectors["Hobbs Cafe"].description.split()) +
        " Open 8:00 am to 8:00 pm.\nWrite here to speak in Hobbs Cafe; whoever is here hears "
        "you. Press **Go here** to walk here first.")
    assert server.fake.button_ids(note) == {"Go here": "townbot:go:hobbs-cafe"}
    pinned = [c for c in server.town.outlet.layout.channels.values()
              if server.fake.pins(c.id)]
    assert len(pinned) == len(world.sectors) + 1


async def test_the_welcome_is_posted_once_and_again_only_for_a_channel_made_anew(fake, tmp_path):
    first = await connect(fake, tmp_path)
    await first.bot.close()
    fake.delete_channel(first.channel("hobbs-cafe"))
    again = await connect(fake, tmp_path, guild=first.guild)
    assert len(fake.pins(again.channel("town-hall"))) == 1, "not posted twice"
    assert len(fake.pins(again.channel("hobbs-cafe"))) == 1, "the new channel has its note"
    await again.bot.close()


async def test_join_and_go_here_buttons_save_typing(server):
    fake = server.fake
    [welcome] = fake.pins(server.channel("town-hall"))
    shown = await fake.click(server.bot, server.guild, server.ada, welcome, "townbot:join")
    [form] = [r["data"] for r in shown.responses if r["type"] == 9]
    assert form["title"] == "Join Smallville"
    joined = await fake.submit(server.bot, server.guild, server.ada, shown, **{
        "Your name in the town": "Ada", "Who you are, in one line": "a curious visitor"})
    assert joined.text == "You are Ada, a curious visitor, at Johnson Park: park."
    assert joined.ephemeral

    [note] = fake.pins(server.channel("oak-hill-college"))
    went = await fake.click(server.bot, server.guild, server.ada, note,
                            "townbot:go:oak-hill-college")
    assert "Oak Hill College" in went.text and went.ephemeral
    assert server.town.engine.bodies["Ada"].travel_sector == "Oak Hill College"

    stranger = fake.add_member(server.guild, "Bea")
    refused = await fake.click(server.bot, server.guild, stranger, note,
                               "townbot:go:oak-hill-college")
    assert refused.text.startswith("you are not in the town; join first")


async def test_ask_another_question_answers_in_the_interviews_thread(server):
    fake = server.fake
    asked = await server.slash("interview", resident="Klaus", question="What are you working on?")
    answer = asked.visible[0]
    shown = await fake.click(server.bot, server.guild, server.ada, answer, "townbot:ask")
    [form] = [r["data"] for r in shown.responses if r["type"] == 9]
    assert form["title"] == "Ask Klaus Mueller"
    done = await fake.submit(server.bot, server.guild, server.ada, shown,
                             **{"Your question": "Who are your friends?"})
    thread = int(answer["id"])
    assert done.text == f"Klaus Mueller answered in <#{thread}>." and done.ephemeral
    [reply] = [m for m in fake.messages(thread) if m["embeds"]]
    assert reply["embeds"][0]["title"] == "Who are your friends?"
    assert reply["embeds"][0]["author"]["name"] == "Klaus Mueller"


async def test_help_says_how_to_take_part_and_shows_moderation_to_moderators(server):
    member = await server.slash("help")
    [card] = member.embeds
    assert card["title"] == "Smallville: how to take part"
    assert card["description"] == ("Join with `/town join`, then write in an area's channel to "
                                   "speak there. The residents are AI characters.")
    told = {"The residents": OFFLINE_RESIDENTS, "What is kept": OFFLINE_KEPT}
    assert fields(card) == {"Commands": COMMANDS, **told} and member.ephemeral
    moderator = await server.slash("help", server.admin)
    assert fields(moderator.embeds[0]) == {"Commands": COMMANDS, **told,
                                           "For moderators": MODERATION}


def test_with_a_configured_model_the_welcome_and_help_name_it():
    label = "gpt-4o-mini at https://api.openai.com/v1"
    welcome = fields(welcome_card("Smallville", 25, "town-hall", label).to_dict())
    helped = fields(help_card("Smallville", False, label).to_dict())
    assert welcome["The residents are AI characters"] == helped["The residents"] == (
        "They are generative agents (after Park et al., 2023): what they say and do comes from "
        "the language model gpt-4o-mini at api.openai.com, not from a person.")
    assert welcome["What is kept"] == helped["What is kept"] == KEPT + (
        "To let the residents answer, it is sent to the language model gpt-4o-mini at "
        "api.openai.com.")


async def test_status_is_a_card_of_clock_speed_pause_backlog_and_people(server):
    await server.slash("town join", name="Ada", description="a curious visitor")
    [card] = (await server.slash("town status")).embeds
    assert card["title"] == "Smallville is running"
    shown = fields(card)
    assert shown["Clock"] == "Monday February 13, 07:00 (tick 0)"
    assert shown["Speed"] == "10 game minutes every 3600 real seconds"
    assert shown["Paused"] == "no"
    assert shown["Backlog"].endswith("events waiting to be posted; 0 ticks skipped")
    assert shown["People"] == "25 residents, 1 visitor"
    assert card["footer"]["text"].startswith("model: offline model")


async def test_profile_is_a_resident_card(server):
    [card] = (await server.slash("town profile", resident="Isabella")).embeds
    assert card["title"] == "Isabella Rodriguez"
    assert card["thumbnail"]["url"] == ("https://api.dicebear.com/9.x/personas/png?seed="
                                        "Isabella%20Rodriguez")
    assert list(fields(card)) == ["Where", "Doing", "Today's plan"]
    assert card["description"]


def test_every_name_has_its_own_picture_without_configuration(world):
    pictures = {avatar_for(name, None) for name in world.personas}
    assert len(pictures) == 25
    assert avatar_for("Klaus Mueller", "discord") == \
        "https://cdn.discordapp.com/embed/avatars/4.png"
    assert avatar_for("Klaus Mueller", None, "https://example.org/klaus.png") == \
        "https://example.org/klaus.png", "a persona's own picture wins"


async def test_a_persona_picture_is_used_for_its_posts(server):
    outlet = server.town.outlet
    persona = outlet.own_avatars
    persona["Klaus Mueller"] = "https://example.org/klaus.png"
    assert outlet.avatar("Klaus Mueller") == "https://example.org/klaus.png"
    assert outlet.avatar("Isabella Rodriguez").startswith("https://api.dicebear.com/")


async def test_a_notice_reaches_the_town_hall_for_moderators(server):
    assert await server.town.notify("The model server stopped answering; the town is paused.")
    assert server.fake.said(server.channel("town-hall"))[-1] == (
        "Smallville", "The model server stopped answering; the town is paused.")
    server.fake.fail("POST", r"^/webhooks/", 403)
    assert not await server.town.notify("refused")


def test_text_beyond_three_messages_says_it_was_cut_and_how_to_see_the_rest():
    text = "\n".join(f"line {i} " + "x" * 90 for i in range(80))
    parts = fit(text, "ask for a smaller count")
    assert len(parts) == 3 and all(len(p) <= 2000 for p in parts)
    assert parts[-1].endswith("did not fit in 3 messages; ask for a smaller count.")
    assert "✂️ Cut here: " in parts[-1]
    assert fit("short") == ["short"]


async def test_every_town_shares_one_pacer_for_the_bot(fake, tmp_path):
    other = fake.add_guild("Second server")
    connected = await connect(fake, tmp_path)
    hub = connected.bot.hub
    assert set(hub.towns) == {connected.guild, other}
    pacers = {id(town.publisher._global) for town in hub.towns.values()}
    assert pacers == {id(hub.pacer)}
    await connected.bot.close()


async def test_a_town_hall_webhook_name_discord_refuses_is_cleaned(fake, tmp_path, monkeypatch):
    from townbot.platforms.discord import hosting
    original = hosting.channel_plan

    def discord_town(world):
        plan = original(world)
        return replace(plan, category="Discord Town")
    monkeypatch.setattr(hosting, "channel_plan", discord_town)
    connected = await connect(fake, tmp_path)
    names = {h["name"] for h in fake.webhooks.values()}
    assert "Town #town-hall" in names and not any("discord" in n.lower() for n in names)
    await connected.bot.close()
