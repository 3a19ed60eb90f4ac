"""What people look at rather than read: the welcome, /help, and the status, resident and
interview cards, as Discord embeds. Pure functions of the town's data; the texts are asserted
word for word in tests/test_discord_welcome.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import discord

from townbot.llm.offline import OFFLINE_LABEL
from townbot.platforms.discord.posts import split_text

COLOUR = discord.Colour(0x4E8F5A)  # a park green for every card of the town
FIELD, TITLE, DESCRIPTION = 1024, 256, 4096  # Discord's limits for embeds


def clip(text: str, limit: int) -> str:
    """Text that fits `limit` characters, cut at a word with an ellipsis when it must be."""
    text = text.strip()
    if len(text) <= limit:
        return text or "-"
    return split_text(text, limit - 1)[0].rstrip() + "…"


# The commands as people meet them, shared by the welcome and /help.
EVERYONE = (
    ("/town join", "arrive as a visitor with a name and a one-line description"),
    ("/town go", "walk to an area (it takes game time)"),
    ("/town where", "who is where and what they are doing"),
    ("/town status", "the clock, the speed and how many people are here"),
    ("/town profile", "a resident's card: who they are, where, their day"),
    ("/town map", "the map of the town now, or one area close up"),
    ("/town web", "the link to the town's web page, for this server's people only"),
    ("/interview", "ask a resident anything; a thread opens for more questions"),
    ("/whisper", "be a resident's inner voice: they take it as their own thought"),
    ("/object set", "change a thing, e.g. set the cafe's stove burning"),
    ("/say", "speak where you are (writing in the area's channel does the same)"),
    ("/town leave", "leave the town"),
)
MODERATORS = (
    ("/mod pause, /mod resume, /mod speed", "the town's clock"),
    ("/mod announce, /mod seed, /mod scenario", "news in #town-hall, an idea planted in "
                                               "a resident, a prepared event"),
    ("/mod takeover, /mod memories", "speak as a resident; see what a resident recalls"),
    ("/mod events", "who has heard of a seeded event, from whom, and who plans to go"),
    ("/mod web", "a new link to the web page (the old one stops working), or none"),
)


def guide(entries: Sequence[tuple[str, str]]) -> str:
    return clip("\n".join(f"`{name}`: {what}" for name, what in entries), FIELD)


def model_name(label: str) -> str | None:
    """The model a town's words come from as people should know it ('gpt-4o-mini at
    api.openai.com'), or None for the offline stand-in, which is no language model."""
    if label == OFFLINE_LABEL:
        return None
    name, _, address = label.partition(" at ")
    host = urlsplit(address).hostname if address else None
    return f"{name} at {host}" if host else label


def about_the_residents(label: str) -> str:
    model = model_name(label)
    if model is None:
        return ("They are generative agents (after Park et al., 2023). This town runs on "
                "townbot's offline stand-in: their words come from rules and phrase lists on "
                "the bot's own machine, not from a language model and not from a person.")
    return ("They are generative agents (after Park et al., 2023): what they say and do comes "
            f"from the language model {model}, not from a person.")


def what_is_kept(label: str) -> str:
    """The privacy note: what the town stores of people and where their words go."""
    model = model_name(label)
    sent = ("It is sent nowhere else: the offline stand-in runs on the bot's own machine."
            if model is None else
            f"To let the residents answer, it is sent to the language model {model}.")
    return ("What you write in the town (your name and description, what you say, whisper, "
            "ask or set) is stored in this town's database with your Discord id and name, "
            "kept in its audit log, and remembered by the residents who hear it. " + sent)


def welcome_card(town: str, residents: int, hall: str, model: str,
                 link: str | None = None) -> discord.Embed:
    """Pinned in #town-hall when the town is set up; `model`: the label of the town's model;
    `link`: the town's members-only web page, when it is served."""
    card = discord.Embed(
        title=f"Welcome to {town}",
        colour=COLOUR,
        description=(f"{town} is a small town of {residents} residents who live their own days: "
                     "they wake up, work, meet, talk, remember and make plans. Each area of the "
                     "town is a channel in this category, and what happens there is posted "
                     f"there as it happens. #{hall} is for news and for people."))
    card.add_field(name="The residents are AI characters", inline=False,
                   value=clip(about_the_residents(model), FIELD))
    card.add_field(name="What is kept", inline=False, value=clip(what_is_kept(model), FIELD))
    card.add_field(name="How to join", inline=False, value=(
        "Press **Join** below, or use `/town join`. You arrive in Johnson Park as a visitor. "
        "Then write in any area's channel to speak there: you walk there first, everyone there "
        "hears you, and the resident you name answers."))
    card.add_field(name="Commands", inline=False, value=guide(EVERYONE))
    card.add_field(name="Moderators (Manage Server)", inline=False, value=guide(MODERATORS))
    if link is not None:
        card.add_field(name="The town on the web", inline=False, value=web_line(link))
    card.set_footer(text="/help shows this again at any time.")
    return card


def web_line(link: str) -> str:
    """The web page's link as the welcome and /town web give it (in angle brackets, so that
    Discord shows no preview of it)."""
    return (f"Live map, replay and every resident's page: <{link}>\nThe link is for the people "
            "of this server only: please do not share it outside.")


def area_note(sector: str, description: str, hours: str | None) -> str:
    """Pinned in each area's channel: what the place is and how to speak there."""
    opening = f" Open {hours}." if hours else ""
    return (f"**{sector}**: {' '.join(description.split())}{opening}\n"
            f"Write here to speak in {sector}; whoever is here hears you. Press **Go here** to "
            "walk here first.")


def help_card(town: str, moderator: bool, model: str) -> discord.Embed:
    card = discord.Embed(title=f"{town}: how to take part", colour=COLOUR, description=(
        "Join with `/town join`, then write in an area's channel to speak there. The residents "
        "are AI characters."))
    card.add_field(name="Commands", inline=False, value=guide(EVERYONE))
    card.add_field(name="The residents", inline=False, value=clip(about_the_residents(model), FIELD))
    card.add_field(name="What is kept", inline=False, value=clip(what_is_kept(model), FIELD))
    if moderator:
        card.add_field(name="For moderators", inline=False, value=guide(MODERATORS))
    return card


@dataclass(frozen=True)
class Status:
    town: str
    paused: bool
    clock: str  # e.g. "Monday February 13, 07:10"
    tick: int
    seconds_per_tick: float
    tick_minutes: int
    residents: int
    people: int
    waiting: int  # outbox events not yet posted
    skipped: int  # ticks skipped while one was still running
    model: str
    cost: str = ""  # calls, tokens and money per real day at this speed
    answers: tuple[str, ...] = ()  # the share of answers from defaults, and a warning
    budget: tuple[str, ...] = ()  # each cap: used and left


def status_card(status: Status) -> discord.Embed:
    state = "paused" if status.paused else "running"
    card = discord.Embed(title=f"{status.town} is {state}", colour=COLOUR)
    card.add_field(name="Clock", value=f"{status.clock} (tick {status.tick})")
    card.add_field(name="Speed", value=f"{status.tick_minutes} game minutes every "
                                       f"{status.seconds_per_tick:g} real seconds")
    card.add_field(name="Paused", value="yes" if status.paused else "no")
    card.add_field(name="Backlog", value=f"{status.waiting} events waiting to be posted; "
                                         f"{status.skipped} ticks skipped")
    visitors = "1 visitor" if status.people == 1 else f"{status.people} visitors"
    card.add_field(name="People", value=f"{status.residents} residents, {visitors}")
    if status.cost:
        card.add_field(name="Cost", value=status.cost.removeprefix("per real day at "),
                       inline=False)
    if status.answers:
        card.add_field(name="Model answers", inline=False,
                       value=clip("\n".join(status.answers), FIELD))
    if status.budget:
        card.add_field(name="Budget", inline=False, value=clip("\n".join(status.budget), FIELD))
    card.set_footer(text=f"model: {status.model}")
    return card


def profile_card(resident: str, summary: str, place: str, action: str, plan: Sequence[str],
                 avatar: str) -> discord.Embed:
    card = discord.Embed(title=resident, colour=COLOUR, description=clip(summary, DESCRIPTION))
    card.set_thumbnail(url=avatar)
    card.add_field(name="Where", value=clip(place, FIELD))
    card.add_field(name="Doing", value=clip(action, FIELD))
    card.add_field(name="Today's plan", inline=False,
                   value=clip("\n".join(plan) or "not planned yet", FIELD))
    return card


def interview_card(resident: str, question: str, answer: str, avatar: str,
                   asker: str | None = None) -> discord.Embed:
    card = discord.Embed(title=clip(question, TITLE), colour=COLOUR,
                         description=clip(answer, DESCRIPTION))
    card.set_author(name=resident, icon_url=avatar)
    if asker:
        card.set_footer(text=f"asked by {asker}; more questions in the thread")
    return card
