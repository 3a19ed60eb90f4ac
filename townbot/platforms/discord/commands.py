"""Slash commands over TownService, grouped, with autocomplete. `/mod` carries
`default_permissions(manage_guild=True)`, so Discord shows it only to Manage Server (a server can
widen that); each /mod command also checks Manage Server or the configured role, and
TownService checks `Person.moderator` again."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any, Literal

import discord
from discord import app_commands

from townbot.platforms.discord.cards import (
    Status,
    help_card,
    interview_card,
    profile_card,
    status_card,
    web_line,
)
from townbot.platforms.discord.hosting import show_link
from townbot.platforms.discord.hub import MEMORY_ACCESS, GuildTown, Hub
from townbot.platforms.discord.respond import Reply, ask_button, refuse, run, send
from townbot.platforms.discord.store import InterviewThread
from townbot.platforms.discord.townmap import FILE_LIMIT, attachment, caption, current_picture
from townbot.town.requests import LIMITS, SPEED_RANGE, Outcome, Person, TownError, bounded
from townbot.world.model import join_path

log = logging.getLogger(__name__)

CHOICES = 25  # Discord shows at most 25 suggestions of at most 100 characters
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
# Free text, suggested from the town as it is typed (each group's autocomplete); the service
# checks what is sent.
Resident = Area = ObjectPath = Scenario = str
NO_WEB_PAGE = "this bot serves no web page; its owner can set TOWNBOT_WEB_PORT and TOWNBOT_WEB_URL"


# --- autocomplete ---------------------------------------------------------------------------------

def best(options: Iterable[str], typed: str) -> list[app_commands.Choice[str]]:
    """Names starting with what was typed first, then names containing it."""
    wanted = " ".join(typed.split()).lower()
    fitting = [o for o in dict.fromkeys(options) if len(o) <= 100]
    starts = [o for o in fitting if o.lower().startswith(wanted)]
    inside = [o for o in fitting if wanted in o.lower() and o not in starts]
    return [app_commands.Choice(name=o, value=o) for o in (starts + inside)[:CHOICES]]


Choices = list[app_commands.Choice[str]]


async def suggest(hub: Hub, interaction: discord.Interaction, typed: str,
                  options: Callable[[GuildTown], Iterable[str]]) -> Choices:
    """Names from the server's town as someone types (the service validates what is sent)."""
    with contextlib.suppress(TownError):
        return best(options(hub.town(interaction.guild_id)), typed)
    return []


def areas(town: GuildTown) -> Iterable[str]:
    for sector in town.engine.world.sectors.values():
        yield sector.name
        yield from (join_path(sector.name, arena) for arena in sector.arenas)


class TownCommands(app_commands.Group):
    """A group of commands acting in `hub`'s towns, with the suggestions its parameters share."""

    def __init__(self, hub: Hub, name: str, description: str) -> None:
        super().__init__(name=name, description=description, guild_only=True)
        self.hub = hub

    async def residents(self, interaction: discord.Interaction, typed: str) -> Choices:
        return await suggest(self.hub, interaction, typed, lambda town: sorted(town.engine.minds))

    async def areas(self, interaction: discord.Interaction, typed: str) -> Choices:
        return await suggest(self.hub, interaction, typed, areas)

    async def objects(self, interaction: discord.Interaction, typed: str) -> Choices:
        return await suggest(self.hub, interaction, typed,
                             lambda town: town.engine.world.object_paths())

    async def scenarios(self, interaction: discord.Interaction, typed: str) -> Choices:
        return await suggest(self.hub, interaction, typed,
                             lambda town: town.service.scenario_names())


# --- /town ----------------------------------------------------------------------------------------

class TownGroup(TownCommands):
    def __init__(self, hub: Hub) -> None:
        super().__init__(hub, "town", "Join, move about and look at the town")

    @app_commands.command(description="Join the town as a visitor")
    @app_commands.describe(name="your name in the town", description="who you are, in one line",
                           area="where you arrive (default: Johnson Park)")
    @app_commands.autocomplete(area=TownCommands.areas)
    async def join(self, interaction: discord.Interaction, name: Name, description: About,
                   area: Area | None = None) -> None:
        where = {"area": area} if area else {}  # the service's default place otherwise
        await run(self.hub, interaction,
                  lambda town, person: town.service.join(person, name, description, **where))

    @app_commands.command(description="Walk to an area (a sector, 'Sector: arena' or a channel)")
    @app_commands.autocomplete(area=TownCommands.areas)
    async def go(self, interaction: discord.Interaction, area: Area) -> None:
        await run(self.hub, interaction, lambda town, person: town.service.go(person, area))

    @app_commands.command(description="Leave the town")
    async def leave(self, interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> Outcome:
            outcome = await town.service.leave(person)
            await town.store.forget_words(person.id)
            return outcome
        await run(self.hub, interaction, work)

    @app_commands.command(description="Where everyone is and what they are doing")
    async def where(self, interaction: discord.Interaction) -> None:
        await run(self.hub, interaction,
                  lambda town, person: town.service.where(person),
                  more="/town profile shows any one resident in full")

    @app_commands.command(name="map", description="The town's map now, or one area close up")
    @app_commands.describe(area="an area to show close up (default: the whole town)")
    @app_commands.autocomplete(area=TownCommands.areas)
    async def map_(self, interaction: discord.Interaction, area: Area | None = None) -> None:
        async def work(town: GuildTown, person: Person) -> Reply:
            sector = town.service.area(area)[0] if area else None
            moment, picture = await current_picture(town.service, town.engine.world,
                                                    town.engine.store.path, sector)
            link = None
            with contextlib.suppress(TownError):  # a closed page: the map without its link
                link = await self.hub.page_link(town, person)
            limit = interaction.guild.filesize_limit if interaction.guild else FILE_LIMIT
            return Reply(caption(moment, sector, link), file=attachment(picture, limit))
        await run(self.hub, interaction, work, public=True)

    @app_commands.command(description="The link to the town's web page: live map, replay, "
                                      "residents (for this server's people only)")
    async def web(self, interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            link = await self.hub.page_link(town, person)
            if link is None:
                raise TownError(NO_WEB_PAGE)
            return web_line(link)
        await run(self.hub, interaction, work)

    @app_commands.command(description="The town's clock, speed and people")
    async def status(self, interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> Reply:
            outcome = await town.service.status(person)
            engine = town.engine
            card = status_card(Status(
                town=engine.world.town, paused=bool(outcome.data["paused"]),
                clock=f"{engine.clock.now:%A %B %d, %H:%M}", tick=int(outcome.data["tick"]),
                seconds_per_tick=engine.town.tick_seconds, tick_minutes=engine.clock.tick_minutes,
                residents=len(engine.minds), people=len(engine.people),
                waiting=await town.store.backlog(),
                skipped=self.hub.scheduler.skipped[town.key], model=engine.model.label,
                cost=outcome.data.get("per_real_day_line", ""),
                answers=tuple(outcome.data.get("answers", ())),
                budget=tuple(outcome.data.get("budget", ()))))
            problem = getattr(interaction.client, "sync_problem", None)
            note = f"Commands: not synced: {problem}" if problem and person.moderator else ""
            return Reply(note, card)
        await run(self.hub, interaction, work)

    @app_commands.command(description="A resident's card: who they are, where, their day")
    @app_commands.autocomplete(resident=TownCommands.residents)
    async def profile(self, interaction: discord.Interaction, resident: Resident) -> None:
        async def work(town: GuildTown, person: Person) -> Reply:
            data = (await town.service.profile(person, resident)).data
            return Reply(embed=profile_card(data["resident"], data["summary"], data["place"],
                                            data["action"], data["plan"],
                                            town.outlet.avatar(data["resident"])))
        await run(self.hub, interaction, work)


# --- /mod: moderators only ---------------------------------------------------------------------------

@app_commands.default_permissions(manage_guild=True)
class ModGroup(TownCommands):
    def __init__(self, hub: Hub) -> None:
        super().__init__(hub, "mod", "Moderators: the clock, news, ideas, scenarios")

    @app_commands.command(description="Stop the clock")
    async def pause(self, interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> Outcome:
            outcome = await town.service.pause(person)
            self.hub.scheduler.pause(town.key)
            return outcome
        await run(self.hub, interaction, work, moderators="/mod pause")

    @app_commands.command(description="Start the clock again")
    async def resume(self, interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> Outcome:
            outcome = await town.service.resume(person)
            self.hub.scheduler.resume(town.key)
            return outcome
        await run(self.hub, interaction, work, moderators="/mod resume")

    @app_commands.command(description="Real seconds per tick (one tick is 10 game minutes)")
    async def speed(self, interaction: discord.Interaction, seconds: Seconds) -> None:
        async def work(town: GuildTown, person: Person) -> Outcome:
            outcome = await town.service.speed(person, seconds)
            self.hub.scheduler.set_interval(town.key, seconds)
            return outcome
        await run(self.hub, interaction, work, moderators="/mod speed")

    @app_commands.command(description="Let a member speak and move as a resident")
    @app_commands.autocomplete(resident=TownCommands.residents)
    async def takeover(self, interaction: discord.Interaction, member: discord.Member,
                       resident: Resident) -> None:
        await run(self.hub, interaction,
                  lambda town, person: town.service.takeover(person, self.hub.person(member),
                                                             resident),
                  moderators="/mod takeover")

    @app_commands.command(description="Plant an intention in a resident's mind")
    @app_commands.autocomplete(resident=TownCommands.residents)
    async def seed(self, interaction: discord.Interaction, resident: Resident,
                   intent: Intent) -> None:
        await run(self.hub, interaction,
                  lambda town, person: town.service.seed(person, resident, intent),
                  moderators="/mod seed")

    @app_commands.command(description="Announce to the town (#town-hall) or one area")
    @app_commands.autocomplete(area=TownCommands.areas)
    async def announce(self, interaction: discord.Interaction, text: Notice,
                       area: Area | None = None) -> None:
        await run(self.hub, interaction,
                  lambda town, person: town.service.announce(person, text, area),
                  moderators="/mod announce")

    @app_commands.command(description="Load a scenario from scenarios/")
    @app_commands.autocomplete(name=TownCommands.scenarios)
    async def scenario(self, interaction: discord.Interaction, name: Scenario) -> None:
        await run(self.hub, interaction,
                  lambda town, person: town.service.load_scenario(person, name),
                  moderators="/mod scenario")

    @app_commands.command(description="A resident's memories retrieved for a query, with scores")
    @app_commands.autocomplete(resident=TownCommands.residents)
    async def memories(self, interaction: discord.Interaction, resident: Resident, query: Query,
                       count: Count = 10) -> None:
        await run(self.hub, interaction,
                  lambda town, person: town.service.memories(person, resident, query, count),
                  moderators="/mod memories", more="ask for a smaller count")

    @app_commands.command(description="The web page's link: a new one (the old stops working) "
                                      "or none")
    @app_commands.describe(action="rotate: a new link, the old one stops working at once; off: "
                                  "no link opens the page until the next rotate")
    async def web(self, interaction: discord.Interaction, action: Literal["rotate", "off"]) -> None:
        async def work(town: GuildTown, person: Person) -> str:
            if action == "off":
                outcome, link = await town.service.close_web_page(person), None
            else:
                outcome = await town.service.rotate_web_link(person)
                link = self.hub.config.web_link(town.guild_id, outcome.data["token"])
            lines = [outcome.text] + ([web_line(link)] if link else [])
            if not self.hub.config.serves_web:
                lines.append(NO_WEB_PAGE[0].upper() + NO_WEB_PAGE[1:] + ".")
            elif not await show_link(town, link):
                lines.append(f"The welcome pinned in #{town.engine.world.town_hall_channel} "
                             "could not be changed; /town web gives the link that works.")
            return "\n".join(lines)
        await run(self.hub, interaction, work, moderators="/mod web")

    @app_commands.command(description="Who knows of each seeded event, from whom, who plans to go")
    async def events(self, interaction: discord.Interaction) -> None:
        await run(self.hub, interaction,
                  lambda town, person: town.service.event_status(person), moderators="/mod events")


# --- /object --------------------------------------------------------------------------------------

class ObjectGroup(TownCommands):
    def __init__(self, hub: Hub) -> None:
        super().__init__(hub, "object", "Look at or change things in the town")

    @app_commands.command(name="set", description="Change an object's state, e.g. stove: burning")
    @app_commands.autocomplete(path=TownCommands.objects)
    async def set_(self, interaction: discord.Interaction, path: ObjectPath, state: State) -> None:
        await run(self.hub, interaction,
                  lambda town, person: town.service.set_object(person, path, state))

    @app_commands.command(description="An object's state now and who is using it")
    @app_commands.autocomplete(path=TownCommands.objects)
    async def look(self, interaction: discord.Interaction, path: ObjectPath) -> None:
        await run(self.hub, interaction, lambda town, person: town.service.look(person, path))


# --- top-level commands -----------------------------------------------------------------------------

def visitor_commands(hub: Hub) -> list[app_commands.Command[Any, ..., Any]]:

    @app_commands.command(description="Say something where you are in the town")
    @app_commands.guild_only()
    async def say(interaction: discord.Interaction, text: Speech) -> None:
        await run(hub, interaction, lambda town, person: town.service.say(person, text))

    @app_commands.command(description="Be a resident's inner voice: they hear it as their own "
                                      "thought")
    @app_commands.guild_only()
    async def whisper(interaction: discord.Interaction, resident: Resident,
                      text: Whisper) -> None:
        await run(hub, interaction,
                  lambda town, person: town.service.whisper(person, resident, text))

    @app_commands.command(name="help", description="What the town is and how to take part")
    @app_commands.guild_only()
    async def help_(interaction: discord.Interaction) -> None:
        async def work(town: GuildTown, person: Person) -> Reply:
            return Reply(embed=help_card(town.engine.world.town, person.moderator,
                                         town.engine.model.label))
        await run(hub, interaction, work)

    @app_commands.command(description="Ask a resident a question; ask more in the thread it "
                                      "opens")
    @app_commands.describe(as_persona="ask as someone else, described in one line",
                           remember="the resident remembers this interview",
                           memory="which memories the answer may use (the paper's conditions)")
    @app_commands.guild_only()
    async def interview(interaction: discord.Interaction, resident: Resident, question: Question,
                        as_persona: About | None = None, remember: bool = False,
                        memory: Memory = "full") -> None:
        await interaction.response.defer(thinking=True)  # the answer is public, in the channel
        person = hub.person(interaction.user)
        try:
            town = hub.town(interaction.guild_id)
            outcome = await town.service.interview(person, resident, question, as_persona,
                                                   remember, MEMORY_ACCESS[memory])
        except TownError as refusal:
            await refuse(interaction, refusal, public=True)
            return
        who = outcome.data["resident"]
        # the question and the asker as the town cleaned them, never as typed
        asker = bounded(as_persona, "description") if as_persona else person.name
        card = interview_card(who, bounded(question, "interview"), outcome.data["answer"],
                              town.outlet.avatar(who), asker=asker)
        await send(interaction, Reply(embed=card, view=ask_button()), ephemeral=False)
        await _open_thread(interaction, town, InterviewThread(who, memory, remember, person.id))

    @whisper.autocomplete("resident")
    @interview.autocomplete("resident")
    async def residents(interaction: discord.Interaction, typed: str) -> Choices:
        return await suggest(hub, interaction, typed, lambda town: sorted(town.engine.minds))

    return [say, whisper, interview, help_]


async def _open_thread(interaction: discord.Interaction, town: GuildTown,
                       interview: InterviewThread) -> None:
    """Further questions go in a thread on the answer (a follow-up message knows no server, so
    the thread starts from the original response, else in the channel); without one the answer
    still stands."""
    name = f"Interview with {interview.resident}"[:100]
    thread = None
    with contextlib.suppress(discord.HTTPException):
        message = await interaction.original_response()
        thread = await message.create_thread(name=name, auto_archive_duration=60)
    channel = interaction.channel
    if thread is None and isinstance(channel, discord.TextChannel):
        with contextlib.suppress(discord.HTTPException):
            thread = await channel.create_thread(name=name, auto_archive_duration=60,
                                                 type=discord.ChannelType.public_thread)
    if thread is None:
        log.warning("server %s: no thread for an interview in #%s", town.guild_id, channel)
        return
    await town.store.open_thread(thread.id, interview)


def all_commands(hub: Hub) -> list[app_commands.Command[Any, ..., Any] | app_commands.Group]:
    return [TownGroup(hub), ObjectGroup(hub), ModGroup(hub), *visitor_commands(hub)]
