"""One rule for names on every platform: a visitor's name is refused when, as a terminal or
Discord shows it, it could be taken for a resident, another visitor, the town, its narrator or a
mention; and the Discord publisher never posts a visitor's words under such a name."""

from __future__ import annotations

import pytest

from townbot.platforms.discord.posts import next_post, speaker_name, webhook_name
from townbot.platforms.discord.store import OutboxRow
from townbot.town.names import discord_username, name_problem, taken_names

TAKEN = taken_names(["Isabella Rodriguez", "Klaus Mueller"], ["Bea"], "Smallville")
HOSTILE = {
    "discordIsabella": "'discordIsabella' would show on Discord as 'Isabella', which looks like "
                       "'Isabella', a resident's name",
    "Isabella Rodriguezclyde": "'Isabella Rodriguezclyde' would show on Discord as 'Isabella "
                               "Rodriguez', which looks like 'Isabella Rodriguez', a resident's "
                               "name",
    "KlausDISCORD Mueller": "'KlausDISCORD Mueller' would show on Discord as 'Klaus Mueller', "
                            "which looks like 'Klaus Mueller', a resident's name",
    "disdiscordcordBea": "'disdiscordcordBea' would show on Discord as 'Bea', which looks like "
                         "'Bea', the name of someone in the town",
    "Isabella\u3164Rodriguez": "'Isabella\u3164Rodriguez' looks like 'Isabella Rodriguez', a "
                               "resident's name",
    "Isabella\uffa0Rodriguez": "'Isabella\uffa0Rodriguez' looks like 'Isabella Rodriguez', a "
                               "resident's name",
    "Kl\u115faus": "'Kl\u115faus' looks like 'Klaus', a resident's name",
    "\ufeffKlaus\u2060": "'\ufeffKlaus\u2060' looks like 'Klaus', a resident's name",
    "everyone": "'everyone' would show as typed as 'everyone', which reads as a mention",
    "Here": "'Here' would show as typed as 'Here', which reads as a mention",
    "everyoneclyde": "'everyoneclyde' would show on Discord as no name at all (Discord takes "
                     "'discord' and 'clyde' out of names, and 'everyone' or 'here' alone is a "
                     "mention)",
    "Clyde": "'Clyde' would show on Discord as no name at all (Discord takes 'discord' and "
             "'clyde' out of names, and 'everyone' or 'here' alone is a mention)",
    "<@&901>": "'<@&901>' would show on Discord as a mention; leave out @ and <...>",
    "<@123>": "'<@123>' would show on Discord as a mention; leave out @ and <...>",
    "<#55>": "'<#55>' would show on Discord as a mention; leave out @ and <...>",
    "@everyone": "'@everyone' would show on Discord as a mention; leave out @ and <...>",
    "Town hall": "'Town hall' is already a name the town posts its news under",
    "T\u043ewn HALL": "'T\u043ewn HALL' looks like 'Town hall', a name the town posts its news "
                      "under",
    "Smallvilleclyde": "'Smallvilleclyde' would show on Discord as 'Smallville', which looks "
                       "like 'Smallville', the town's name",
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_every_hostile_name_is_refused_saying_how_it_would_look(name):
    assert name_problem(name, TAKEN) == HOSTILE[name]


@pytest.mark.parametrize("name", ["Ada", "Disco Dan", "Clive", "Heron", "Everly", "Bob #2",
                                  "Zoë", "Tom\u200dson"])
def test_ordinary_names_pass(name):
    assert name_problem(name, TAKEN) is None


def test_discords_username_cleaning_repeats_until_no_reserved_word_is_left():
    assert discord_username("disdiscordcord Ann") == "Ann"
    assert discord_username("CLYclydeDE") == ""
    assert discord_username("  Ann   Lee ") == "Ann Lee"
    assert discord_username("here") == ""
    assert webhook_name("discordclyde", "Smallville") == "Smallville"


def test_another_visitors_name_is_compared_as_discord_shows_it():
    taken = taken_names(["Klaus Mueller"], ["discordBob"], "Smallville")
    assert name_problem("Bob", taken) == ("'Bob' looks like 'discordBob', the name of someone "
                                          "in the town")


RESIDENTS = frozenset({"Isabella Rodriguez", "Klaus Mueller"})


def speech(actor: str) -> OutboxRow:
    return OutboxRow(1, 1, "2023-02-13 08:00", "hobbs-cafe", "speech", actor, "hello", "💬", "")


@pytest.mark.parametrize(("actor", "username"), [
    ("Isabella Rodriguez", "Isabella Rodriguez"),  # the resident herself (or her taker-over)
    ("discordIsabella", "Isabella (visitor)"),
    ("Isabella Rodriguezclyde", "Isabella Rodriguez (visitor)"),
    ("Kl\u3164aus", "Kl\u3164aus (visitor)"),
    ("Smallville", "Smallville (visitor)"),
    ("Town hall", "Town hall (visitor)"),
    ("everyone", "Visitor"),
    ("Clyde", "Visitor"),
    ("Ada", "Ada"),
])
def test_the_publisher_never_posts_a_visitors_words_under_a_residents_or_narrators_name(
        actor, username):
    assert speaker_name(actor, RESIDENTS, "Smallville") == username
    post = next_post([speech(actor)], "Smallville", RESIDENTS)
    assert post is not None and post.username == username
