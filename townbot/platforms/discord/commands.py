"""Slash commands: every TownService use case, grouped, with autocomplete.

Every command defers at once: a use case waits for a tick in progress (the service's lock), and
a tick with a real model can outlast Discord's 3 seconds. Answers come as follow-ups; refusals
(`TownError`) always come back only to the person who asked. Moderator commands check Manage
Server or the configured role here, and TownService checks `Person.moderator` again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

import discord
from discord import app_commands

from townbot.platforms.discord.outlet import NO_MENTIONS
from townbot.platforms.discord.posts import split_text
from townbot.platforms.discord.store import InterviewThread
from townbot.platforms.discord.town import MEMORY_ACCESS, GuildTown
from townbot.town.service import LIMITS, SPEED_RANGE, Person, TownError
from townbot.world.model import join_path

if TYPE_CHECKING:
    from townbot.platforms.discord.hub import Hub

CHOICES = 25  # Discord shows at most 25 suggestions of at most 100 characters
MAX_PARTS = 3  # follow-ups per answer (a long `where` or `memories` list)
Work = Callable[[GuildTown, Person], Awaitable[str]]
Memory = Literal["full", "no reflections", "no reflections or plans", "no memories"]
Name = app_commands.Range[str, 1, LIMITS["name"]]
About = app_commands.Range[str, 1, LIMITS["description"]]
Speech = app_commands.Range[str, 1, LIMITS["say"]]
Whisper = app_commands.Range[str, 1, LIMITS["whisper"]]
Question = app_commands.Range[str, 1, LIMITS["interview"]]
State = app_commands.Range[str, 1, LIMITS["state"]]
Intent = app_commands.Range[str, 1, LIMITS["seed"]]
Notice = app_commands.Range[str, 1, LIMITS["announce"]]
Query = app_commands.Range[str, 1, LIMITS["query"]]
Seconds = app_commands.Range[float, SPEED_RANGE[0], SPEED_RANGE[1]]
Count = app_commands.Range[int, 1, 50]


def hub_of(interaction: discord.Interaction) -> Hub:
    return interaction.client.hub  # type: ignore[attr-defined]


# --- answering ------------------------------------------------------------------------------------

async def send(interaction: discord.Interaction, text: str, *, ephemeral: bool) -> Any:
    """A follow-up in parts of at most 2000 characters; returns the first message."""
    first = None
    for part in split_text(text or "(nothing)")[:MAX_PARTS]:
        message = await interaction.followup.send(part, ephemeral=ephemeral, wait=True,
                                                  allowed_mentions=NO_MENTIONS)
        first = first or message
    return first


async def refuse(interaction: discord.Interaction, refusal: TownError, *, public: bool) -> None:
    if public:  # the public "thinking..." message would otherwise carry the refusal
        with contextlib.suppress(discord.HTTPException):
            await interaction.delete_original_response()
    await send(interaction, str(refusal), ephemeral=True)


async def not_a_moderator(interaction: discord.Interaction, case: str) -> bool:
    """Refuse a moderator command to anyone else, before anything is deferred or done."""
    hub = hub_of(interaction)
    if hub.person(interaction.user).moderator:
        return False
    await interaction.response.send_message(
        f"only moderators may use {case} ({hub.moderator_rule()}); ask a moderator",
        ephemeral=True)
    return True


async def run(interaction: discord.Interaction, work: Work, *, public: bool = False,
              moderators: str | None = None) -> None:
    """Defer, do the work in this server's town, answer or refuse."""
    if moderators is not None and await not_a_moderator(interaction, moderators):
        return
    await interaction.response.defer(ephemeral=not public, thinking=True)
    hub = hub_of(interaction)
    try:
        text = await work(hub.town(interaction.guild_id), hub.person(interaction.user))
    except TownError as refusal:
        await refuse(interaction, refusal, public=public)
        return
    await send(interaction, text, ephemeral=not public)


# --- autocomplete ---------------------------------------------------------------------------------

def best(options: Iterable[str], typed: str) -> list[app_commands.Choice[str]]:
    """Names starting with what was typed first, then names containing it."""
    wanted = " ".join(typed.split()).lower()
    fitting = [o for o in dict.fromkeys(options) if len(o) <= 100]
    starts = [o for o in fitting if o.lower().startswith(wanted)]
    inside = [o for o in fitting if wanted in o.lower() and o not in starts]
    return [app_commands.Choice(name=o, value=o) for o in (starts + inside)[:CHOICES]]


def _town_or_none(interaction: discord.Interaction) -> GuildTown | None:
    with contextlib.suppress(TownError):
        return hub_of(interaction).town(interaction.guild_id)
    return None


class Completed(app_commands.Transformer):
    """A free-text option with suggestions from the town; the service validates the value."""

    def options(self, town: GuildTown) -> Iterable[str]:
        raise NotImplementedError

    async def transform(self, interaction: discord.Interaction, value: str) -> str:
        return value

    async def autocomplete(self, interaction: discord.Interaction,  # type: ignore[override]
                           value: str) -> list[app_commands.Choice[str]]:
        town = _town_or_none(interaction)
        return best(self.options(town), value) if town is not None else []


class Residents(Completed):
    def options(self, town: GuildTown) -> Iterable[str]:
        return sorted(town.engine.minds)


class Areas(Completed):
    def options(self, town: GuildTown) -> Iterable[str]:
        for sector in town.engine.world.sectors.values():
            yield sector.name
            yield from (join_path(sector.name, arena) for arena in sector.arenas)


class Objects(Completed):
    def options(self, town: GuildTown) -> Iterable[str]:
        return town.engine.world.object_paths()


class Scenarios(Completed):
    def options(self, town: GuildTown) -> Iterable[str]:
        return town.service.scenario_names()


Resident = app_commands.Transform[str, Residents]
Area = app_commands.Transform[str, Areas]
ObjectPath = app_commands.Transform[str, Objects]
Scenario = app_commands.Transform[str, Scenarios]


# --- /town ----------------------------------------------------------------------------------------

class TownGroup(app_commands.Group):
    def __init__(self) -> None:
        super().__init__(name="town", description="Join, move about and look at the town",
                         guild_only=True)

    @app_commands.command(description="Join the town as a visitor")
    @app_commands.describe(name="your name in the town", description="who you are, in one line",
                           area="where you arrive (default: Johnson Park)")
    async def join(self, interaction: discord.Interaction, name: Name, description: About,
                   area: Area | None = None) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            where = {"area": area} if area else {}  # the service's default place otherwise
            outcome = await town.service.join(person, name, description, **where)
            town.publisher.wake()
            return outcome.text
        await run(interaction, work)

    @app_commands.command(description="Walk to an area (a sector, 'Sector: arena' or a channel)")
    async def go(self, interaction: discord.Interaction, area: Area) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.go(person, area)
            town.publisher.wake()
            return outcome.text
        await run(interaction, work)

    @app_commands.command(description="Leave the town")
    async def leave(self, interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.leave(person)
            town.waiting.pop(person.id, None)
            town.publisher.wake()
            return outcome.text
        await run(interaction, work)

    @app_commands.command(description="Where everyone is and what they are doing")
    async def where(self, interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            return (await town.service.where(person)).text
        await run(interaction, work)

    @app_commands.command(description="The town's time, state and speed")
    async def status(self, interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.status(person)
            skipped = hub_of(interaction).scheduler.skipped[town.key]
            return (f"{outcome.text}\nOn Discord: {await town.store.backlog()} events waiting "
                    f"to be posted; {skipped} ticks skipped while one was still running.")
        await run(interaction, work)

    @app_commands.command(description="A resident's summary, what they do now and their day")
    async def profile(self, interaction: discord.Interaction, resident: Resident) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            return (await town.service.profile(person, resident)).text
        await run(interaction, work)

    @app_commands.command(description="Moderators: let a member speak and move as a resident")
    async def takeover(self, interaction: discord.Interaction, member: discord.Member,
                       resident: Resident) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            target = hub_of(interaction).person(member)
            return (await town.service.takeover(person, target, resident)).text
        await run(interaction, work, moderators="takeover")

    @app_commands.command(description="Moderators: stop the clock")
    async def pause(self, interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.pause(person)
            hub_of(interaction).scheduler.pause(town.key)
            return outcome.text
        await run(interaction, work, moderators="pause")

    @app_commands.command(description="Moderators: start the clock again")
    async def resume(self, interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.resume(person)
            hub_of(interaction).scheduler.resume(town.key)
            return outcome.text
        await run(interaction, work, moderators="resume")

    @app_commands.command(description="Moderators: real seconds per tick")
    async def speed(self, interaction: discord.Interaction, seconds: Seconds) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.speed(person, seconds)
            hub_of(interaction).scheduler.set_interval(town.key, seconds)
            return outcome.text
        await run(interaction, work, moderators="speed")


# --- /object and /event ----------------------------------------------------------------------------

class ObjectGroup(app_commands.Group):
    def __init__(self) -> None:
        super().__init__(name="object", description="Look at or change things in the town",
                         guild_only=True)

    @app_commands.command(name="set", description="Change an object's state, e.g. stove: burning")
    async def set_(self, interaction: discord.Interaction, path: ObjectPath, state: State) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.set_object(person, path, state)
            town.publisher.wake()
            return outcome.text
        await run(interaction, work)

    @app_commands.command(description="An object's state now and who is using it")
    async def look(self, interaction: discord.Interaction, path: ObjectPath) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            return (await town.service.look(person, path)).text
        await run(interaction, work)


class EventGroup(app_commands.Group):
    def __init__(self) -> None:
        super().__init__(name="event", description="Moderators: seed ideas, announce, load "
                         "scenarios", guild_only=True)

    @app_commands.command(description="Moderators: plant an intention in a resident's mind")
    async def seed(self, interaction: discord.Interaction, resident: Resident,
                   intent: Intent) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            return (await town.service.seed(person, resident, intent)).text
        await run(interaction, work, moderators="seed")

    @app_commands.command(description="Moderators: announce to the town or one area")
    async def announce(self, interaction: discord.Interaction, text: Notice,
                       area: Area | None = None) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.announce(person, text, area)
            town.publisher.wake()
            return outcome.text
        await run(interaction, work, moderators="announce")

    @app_commands.command(description="Moderators: load a scenario from scenarios/")
    async def scenario(self, interaction: discord.Interaction, name: Scenario) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            outcome = await town.service.load_scenario(person, name)
            town.publisher.wake()
            return outcome.text
        await run(interaction, work, moderators="scenario")


# --- top-level commands -----------------------------------------------------------------------------

@app_commands.command(description="Say something where you are in the town")
@app_commands.guild_only()
async def say(interaction: discord.Interaction, text: Speech) -> None:
    async def work(town: GuildTown, person: Person) -> str:
        outcome = await town.service.say(person, text)
        town.publisher.wake()
        return outcome.text
    await run(interaction, work)


@app_commands.command(description="Be a resident's inner voice: they hear it as their own thought")
@app_commands.guild_only()
async def whisper(interaction: discord.Interaction, resident: Resident, text: Whisper) -> None:
    async def work(town: GuildTown, person: Person) -> str:
        return (await town.service.whisper(person, resident, text)).text
    await run(interaction, work)


@app_commands.command(description="Ask a resident a question; ask more in the thread it opens")
@app_commands.describe(as_persona="ask as someone else, described in one line",
                       remember="the resident remembers this interview",
                       memory="which memories the answer may use (the paper's conditions)")
@app_commands.guild_only()
async def interview(interaction: discord.Interaction, resident: Resident, question: Question,
                    as_persona: About | None = None, remember: bool = False,
                    memory: Memory = "full") -> None:
    await interaction.response.defer(thinking=True)
    hub = hub_of(interaction)
    person = hub.person(interaction.user)
    try:
        town = hub.town(interaction.guild_id)
        outcome = await town.service.interview(person, resident, question, as_persona, remember,
                                               MEMORY_ACCESS[memory])
    except TownError as refusal:
        await refuse(interaction, refusal, public=True)
        return
    who, asker = outcome.data["resident"], as_persona or person.name
    message = await send(interaction, f"**{asker}** asks **{who}**: {question}\n**{who}:** "
                                      f"{outcome.data['answer']}", ephemeral=False)
    await _open_thread(town, message, InterviewThread(who, memory, remember, person.id))


async def _open_thread(town: GuildTown, message: Any, interview: InterviewThread) -> None:
    """Further questions go in a thread on the answer; without one the answer still stands."""
    try:
        thread = await message.create_thread(name=f"Interview with {interview.resident}"[:100],
                                             auto_archive_duration=60)
    except discord.HTTPException:
        return
    await town.store.open_thread(thread.id, interview)


@app_commands.command(description="Moderators: a resident's memories retrieved for a query")
@app_commands.guild_only()
async def memories(interaction: discord.Interaction, resident: Resident, query: Query,
                   count: Count = 10) -> None:
    async def work(town: GuildTown, person: Person) -> str:
        return (await town.service.memories(person, resident, query, count)).text
    await run(interaction, work, moderators="memories")


def all_commands() -> list[app_commands.Command[Any, ..., Any] | app_commands.Group]:
    return [TownGroup(), ObjectGroup(), EventGroup(), say, whisper, interview, memories]


MODERATOR_COMMANDS = frozenset({"town takeover", "town pause", "town resume", "town speed",
                                "event seed", "event announce", "event scenario", "memories"})
