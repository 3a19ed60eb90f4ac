"""What people do to the town between ticks. Each command changes minds and bodies inside one
`Engine.change()` (all or nothing, joined to the use case's commit inside `Engine.held`) and
returns its events; the town service has validated the request before.
"""

from __future__ import annotations

from datetime import timedelta

from townbot.mind import dialogue
from townbot.prompting import PeopleText
from townbot.store.database import VisitorRow
from townbot.town.body import Body
from townbot.town.engine import Engine
from townbot.world.clock import format_game_time
from townbot.world.events import TownEvent


async def arrive(engine: Engine, person_id: str, name: str, description: str, sector: str,
                 arena: str) -> list[TownEvent]:
    """A visitor joins the town at a place."""
    async with engine.change() as events:
        body = Body(sector, arena, action="looking around", emoji="👋", visitor=description)
        engine.bodies[name] = body
        engine.people[person_id] = VisitorRow(
            person_id, name, description,
            {**body.to_dict(), "joined": format_game_time(engine.clock.now)})
        events.append(engine.event("arrival", name, f"({PeopleText(description, 120)}) arrives",
                                   "👋", sector, f"{sector}: {arena}"))
    return events


async def take_over(engine: Engine, person_id: str, resident: str) -> None:
    """A person speaks and moves as a resident, who stops acting on their own meanwhile."""
    async with engine.change():
        engine.people[person_id] = VisitorRow(
            person_id, resident, f"a person speaking as {resident}",
            {"joined": format_game_time(engine.clock.now)}, resident=resident)


async def walk(engine: Engine, name: str, sector: str, arena: str) -> tuple[list[TownEvent], int]:
    """A person's body sets off for a place; returns the events and the walking minutes."""
    async with engine.change() as events:
        body = engine.bodies[name]
        origin = body.sector or body.travel_sector
        minutes = engine.world.walking_minutes(origin, sector) if origin else 0
        if origin == sector:
            body.sector, body.arena = sector, arena
        else:
            body.set_travel(sector, arena, engine.clock.now + timedelta(minutes=minutes))
            body.action, body.emoji = f"walking to {sector}", "🚶"
            events.append(engine.event("move", name, f"is walking to {sector} ({minutes} min)",
                                       "🚶", origin, f"{sector}: {arena}"))
    return events, minutes


async def leave(engine: Engine, person_id: str) -> list[TownEvent]:
    """A person leaves: a visitor's body goes, a taken-over resident acts alone again."""
    async with engine.change() as events:
        row = engine.people[person_id]
        name = row.resident or row.name
        events.append(engine.event(
            "departure", name, "leaves the town" if not row.resident
            else "is on their own again", "👋", engine.bodies[name].sector))
        engine.depart(person_id)
    return events


async def speak(engine: Engine, speaker: str, said: str, listeners: list[str], addressed: str | None,
                history: list[dialogue.Line]) -> tuple[list[TownEvent], str | None]:
    """A person says something in a sector: every listener remembers it; the addressed
    resident answers at once (from `history`, the exchange so far) and remembers that."""
    async with engine.change() as events:
        body = engine.bodies[speaker]
        place = f"{body.sector}: {body.arena}"
        events.append(engine.event("speech", speaker, said, "💬", body.sector, place))
        for listener in listeners:
            engine.minds[listener].remember("observation",
                                            f"{engine.shown(speaker)} said: {PeopleText(said)}")
        reply = None
        if addressed is not None:
            reply = await _answer(engine, speaker, addressed, said, place, history)
            events.append(engine.event("speech", addressed, reply, "💬", body.sector, place))
            engine.record_exchange(speaker, addressed, [(speaker, said), (addressed, reply)])
        for listener in listeners:
            await engine.minds[listener].flush_memories(engine.clock.now, force=True)
    return events, reply


async def _answer(engine: Engine, speaker: str, resident: str, said: str, place: str,
                  history: list[dialogue.Line]) -> str:
    line = await dialogue.next_line(engine.model, engine.voice_of(resident),
                                    engine.voice_of(speaker), engine.shown_lines(history),
                                    engine.clock.now, place, engine.settings.retrieval_count)
    exchange = (f"{engine.shown(speaker)} said to {resident}: {PeopleText(said)}; "
                f"{resident} answered: {PeopleText(line.text)}")
    engine.minds[resident].remember("conversation", exchange)
    if speaker in engine.minds:
        engine.minds[speaker].remember("conversation", exchange)
    return line.text


async def whisper(engine: Engine, resident: str, directive: str) -> tuple[str, bool]:
    """The inner voice: the resident's own thought; returns it and whether the day's plan
    changed."""
    async with engine.change():
        mind = engine.minds[resident]
        before = [b.activity for b in mind.state.planning.blocks]
        thought = await mind.hear_inner_voice(directive, engine.clock.now)
        after = [b.activity for b in mind.state.planning.blocks]
    return thought, after != before


async def remember_interview(engine: Engine, resident: str, asker: str, question: str,
                             answer: str) -> None:
    async with engine.change():
        mind = engine.minds[resident]
        mind.remember("conversation", f"{asker} asked {resident}: {PeopleText(question)}; "
                                      f"{resident} answered: {PeopleText(answer)}")
        await mind.flush_memories(engine.clock.now, force=True)


async def change_object(engine: Engine, path: str, state: str) -> list[TownEvent]:
    """A person changes an object's state; anyone there notices at the next tick."""
    async with engine.change() as events:
        engine.set_object(path, state)
        sector, arena, obj = path.split(": ")
        events.append(engine.event("object", f"The {obj}", f"is now {state}", "⚠️", sector,
                                   f"{arena}: {obj}"))
    return events


async def seed(engine: Engine, resident: str, text: str) -> None:
    """A moderator plants an intention as the resident's own thought."""
    await apply_scenario(engine, [(resident, text)], [], None)


async def apply_scenario(engine: Engine, seeds: list[tuple[str, str]], objects: list[tuple[str, str]],
                         announcement: str | None) -> list[TownEvent]:
    async with engine.change() as events:
        for resident, thought in seeds:
            mind = engine.minds[resident]
            mind.remember("thought", f"{resident} thinks: {PeopleText(thought)}")  # a person's words
            await mind.flush_memories(engine.clock.now, force=True)
        for path, state in objects:
            engine.set_object(path, state)
        if announcement:
            events.append(engine.event("announcement", "Town hall", announcement, "📣", None))
    return events


async def announce(engine: Engine, notice: str, sector: str | None) -> tuple[list[TownEvent], int]:
    """Town hall announces to everyone awake (in a sector, or the whole town); returns the
    events and how many residents heard it."""
    async with engine.change() as events:
        listeners = [n for n, b in engine.bodies.items()
                     if n in engine.minds and b.action != "sleeping" and not b.walking
                     and (sector is None or b.sector == sector)]
        for name in listeners:
            mind = engine.minds[name]
            mind.remember("observation", f"Announcement: {PeopleText(notice)}")
            await mind.flush_memories(engine.clock.now, force=True)
        events.append(engine.event("announcement", "Town hall", notice, "📣", sector))
    return events, len(listeners)
