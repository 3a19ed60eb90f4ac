"""The engine: owns the shared world state and runs one tick at a time (the steps of a tick,
and why a talk may carry over into the next ones, are in docs/architecture.md). With the
offline model and a fixed seed, the same start gives the same transcript. Between ticks, people
change the town only through the commands of `town/commands.py`, each inside `change()`.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from townbot.llm.port import CallContext, LanguageModel
from townbot.llm.stack import WithContext
from townbot.mind import dialogue
from townbot.mind.agent import AgentMind, Intent, Perception, starting_knowledge
from townbot.mind.memory import MemoryStream
from townbot.mind.settings import MindSettings
from townbot.mind.state import MindState, PlaceKnowledge
from townbot.prompting import PeopleText
from townbot.store.checkpoints import save_checkpoint
from townbot.store.database import (
    AuditEntry,
    ConversationRecord,
    Store,
    StoreError,
    TickChanges,
    TownRow,
    UsageLog,
    VisitorRow,
)
from townbot.town.body import Body
from townbot.town.mishaps import is_alarming, mishap
from townbot.town.perception import Scene, shown
from townbot.world.clock import GameClock, format_game_time, minute_of_day, parse_game_time
from townbot.world.events import TownEvent
from townbot.world.model import World, join_path

MISHAP_QUIET_TICKS = 12  # after trouble with an object it stays calm for two game hours


@dataclass
class Talk:
    """A conversation under way: where and when it began, and the task writing its lines."""

    first: str
    second: str
    sector: str
    arena: str
    started: datetime
    lines: asyncio.Task[list[dialogue.Line]]

    @property
    def pair(self) -> tuple[str, str]:
        return self.first, self.second


@dataclass
class Hold:
    """A use case under way (Engine.held): what its commands changed, to commit at its end
    with its audit rows."""

    events: list[TownEvent] = field(default_factory=list)
    audits: list[AuditEntry] = field(default_factory=list)
    flags: dict[str, Any] = field(default_factory=dict)  # towns columns to set (set_flags)
    changed: bool = False


@dataclass
class SavedTown:
    """A town as its database holds it, loaded whole: when the engine opens a town, and when it
    goes back to the last commit."""

    bodies: dict[str, Body]
    states: dict[str, MindState]
    streams: dict[str, MemoryStream]
    objects: dict[str, str]
    visitors: list[VisitorRow]

    @classmethod
    async def load(cls, store: Store, town: TownRow, world: World) -> SavedTown:
        rows = await store.agents(town.id)
        missing = sorted(set(world.personas) - set(rows))
        if missing:
            raise StoreError(f"residents {', '.join(missing)} are not in this town's database; "
                             "use the persona folder the town was founded with or a new --db")
        bodies = {n: Body.from_dict(b) for n, (b, _) in rows.items() if n in world.personas}
        states = {n: MindState.from_dict(m) for n, (_, m) in rows.items() if n in world.personas}
        streams = {name: MemoryStream(town.embedding_dim) for name in bodies}
        async for chunk in store.memory_chunks(town.id):  # a chunk of rows at a time
            if chunk.agent in streams:
                streams[chunk.agent].extend_stored(chunk.memories, chunk.vectors)
        return cls(bodies, states, streams, await store.objects(town.id),
                   await store.visitors(town.id))


@dataclass
class Engine:
    world: World
    store: Store
    town: TownRow
    model: LanguageModel  # the caller's model, stamped with this town's context (see _assemble)
    clock: GameClock
    minds: dict[str, AgentMind]
    bodies: dict[str, Body]
    objects: dict[str, str]
    settings: MindSettings = field(default_factory=MindSettings)
    usage: UsageLog | None = None  # where the model's usage records of this town go

    def __post_init__(self) -> None:
        self.defaults: dict[str, str] = self.world.default_object_states()
        self._changed_objects: dict[str, tuple[str, str]] = {}
        self._conversations: list[ConversationRecord] = []
        self._last_mishap: dict[str, int] = {}  # object path -> tick of its last mishap
        self.people: dict[str, VisitorRow] = {}  # person id -> visitor (or taken-over resident)
        self._departed: list[tuple[str, str]] = []
        self._talks: list[Talk] = []  # under way, in the order they began
        # The use case under way in this task (see held): a context variable, so that a tick
        # or another person's use case running beside it never joins its commit.
        self._hold: ContextVar[Hold | None] = ContextVar(f"hold of {self.town.id}", default=None)
        self._budget_level = self._budget_now()  # as the town opens: said only when it changes

    # --- creation and resumption ------------------------------------------------------------

    @classmethod
    async def open(cls, world: World, store: Store, model: LanguageModel, *, seed: int = 0,
                   settings: MindSettings | None = None) -> Engine:
        """Resume the town in the database, or found it when the database is new."""
        town = await store.town()
        settings = settings or MindSettings()
        if town is None:
            return await cls._found(world, store, model, seed, settings)
        if town.embedding_dim != model.embedding_dim or town.embedding_model != model.embedding_model:
            raise StoreError(
                f"this town's memories were embedded with {town.embedding_model} "
                f"({town.embedding_dim} dimensions) but the configured model embeds with "
                f"{model.embedding_model} ({model.embedding_dim}); configure the original "
                f"embedding model (TOWNBOT_EMBEDDING_MODEL), re-embed the memories with "
                f"`townbot reembed --db {store.path}`, or start a new database")
        return cls._assemble(world, store, model, town, await SavedTown.load(store, town, world),
                             settings)

    @classmethod
    async def _found(cls, world: World, store: Store, model: LanguageModel, seed: int,
                     settings: MindSettings) -> Engine:
        arenas_of = {name: list(s.arenas) for name, s in world.sectors.items()}
        bodies = {name: Body(p.home_sector, p.home_arena) for name, p in world.personas.items()}
        states = {name: MindState(places=PlaceKnowledge(starting_knowledge(p, arenas_of)))
                  for name, p in world.personas.items()}
        objects = world.default_object_states()
        town = await store.create_town(
            world.town, world.start, world.tick_minutes, seed, model.label, model.embedding_model,
            model.embedding_dim, {n: (bodies[n].to_dict(), states[n].to_dict()) for n in bodies},
            objects)
        engine = cls._assemble(world, store, model, town, SavedTown(bodies, states, {}, objects, []),
                               settings)
        for mind in engine.minds.values():  # each persona's seed memories, observed at the start
            for text in mind.persona.seed_memories:
                mind.remember("observation", text, when=engine.clock.now)
        await asyncio.gather(*(m.flush_memories(engine.clock.now, force=True)
                               for m in engine.minds.values()))
        await engine._commit([], advance=False)
        await engine._keep_day_start(0)
        return engine

    def _take(self, saved: SavedTown) -> None:
        """A saved town's minds, bodies, objects and people, in place of what was here."""
        self.minds = {name: AgentMind(self.world.personas[name], self.model,
                                      saved.streams.get(name) or MemoryStream(self.town.embedding_dim),
                                      saved.states[name], self.settings,
                                      clock_now=lambda: self.clock.now)
                      for name in sorted(saved.bodies)}
        self.bodies, self.objects, self.people = saved.bodies, saved.objects, {}
        for row in saved.visitors:
            self.people[row.person_id] = row
            if row.resident is None:
                self.bodies[row.name] = Body.from_dict(row.body)

    async def _restore(self) -> None:
        """Put the town in memory back to what the database holds: a change that failed
        half-way, or whose commit failed, leaves nothing behind for the next one to trip over."""
        self.drop_talks()  # their voices belong to the minds being replaced
        town = await self.store.town(self.town.id)
        assert town is not None
        saved = await SavedTown.load(self.store, town, self.world)
        self.town, self.clock.tick = town, town.tick
        self._take(saved)
        self._changed_objects, self._conversations, self._departed = {}, [], []

    @asynccontextmanager
    async def change(self) -> AsyncIterator[list[TownEvent]]:
        """One change by a person, all or nothing: it is committed at the end with the events
        gathered in the yielded list; if anything fails, the town goes back to the last commit.
        Inside `held`, the change joins the use case's one commit instead."""
        events: list[TownEvent] = []
        hold = self._hold.get()
        if hold is not None:
            hold.changed = True  # a failure from here on is undone by `held`
            yield events
            hold.events += events
            return
        try:
            yield events
            await self._commit(events, advance=False)
        except BaseException:
            await self._restore()
            raise

    @asynccontextmanager
    async def held(self) -> AsyncIterator[Hold]:
        """One use case, all or nothing with the audit rows it puts in the yielded `Hold`: its
        commands' changes commit once, at the end, in the same transaction."""
        hold = Hold()
        token = self._hold.set(hold)
        try:
            yield hold
            self._hold.reset(token)
            if hold.changed or hold.flags:
                await self._commit(hold.events, advance=False, audits=hold.audits,
                                   flags=hold.flags)
            else:
                await self.store.add_audits(self.town.id, hold.audits)
        except BaseException:
            if self._hold.get() is hold:
                self._hold.reset(token)
            if hold.changed or hold.flags:
                await self._restore()
            raise

    @classmethod
    def _assemble(cls, world: World, store: Store, model: LanguageModel, town: TownRow,
                  saved: SavedTown, settings: MindSettings) -> Engine:
        clock = GameClock(parse_game_time(town.start), town.tick_minutes, town.tick)
        usage = store.usage_log(town.id, lambda: clock.tick)
        # Every call this town makes carries its game day and its usage sink.
        model = WithContext(model, lambda: CallContext(game_day=clock.day_number, usage=usage))
        engine = cls(world, store, town, model, clock, {}, {}, {}, settings, usage=usage)
        engine._take(saved)
        return engine

    # --- rules of the world (what a mind may ask while it thinks: mind.agent.WorldView) --------

    def arenas_of(self, sector: str) -> list[str]:
        return list(self.world.sectors[sector].arenas)

    def objects_in(self, sector: str, arena: str) -> list[str]:
        return list(self.world.arena(sector, arena).objects)

    def norms_of(self, sector: str) -> str:
        return " ".join(self.world.sectors[sector].norms)

    def availability(self, person: str, sector: str, arena: str | None) -> str | None:
        """Why `person` cannot enter now (closing time, a full one-person room), or None."""
        place = self.world.sectors.get(sector)
        if place is None:
            return f"there is no place called {sector}"
        if not place.admits(person, minute_of_day(self.clock.now)):
            return f"{sector} is closed now (open {place.hours.describe()})"  # type: ignore[union-attr]
        if arena is None:
            return None
        room = place.arenas.get(arena)
        if room is None:
            return f"{sector} has no {arena}"
        if room.capacity is not None:
            inside = [n for n, b in self.bodies.items() if n != person and
                      ((b.sector, b.arena) == (sector, arena)
                       or (b.travel_sector, b.travel_arena) == (sector, arena))]
            if len(inside) >= room.capacity:
                return f"the {arena} is occupied by {', '.join(sorted(inside))}"
        return None

    # --- the tick ---------------------------------------------------------------------------

    async def tick(self, *, carry_after: float | None = None) -> list[TownEvent]:
        """One tick, all or nothing. `carry_after`: seconds after the tick began when talks
        still under way are left to go on; None waits for every talk, as `sim` does."""
        try:
            return await self._tick(carry_after)
        except BaseException:
            await self._restore()
            raise

    async def _tick(self, carry_after: float | None) -> list[TownEvent]:
        began = asyncio.get_running_loop().time()
        now = self.clock.now
        events: list[TownEvent] = []
        for body in self.bodies.values():
            if body.walking and body.arrives_by(now):
                body.arrive()
        scene = Scene(self.bodies, self.objects, self.defaults)
        perceptions = {
            name: Perception(now, body.sector, body.arena,
                             [] if body.action == "sleeping" else scene.perceive(name))
            for name, body in self.bodies.items() if name in self.minds}
        skipped = self.controlled().keys() | self.talking()  # taken over, or still talking
        thinking = [name for name in sorted(self.minds) if name not in skipped]
        intents = await asyncio.gather(*(self.minds[name].think(perceptions[name], self)
                                         for name in thinking))
        for intent in intents:
            self._apply(intent, events)
        deadline = None if carry_after is None else began + carry_after
        await self._hold_conversations(intents, events, deadline)
        self._mishaps(events)
        self._say_budget(events)
        await self._commit(events)
        return events

    def _budget_now(self) -> str | None:
        budget = self.model.report().budget
        return None if budget is None else budget.level(self.clock.day_number)

    def _say_budget(self, events: list[TownEvent]) -> None:
        """One line in #town-hall when the model budget begins saving, reaches a cap, or a new
        game day lifts a daily cap (people would otherwise only notice quieter residents)."""
        level = self._budget_now()
        if level is None or level == self._budget_level:
            return
        budget = self.model.report().budget
        assert budget is not None
        before, self._budget_level = self._budget_level or level, level
        events.append(self.event("notice", "Town hall", budget.change_line(
            before, level, self.clock.day_number), "💰", None))

    def controlled(self) -> dict[str, str]:
        """Residents a person has taken over (they do not think for themselves meanwhile)."""
        return {row.resident: pid for pid, row in self.people.items() if row.resident}

    def depart(self, person_id: str) -> None:
        row = self.people.pop(person_id)
        if row.resident is None:
            self.bodies.pop(row.name, None)
        self._departed.append((person_id, format_game_time(self.clock.now)))

    def _mishaps(self, events: list[TownEvent]) -> None:
        for name in sorted(self.bodies):
            body = self.bodies[name]
            path = body.object_path
            if path is None or self.objects.get(path) != body.object_state:
                continue
            if self.clock.tick - self._last_mishap.get(path, -MISHAP_QUIET_TICKS) < \
                    MISHAP_QUIET_TICKS:
                continue  # something just put right does not go wrong again at once
            state = mishap(path, name, self.clock.tick, self.town.seed)
            if state is not None:
                self.set_object(path, state)
                sector, arena, obj = path.split(": ")
                events.append(self.event("object", f"The {obj}", f"is {state}!", "⚠️", sector,
                                          f"{arena}: {obj}"))

    # --- conversations ----------------------------------------------------------------------

    def talking(self) -> set[str]:
        """Everyone in a conversation still under way."""
        return {name for talk in self._talks for name in talk.pair}

    def drop_talks(self) -> None:
        """Abandon the talks under way (the town is being reloaded or shut): nothing of them
        was committed, so nothing is lost; their people think again at the next tick."""
        for talk in self._talks:
            if talk.lines.done() and not talk.lines.cancelled():
                talk.lines.exception()  # a talk that failed is dropped, not left unread
            talk.lines.cancel()
        self._talks = []

    def _can_talk(self, first: str, second: str, busy: set[str]) -> bool:
        a, b = self.bodies[first], self.bodies.get(second)
        return (b is not None and not busy & {first, second} and not a.walking and not b.walking
                and (a.sector, a.arena) == (b.sector, b.arena) and b.action != "sleeping")

    async def _hold_conversations(self, intents: list[Intent], events: list[TownEvent],
                                  deadline: float | None = None) -> None:
        self._start_talks(intents)
        await self._settle_talks(events, deadline)

    def _start_talks(self, intents: list[Intent]) -> None:
        """Start the talks minds asked for, in fixed order; each person joins one talk at a
        time. The voices are taken before the two are marked as talking."""
        busy = self.talking()
        for intent in intents:
            partner = self.named(intent.talk_to) if intent.talk_to else None
            if partner and self._can_talk(intent.agent, partner, busy):
                busy |= {intent.agent, partner}
                self._talks.append(self._start_talk(intent.agent, partner))

    def _start_talk(self, first: str, second: str) -> Talk:
        """Who speaks, where, when and in what state is taken now, so a talk that carries over
        is not changed by the ticks it overlaps."""
        body = self.bodies[first]
        sector, arena = body.sector or "", body.arena or ""
        voices = (self.voice_of(first), self.voice_of(second))
        lines = asyncio.ensure_future(self._lines(*voices, with_visitor=second not in self.minds,
                                                  now=self.clock.now,
                                                  place=f"{body.sector}: {body.arena}"))
        for name, partner in ((first, second), (second, first)):
            talker = self.bodies[name]
            talker.action, talker.emoji = f"talking with {self.shown(partner)}", "💬"
            talker.announced = f"{sector}|{arena}|{talker.action}"
        return Talk(first, second, sector, arena, self.clock.now, lines)

    async def _settle_talks(self, events: list[TownEvent], deadline: float | None) -> None:
        """Wait for the talks under way (until `deadline` on the loop's clock, if given), then
        post and remember every one that has ended, in the order they began."""
        running = [talk.lines for talk in self._talks]
        if running:
            timeout = None if deadline is None else \
                max(0.0, deadline - asyncio.get_running_loop().time())
            await asyncio.wait(running, timeout=timeout)
        ended = [talk for talk in self._talks if talk.lines.done()]
        self._talks = [talk for talk in self._talks if not talk.lines.done()]
        follow_ups = []
        for talk in ended:
            follow_ups += self._record_conversation(talk, talk.lines.result(), events)
        await asyncio.gather(*follow_ups)

    def shown(self, name: str) -> str:
        """A person's name as minds know it (see perception.shown)."""
        body = self.bodies.get(name)
        return shown(name, body) if body is not None else name

    def named(self, seen: str) -> str:
        """The person a mind means by a name it knows (the inverse of `shown`)."""
        return next((n for n, body in self.bodies.items()
                     if body.visitor is not None and shown(n, body) == seen), seen)

    def shown_lines(self, lines: list[dialogue.Line]) -> list[dialogue.Line]:
        return [(self.shown(speaker), text) for speaker, text in lines]

    def voice_of(self, name: str) -> dialogue.Voice:
        body = self.bodies[name]
        if name in self.minds:
            return self.minds[name].voice(body.action)
        return dialogue.Voice(self.shown(name), f"{self.shown(name)}, a visitor: "
                              f"{PeopleText(body.visitor or '', 120)}",
                              MemoryStream(self.town.embedding_dim), body.action)

    async def _lines(self, first: dialogue.Voice, second: dialogue.Voice, *, with_visitor: bool,
                     now: datetime, place: str) -> list[dialogue.Line]:
        count = self.settings.retrieval_count
        if with_visitor:  # greet them and let the person answer
            line = await dialogue.next_line(self.model, first, second, [], now, place, count)
            return [(first.name, line.text)]
        if self.settings.whole_conversation:
            return await dialogue.converse_in_one_call(self.model, first, second, now, place,
                                                       count)
        return await dialogue.converse_by_lines(self.model, first, second, now, place,
                                                self.settings.turn_cap, count)

    def _record_conversation(self, talk: Talk, lines: list[dialogue.Line],
                             events: list[TownEvent]) -> list:
        """Post the lines, keep the record, and let both remember it (returns awaitables)."""
        now, sector, arena = talk.started, talk.sector, talk.arena
        first, second = talk.pair
        end = now + timedelta(minutes=max(5, len(lines)))
        times = [format_game_time(now + timedelta(minutes=i)) for i in range(len(lines))]
        channel = self.world.sectors[sector].channel
        for (speaker, text), when in zip(lines, times, strict=True):
            events.append(TownEvent(when, channel, "speech", speaker, text, "💬",
                                    f"{sector}: {arena}"))
        self._conversations.append(ConversationRecord(
            format_game_time(now), format_game_time(end), sector, arena, (first, second),
            tuple((s, t, w) for (s, t), w in zip(lines, times, strict=True))))
        talkers = [(name, partner) for name, partner in ((first, second), (second, first))
                   if name in self.minds]
        shown_lines = self.shown_lines(lines)  # read, never changed, by everyone below
        pronouns = {self.shown(name): dialogue.pronoun_of(self.minds[name].persona)
                    for name in talk.pair if name in self.minds}
        shared = dialogue.JointTakeaways(self.model, [name for name, _ in talkers],
                                         shown_lines, pronouns)  # one call for both
        return [self.minds[name].after_conversation(self.shown(partner), shown_lines,
                                                    f"{sector}: {arena}", now, end, sector, arena,
                                                    shared)
                for name, partner in talkers]

    def _apply(self, intent: Intent, events: list[TownEvent]) -> None:
        body = self.bodies[intent.agent]
        destination = (intent.sector, intent.arena)
        if body.walking and (body.travel_sector, body.travel_arena) == destination:
            return
        if (body.sector, body.arena) != destination:
            self._move(intent, body, events)
            if (body.sector, body.arena) != destination:
                return
        self._do(intent, body, events)

    def _move(self, intent: Intent, body: Body, events: list[TownEvent]) -> None:
        now = self.clock.now
        reason = self.availability(intent.agent, intent.sector, intent.arena)
        if reason is not None:
            self.minds[intent.agent].refused(intent.sector, intent.arena, reason, now)
            here = body.sector or intent.sector
            events.append(self.event("notice", intent.agent, f"cannot go in: {reason}", "🚫",
                                      here, f"{intent.sector}: {intent.arena}"))
            return
        self._release_object(body)
        origin = body.sector or body.travel_sector
        if origin == intent.sector:
            body.sector, body.arena = intent.sector, intent.arena
            body.travel_sector = body.travel_arena = body.arrive_at = None
            return
        minutes = self.world.walking_minutes(origin, intent.sector) if origin else 0
        body.set_travel(intent.sector, intent.arena, now + timedelta(minutes=minutes))
        body.action, body.emoji, body.announced = f"walking to {intent.sector}", "🚶", None
        events.append(self.event("move", intent.agent, f"is walking to {intent.sector} "
                                  f"({minutes} min)", "🚶", origin or intent.sector,
                                  f"{intent.sector}: {intent.arena}"))

    def _do(self, intent: Intent, body: Body, events: list[TownEvent]) -> None:
        path = None
        if intent.object and intent.object in self.world.arena(intent.sector, intent.arena).objects:
            path = join_path(intent.sector, intent.arena, intent.object)
        if path != body.object_path:
            self._release_object(body)
        if path is not None and intent.object_state:
            # Cooking on a burning stove does not put it out: trouble (a person's /set, a mishap)
            # stays until a resident reacts to it, so whoever comes in still sees it.
            if intent.tending or not is_alarming(self.objects.get(path, "")):
                self.set_object(path, intent.object_state)
            body.object_path, body.object_state = path, intent.object_state
        body.action, body.emoji = intent.action, intent.emoji
        announcement = f"{intent.sector}|{intent.arena}|{intent.action}"
        if body.announced != announcement:
            body.announced = announcement
            where = f"{intent.arena}: {intent.object}" if path else intent.arena
            events.append(self.event("action", intent.agent, f"is {intent.action}",
                                      intent.emoji, intent.sector, where))

    def _release_object(self, body: Body) -> None:
        """Put a used object back to its default, unless someone has changed it since."""
        path = body.object_path
        if path is not None and self.objects.get(path) == body.object_state:
            users = [b for b in self.bodies.values() if b is not body and b.object_path == path]
            if not users:
                self.set_object(path, self.defaults[path])
        body.object_path = body.object_state = None

    def set_object(self, path: str, state: str) -> None:
        if is_alarming(self.objects.get(path, "")) or is_alarming(state):
            self._last_mishap[path] = self.clock.tick  # quiet for a while after trouble
        if self.objects.get(path) != state:
            self.objects[path] = state
            self._changed_objects[path] = (state, format_game_time(self.clock.now))

    def event(self, kind: str, actor: str, text: str, emoji: str, sector: str | None,
              place: str = "") -> TownEvent:
        """An event now in the sector's channel (in #town-hall for None or no sector)."""
        channel = self.world.sectors[sector].channel if sector in self.world.sectors \
            else self.world.town_hall_channel
        return TownEvent(format_game_time(self.clock.now), channel, kind, actor, text, emoji,
                         place)

    # --- the commit -------------------------------------------------------------------------

    async def _commit(self, events: list[TownEvent], advance: bool = True,
                      audits: list[AuditEntry] | None = None,
                      flags: dict[str, Any] | None = None) -> None:
        next_tick = self.clock.tick + (1 if advance else 0)
        day_begins = advance and next_tick % self.clock.ticks_for(days=1) == 0
        changes = TickChanges(town_id=self.town.id, next_tick=next_tick, tick=self.clock.tick,
                              events=events, compact=day_begins, objects=self._changed_objects,
                              conversations=self._conversations, visitors=self._visitor_rows(),
                              departed=self._departed, audits=audits or [], flags=flags or {})
        # Only what was marked changed is encoded and written; the marks are cleared now, and
        # a failed commit reloads the town (see tick and _change), so no change is lost.
        for name, mind in self.minds.items():
            body = self.bodies[name].take_change()
            if body is not None:
                changes.bodies[name] = body
            changes.mind_parts += [(name, part, text)
                                   for part, text in mind.state.take_changes().items()]
            added, touched = mind.stream.take_changes()
            changes.new_memories += [(name, m, vector) for m, vector
                                     in zip(added, mind.stream.vectors(added), strict=True)]
            if touched:
                changes.touched.append((name, touched))
        # What the calls cost joins the commit, and is stored even if the commit fails.
        await self.store.save_tick(changes, self.usage)
        if changes.flags:
            self.town = replace(self.town, **changes.flags)
        self._changed_objects, self._conversations, self._departed = {}, [], []
        self.clock.tick = next_tick
        if changes.compact:
            await self._keep_day_start(next_tick)

    async def _keep_day_start(self, tick: int) -> None:
        """A checkpoint of the town as a game day starts, for `townbot fork --at DAY`. The
        tick is committed already: a checkpoint that cannot be written is only logged."""
        try:
            await save_checkpoint(self.store, self.town.id, self.clock.day_number, tick,
                                  format_game_time(self.clock.now))
        except (sqlite3.Error, StoreError) as error:
            logging.getLogger(__name__).warning("day %d's checkpoint was not kept: %s",
                                                self.clock.day_number, error)

    def _visitor_rows(self) -> list[VisitorRow]:
        """Every person's row, a visitor's with their body as it is now."""
        return [replace(row, body={**row.body, **self.bodies[row.name].to_dict()})
                if row.resident is None and row.name in self.bodies else row
                for row in self.people.values()]

    # --- for the commands people give between ticks (town/commands.py) ------------------------

    def record_exchange(self, first: str, second: str, lines: list[dialogue.Line]) -> None:
        """Keep a person's exchange with a resident as a conversation, so the visitor's side
        is on record too."""
        body = self.bodies[second]
        now = format_game_time(self.clock.now)
        self._conversations.append(ConversationRecord(
            now, now, body.sector or "", body.arena or "", (first, second),
            tuple((speaker, text, now) for speaker, text in lines)))

    def set_flags(self, *, paused: bool | None = None, tick_seconds: float | None = None) -> None:
        """Pause or resume the town, or change its pace; only inside `held`, so that the
        change commits with its audit row."""
        hold = self._hold.get()
        assert hold is not None, "set_flags is a use case's change: call it inside held()"
        if paused is not None:
            hold.flags["paused"] = paused
        if tick_seconds is not None:
            hold.flags["tick_seconds"] = tick_seconds
