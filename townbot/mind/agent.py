"""One resident's mind: it perceives, remembers, reflects, plans, reacts and chooses its next
action. The engine hands it a perception and a read-only view of the world; it answers with an
intent (where it wants to be, what it is doing, whom it wants to talk to). It never changes
the world itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from townbot import wording
from townbot.llm.port import LanguageModel
from townbot.llm.purposes.choose_place import Availability
from townbot.llm.purposes.importance import ImportanceQuestion
from townbot.llm.purposes.react import Reaction
from townbot.mind import dialogue, planning, reacting, reflection, summary
from townbot.mind.memory import Memory, MemoryStream
from townbot.mind.plans import PlanBlock, PlanStep
from townbot.mind.reacting import Sighting
from townbot.mind.settings import MindSettings
from townbot.mind.state import MindState, Pending, Refusal
from townbot.world.clock import clock_face, minute_of_day, span_of_hours, span_of_minutes
from townbot.world.model import Persona

REFUSAL_MEMORY = timedelta(minutes=30)  # a refused place is avoided for this long
# New texts are scored for importance together, at most this often (one call, not nine);
# until then they are retrievable with a provisional importance.
SCORING_INTERVAL = timedelta(minutes=180)
PROVISIONAL_IMPORTANCE = 3
NOTABLE_LIMIT = 10  # important news kept for the next look at today's plan
TRANSCRIPT_LIMIT = 700  # characters of a conversation kept in one memory
SLEEPING = "sleeping"
TOLD_LIMIT = 20  # what we told each person, kept so we do not repeat ourselves
# Kinds whose importance accumulates towards the next reflection (what happens to the agent).
EXPERIENCE = ("observation", "conversation", "thought")


class WorldView(Protocol):
    """What a mind may ask about the world while it thinks (a snapshot of the tick)."""

    def availability(self, person: str, sector: str, arena: str | None) -> str | None: ...

    def arenas_of(self, sector: str) -> list[str]: ...

    def objects_in(self, sector: str, arena: str) -> list[str]: ...

    def norms_of(self, sector: str) -> str: ...


@dataclass
class Perception:
    now: datetime
    sector: str | None  # None while walking between sectors
    arena: str | None
    sightings: list[Sighting] = field(default_factory=list)


@dataclass
class Intent:
    agent: str
    sector: str
    arena: str
    action: str
    emoji: str
    object: str | None = None
    object_state: str | None = None
    asleep: bool = False
    talk_to: str | None = None
    tending: bool = False  # dealing with trouble in the object: its state may replace the trouble


def _timetable(blocks: list[PlanBlock]) -> str:
    """'7:00 am waking up; 7:30 am having breakfast', for a plan memory."""
    return "; ".join([f"{planning.face_of(b.start)} {b.activity}" for b in blocks])


# What of a perception becomes memory (paper 4.1; the original code's retention): a sight is
# stored when it is new or has changed; a sight seen recently only refreshes the last access of
# the memory already made of it. Watching a lamp stay on all afternoon, or a friend taking short
# breaks between songs, leaves one memory of each sight, kept fresh for retrieval. A sight out
# of view for longer than a gap (`sight_gap_hours`, six game hours: morning and evening are
# separate encounters) is a new event when it is seen again.

def note_sight(sights: dict[str, datetime], text: str, now: datetime, gap: timedelta) -> bool:
    """Stamp a sight as seen now; True when it is new (not seen within the gap)."""
    last = sights.get(text)
    sights[text] = now
    return last is None or now - last > gap


def sort_sightings(sights: dict[str, datetime], sightings: list[Sighting], now: datetime,
                   gap: timedelta) -> tuple[list[Sighting], list[Sighting]]:
    """Split a perception into (new or changed, seen lately) and note what was seen now.
    Sights unseen for longer than the gap are forgotten, which bounds the table."""
    fresh: list[Sighting] = []
    same: list[Sighting] = []
    for sighting in sightings:
        (fresh if note_sight(sights, sighting.text, now, gap) else same).append(sighting)
    cutoff = now - gap
    for text in [t for t, seen in sights.items() if seen < cutoff]:
        del sights[text]
    return fresh, same


def starting_knowledge(persona: Persona, arenas_of: dict[str, list[str]]) -> dict[str, list[str]]:
    """Residents start knowing their home, work and the places they frequent."""
    return {sector: list(arenas_of[sector]) for sector in persona.starting_sectors()}


class AgentMind:
    def __init__(self, persona: Persona, model: LanguageModel, stream: MemoryStream,
                 state: MindState, settings: MindSettings | None = None,
                 clock_now: Callable[[], datetime] | None = None) -> None:
        self.persona = persona
        self.name = persona.name  # read at every step; a persona is frozen
        self.model = model
        self.stream = stream
        self.state = state
        self.settings = settings or MindSettings()
        self._clock_now = clock_now  # the engine's clock; nothing sets a mind's time from outside
        self._step_time: datetime | None = None  # without one: the time of the current step
        self._importance_by_text = {m.text: m.importance for m in stream.memories}
        self._flushing = asyncio.Lock()

    @property
    def now(self) -> datetime | None:
        return self._clock_now() if self._clock_now is not None else self._step_time

    @property
    def _sight_gap(self) -> timedelta:
        return span_of_hours(self.settings.sight_gap_hours)

    @property
    def summary_text(self) -> str:
        return summary.render_summary(self.persona, self.state.summary.summary)

    # --- memory -----------------------------------------------------------------------------

    def remember(self, kind: str, text: str, evidence: tuple[int, ...] = (),
                 when: datetime | None = None) -> None:
        """Queue a memory; it is scored and embedded together with the others queued."""
        created = when or self.now
        if created is None:
            raise ValueError("remember() needs a time before the first step")
        self.state.queue.pending.append(Pending(kind, text, tuple(evidence), created))
        self.state.queue.mark()

    async def flush_memories(self, now: datetime, *, force: bool = False) -> None:
        """Store queued memories at once, retrievable from now on; texts never scored before
        carry a provisional importance until they are scored together with the others (at
        most every SCORING_INTERVAL unless forced), which is when they count toward
        reflection. One flush at a time: a reflection stores its insights while the rest of
        the step goes on."""
        async with self._flushing:
            await self._store_pending()
            if self._scoring_due(now, force):
                await self._score_unscored(now)

    def _scoring_due(self, now: datetime, force: bool) -> bool:
        last = self.state.queue.last_scored
        return bool(self.state.queue.unscored) and (
            force or not last or now - last >= SCORING_INTERVAL)

    async def _store_pending(self) -> None:
        pending = list(self.state.queue.pending)
        if not pending:
            return
        vectors = await self.model.embed([p.text for p in pending])
        queue = self.state.queue
        queue.pending = queue.pending[len(pending):]  # queued meanwhile
        queue.mark()
        scores = [self._importance_by_text.get(waiting.text) for waiting in pending]
        memories = [Memory(0, waiting.kind, waiting.text, waiting.created, waiting.created,
                           PROVISIONAL_IMPORTANCE if known is None else known, waiting.evidence)
                    for waiting, known in zip(pending, scores, strict=True)]
        self.stream.add_all(memories, vectors)
        for memory, known in zip(memories, scores, strict=True):
            if known is None:
                queue.unscored.append(memory.id)
            elif memory.kind in EXPERIENCE:
                self.state.reflection.importance_since_reflection += known
                self.state.reflection.mark()

    async def _score_unscored(self, now: datetime) -> None:
        ids = list(self.state.queue.unscored)
        texts = list(dict.fromkeys(self.stream.memories[i].text for i in ids))
        question = ImportanceQuestion(self.name, self.persona.identity(), tuple(texts))
        scored = (await self.model.ask(question.ask(self.name))).scores
        self._importance_by_text.update(zip(texts, scored, strict=True))
        self.state.queue.unscored, self.state.queue.last_scored = [], now
        self.state.queue.mark()
        memories = self.stream.memories
        scores = [self._importance_by_text[memories[index].text] for index in ids]
        self.stream.rescore_all(ids, scores)  # dozens at a time: one write of the column
        for index, score in zip(ids, scores, strict=True):
            memory = memories[index]
            if memory.kind in EXPERIENCE:
                self.state.reflection.importance_since_reflection += score
                self.state.reflection.mark()
                self._note_if_news(memory.text, score)

    def _note_if_news(self, text: str, score: int) -> None:
        """Important news (not our own doings) is kept for the next look at today's plan."""
        if score >= self.settings.revise_importance and not text.startswith(f"{self.name} is "):
            plan = self.state.planning
            plan.notable = (plan.notable + [text])[-NOTABLE_LIMIT:]
            plan.mark()

    def observe(self, perception: Perception, world: WorldView) -> list[Sighting]:
        """Store what is new or changed; an unchanged sight only refreshes the memory made of
        it. Learn the place we are in. Returns the new sightings."""
        now = perception.now
        if perception.sector and perception.arena:  # know every arena of the sector we are in
            known = self.state.places.known.setdefault(perception.sector, [])
            for arena in world.arenas_of(perception.sector):
                if arena not in known:
                    known.append(arena)
                    self.state.places.mark()
        sights = self.state.attention.sights
        known_sights = len(sights)
        sightings = perception.sightings
        fresh, same = sort_sightings(sights, sightings, now, self._sight_gap)
        if sightings or len(sights) != known_sights:  # stamped, or some forgotten
            self.state.attention.mark()
        for sighting in fresh:
            self.remember("observation", sighting.text)
        # Refresh the memories made of what was seen lately.
        self.stream.touch([memory.id for sighting in same
                           if (memory := self.stream.latest_with(sighting.text)) is not None], now)
        return fresh

    # --- the step ---------------------------------------------------------------------------

    async def think(self, perception: Perception, world: WorldView) -> Intent:
        now = perception.now
        self._step_time = now
        refused = self.state.places.refused
        if refused and any(r.until <= now for r in refused.values()):
            self.state.places.refused = {k: r for k, r in refused.items() if r.until > now}
            self.state.places.mark()
        fresh = self.observe(perception, world)
        if not self.persona.is_awake_at(minute_of_day(now)):
            intent = Intent(self.name, self.persona.home_sector, self.persona.home_arena,
                            SLEEPING, "😴", "bed", "occupied", asleep=True)
        else:
            if self.state.planning.day != now.date():
                await self.start_day(now)
            elif summary.is_stale(self.state.summary.summary, now, self.settings.summary_refresh_hours):
                await self._summarise(now)
            await self.flush_memories(now)
            # Reflecting needs nothing the rest of the step decides, nor the other way round.
            _, intent = await asyncio.gather(self._maybe_reflect(now),
                                             self._react_and_act(now, perception, fresh, world))
        self._record_own_action(intent)
        await self.flush_memories(now)
        return intent

    async def _react_and_act(self, now: datetime, perception: Perception, fresh: list[Sighting],
                             world: WorldView) -> Intent:
        if self.state.planning.notable:  # most steps have no news to look at the plan for
            await self._maybe_revise(now)
        pressing = self._pressing_sighting(now, perception, fresh)
        talk_to = await self._react_to(now, perception, *pressing) if pressing else None
        intent = await self._act(now, perception, world)
        intent.talk_to = talk_to
        return intent

    async def start_day(self, now: datetime) -> None:
        await self.flush_memories(now, force=True)
        await self._summarise(now)
        intentions = await self._intentions(now)
        items = await planning.plan_day(self.model, self.persona, now, self._yesterday(now),
                                        self.summary_text, intentions)
        day_label = now.strftime("%A %B %d")
        self.remember("plan", f"{self.name}'s plan for {day_label}: {'; '.join(items)}")
        blocks = await planning.plan_hours(self.model, self.persona, now, items, intentions,
                                           self.state.places.known)
        self.remember("plan", f"{self.name}'s schedule for {day_label}: {_timetable(blocks)}")
        self.state.planning.day, self.state.planning.day_plan = now.date(), items
        self.state.planning.blocks, self.state.places.refused = blocks, {}
        self.state.planning.mark()
        self.state.places.mark()

    async def _summarise(self, now: datetime) -> None:
        self.state.summary.summary = await summary.summarise(self.model, self.persona, self.stream, now)
        self.state.summary.mark()

    def _yesterday(self, now: datetime) -> str:
        yesterday = (now - timedelta(days=1)).date()
        notable = planning.notable_memories(self.stream, yesterday)
        if not self.state.planning.day_plan and not notable:
            return "nothing yet: this is the first day here"
        plan = "; ".join(self.state.planning.day_plan[:5])
        return f"planned: {plan}. Notable: " + " ".join(m.text for m in notable)

    async def _intentions(self, now: datetime) -> list[str]:
        """Memories about what the agent means to do today (seeds, whispers, invitations)."""
        # No name in the query: it would match every "<name> is ..." memory equally.
        query = f"plans, intentions, invitations and appointments on {now:%A %B} {now.day}"
        vector = (await self.model.embed([query]))[0]
        found = planning.retrieve_plans(self.stream, vector, now, self.settings)
        dated = planning.dated_memories(self.stream, now)  # "on February 14" must not be missed
        return list(dict.fromkeys([m.text for m in dated] + [m.text for m in found]))

    async def _maybe_reflect(self, now: datetime) -> None:
        if not reflection.due(self.state.reflection.importance_since_reflection, self.settings):
            return
        self.state.reflection.importance_since_reflection = 0
        self.state.reflection.mark()
        known = {m.text for m in self.stream.by_kind("reflection")}
        unscored = False
        for found in await reflection.reflect(self.model, self.name, self.stream, now,
                                              self.settings):
            if found.text in known:  # the same insight twice adds nothing
                continue
            known.add(found.text)
            if found.importance is None:
                unscored = True
            else:  # rated with the insight: no importance call for it
                self._importance_by_text.setdefault(found.text, found.importance)
            self.remember("reflection", found.text, found.evidence)
        await self.flush_memories(now, force=unscored)

    async def hear_inner_voice(self, text: str, now: datetime) -> str:
        """A directive from the inner voice becomes the resident's own thought; an awake
        resident rewrites the rest of the day around it."""
        thought = wording.inner_voice(text, self.name)
        self._step_time = now
        self.remember("thought", thought)
        await self.flush_memories(now, force=True)
        if self.persona.is_awake_at(minute_of_day(now)) and self.state.planning.day == now.date():
            await self.replan(now, thought)
        return thought

    async def _maybe_revise(self, now: datetime) -> None:
        """Important news since the last look at the plan: look again, at most so often."""
        last = self.state.planning.last_revision
        if last and now - last < span_of_minutes(self.settings.revise_interval_minutes):
            return
        news, self.state.planning.notable = self.state.planning.notable, []
        self.state.planning.mark()
        await self.reconsider(now, news)

    async def reconsider(self, now: datetime, news: list[str]) -> bool:
        """Ask, as the paper does after a reaction, whether the rest of today's plan should
        change because of what was just learned; if so regenerate it from now."""
        rest = [b for b in self.state.planning.blocks if b.end > now]
        if (not rest or self.state.planning.day != now.date()
                or not self.persona.is_awake_at(minute_of_day(now))):
            return False
        self.state.planning.last_revision = now
        self.state.planning.mark()
        step = rest[0].step_at(now) if rest[0].covers(now) else None
        doing = step.action if step else planning.as_ongoing(rest[0].activity)
        revision = await planning.should_revise(self.model, self.persona, self.summary_text, now,
                                                doing, rest, news, sorted(self.state.places.known))
        if revision.revise:
            await self.replan(now, None, news=[*news, revision.reason])
        return revision.revise

    async def replan(self, now: datetime, directive: str | None, *,
                     news: list[str] | None = None) -> None:
        """Regenerate the rest of today from now, around a directive (the inner voice) or
        around news that changed the day."""
        intentions = list(dict.fromkeys([*(news or []), *await self._intentions(now)]))
        blocks = await planning.plan_hours(self.model, self.persona, now, self.state.planning.day_plan,
                                           intentions, self.state.places.known, start=now,
                                           directive=directive)
        if not blocks:
            return
        kept = planning.insert_block(self.state.planning.blocks, blocks[0])
        self.state.planning.blocks = [b for b in kept if b.end <= now or b is blocks[0]] + blocks[1:]
        self.state.planning.mark()
        self.remember("plan", f"{self.name} changed plans at {clock_face(minute_of_day(now))}: "
                              f"{_timetable(blocks)}")

    # --- reacting ---------------------------------------------------------------------------

    def _worth_considering(self, sighting: Sighting, now: datetime) -> bool:
        if sighting.kind == "object":
            return not sighting.attended
        if sighting.kind != "agent" or not sighting.available:
            return False
        talked = self.state.reacting.last_talked.get(sighting.subject)
        considered = self.state.reacting.last_considered.get(sighting.subject)
        return ((talked is None or now - talked >= span_of_hours(self.settings.talk_cooldown_hours))
                and (considered is None
                     or now - considered >= span_of_hours(self.settings.reconsider_hours)))

    def _pressing_sighting(self, now: datetime, perception: Perception,
                           fresh: list[Sighting]) -> tuple[PlanBlock, Sighting] | None:
        """The most pressing sighting to consider for a reaction, with the block under way;
        None when there is none (most steps: no coroutine is made for them)."""
        if not perception.sightings:  # nothing to consider
            return None
        block = self.current_block(now)
        if block is None or block.activity.startswith("talking with") or perception.sector is None:
            return None
        last_check = self.state.reacting.last_reaction_check
        if last_check and now - last_check < span_of_minutes(
                self.settings.react_interval_minutes):  # people can wait
            candidates = [s for s in perception.sightings if s.kind == "object" and s in fresh
                          and self._worth_considering(s, now)]
        else:  # people in view may be talked to even when the sight of them is not new
            candidates = [s for s in perception.sightings if (s.kind == "agent" or s in fresh)
                          and self._worth_considering(s, now)]
        if not candidates:
            return None
        # An object in trouble comes first, else the first in view.
        return block, next((s for s in candidates if s.kind == "object"), candidates[0])

    async def _react_to(self, now: datetime, perception: Perception, block: PlanBlock,
                        sighting: Sighting) -> str | None:
        """Consider a sighting; returns a person to talk to, if any."""
        self.state.reacting.last_reaction_check = now
        self.state.reacting.mark()
        if sighting.kind == "agent":
            self.state.reacting.last_considered[sighting.subject] = now
        step = block.step_at(now)
        doing = step.action if step else block.activity
        decision = await reacting.decide(self.model, self.name, self.summary_text, self.stream,
                                         now, doing, sighting, self.settings)
        if not decision.react:
            if decision.wait and sighting.kind == "agent" and perception.arena:
                self._wait_for(now, perception, sighting.subject, doing, decision.minutes)
            return None
        if sighting.kind == "agent":
            self.state.reacting.last_talked[sighting.subject] = now
            self.state.reacting.mark()
            return sighting.subject
        self._handle_object(now, perception, sighting, decision)
        return None

    def _wait_for(self, now: datetime, perception: Perception, person: str, doing: str,
                  minutes: int) -> None:
        """The original code's other reaction to a person: wait until they are done."""
        until = now + timedelta(minutes=minutes)
        waiting = f"waiting for {person} to finish before {doing}"
        step = PlanStep(now, until, waiting, "", "", "⌛")
        self.interrupt(now, until, waiting, perception.sector or self.persona.home_sector,
                       perception.arena, [step])

    def _handle_object(self, now: datetime, perception: Perception, sighting: Sighting,
                       decision: Reaction) -> None:
        sector, arena, obj = sighting.subject.split(": ")
        action = decision.action or f"dealing with the {obj}"
        until = now + timedelta(minutes=decision.minutes)
        step = PlanStep(now, until, planning.as_ongoing(action), obj,
                        decision.object_state or "being seen to", decision.emoji or "❗")
        self.remember("observation", f"{self.name} reacted to '{sighting.text}' by deciding to "
                                     f"{action}")
        self.interrupt(now, until, action, sector, arena, [step], tending=True)

    def interrupt(self, now: datetime, until: datetime, activity: str, sector: str, arena: str,
                  steps: list[PlanStep], *, tending: bool = False) -> None:
        """Insert a reaction and rewrite the plan from that moment: what it displaced is
        decomposed again when it resumes."""
        self.state.planning.blocks = planning.insert_block(
            self.state.planning.blocks,
            PlanBlock(now, until, activity, sector, arena, steps, tending=tending))
        self.state.planning.mark()

    # --- conversations ----------------------------------------------------------------------

    def voice(self, action: str) -> dialogue.Voice:
        # A copy of the mapping alone: a list in it is replaced when a talk adds to it, never
        # changed in place, so the voice keeps what had been told when the talk began.
        told = dict(self.state.dialogue.told)
        return dialogue.Voice(self.name, self.summary_text, self.stream, action, told,
                              self.settings.recall.utterance, self.settings.recall.relationship,
                              plans=tuple(f"{clock_face(minute_of_day(b.start))}: {b.activity}"
                                          for b in self.state.planning.blocks))

    async def after_conversation(self, partner: str, lines: list[dialogue.Line], place: str,
                                 start: datetime, end: datetime, sector: str, arena: str,
                                 takeaways: dialogue.JointTakeaways | None = None) -> None:
        """Remember the talk and what was learned (`takeaways`: asked once for everyone who
        took part; without it, for this resident alone); the plan resumes after it."""
        self._step_time = start
        said = [text for speaker, text in lines if speaker == self.name]
        self.state.dialogue.told[partner] = (self.state.dialogue.told.get(partner, []) + said)[-TOLD_LIMIT:]
        self.state.reacting.last_talked[partner] = start
        self.state.dialogue.mark()
        self.state.reacting.mark()
        talk = " ".join([f"{speaker.split()[0]}: {text}" for speaker, text in lines])
        record = f"{self.name} talked with {partner} at {place}. {talk}"[:TRANSCRIPT_LIMIT]
        shared = takeaways or dialogue.JointTakeaways(self.model, [self.name], lines)
        learned = await shared.of(self.name)
        scored = {record: learned.importance, **learned.facts}
        for text, score in scored.items():
            if score is not None:  # scored with the takeaways: no importance call for it
                self._importance_by_text[text] = score
                self._note_if_news(text, score)
            self.remember("conversation", text)
        step = PlanStep(start, end, f"talking with {partner}", "", "", "💬")
        self.interrupt(start, end, f"talking with {partner}", sector, arena, [step])
        # Stored now; what the takeaways left unscored is scored now too (it is news).
        await self.flush_memories(start, force=None in scored.values())
        # News can change the rest of today, from the end of the talk: what was rated as
        # important as other news must be (or not rated), not small talk.
        facts = [fact for fact, score in learned.facts.items()
                 if score is None or score >= self.settings.revise_importance]
        if facts:
            self.state.planning.notable = [t for t in self.state.planning.notable if t not in facts]
            self.state.planning.mark()
            await self.reconsider(end, facts)

    # --- acting -----------------------------------------------------------------------------

    def current_block(self, now: datetime) -> PlanBlock | None:
        return next((block for block in self.state.planning.blocks if block.covers(now)), None)

    def _availability(self, world: WorldView) -> Availability:
        def check(sector: str, arena: str | None) -> str | None:
            key = f"{sector}: {arena}" if arena else sector
            refusal = self.state.places.refused.get(key)
            if refusal is not None:
                return refusal.reason
            return world.availability(self.name, sector, arena)
        return check

    async def _place_block(self, block: PlanBlock, perception: Perception,
                           world: WorldView) -> None:
        earlier = [b for b in self.state.planning.blocks if b.end <= block.start and b.sector]
        previous = earlier[-1] if earlier else None
        available = self._availability(world)
        if (previous and planning.continues(block, previous)
                and available(previous.sector, previous.arena) is None):
            block.sector, block.arena = previous.sector, previous.arena  # same activity, same place
            return
        current = ((perception.sector, perception.arena) if perception.sector and perception.arena
                   else (self.persona.home_sector, self.persona.home_arena))
        routine = self.persona.routine  # the routine's place at the block's start is a hint
        hint = [routine[0], *[s for s in routine if s.minute <= minute_of_day(block.start)]][-1]
        norms = {s: world.norms_of(s) for s in self.state.places.known}
        known = {s: arenas or world.arenas_of(s) for s, arenas in self.state.places.known.items()}
        block.sector, block.arena = await planning.choose_place(
            self.model, self.persona, block.activity, perception.now, known, current,
            (hint.sector, hint.arena), norms, available)

    async def _act(self, now: datetime, perception: Perception, world: WorldView) -> Intent:
        block = self.current_block(now)
        if block is None:
            return Intent(self.name, self.persona.home_sector, self.persona.home_arena,
                          "getting ready for the day", "🙂")
        if (block.sector is not None and block.arena is not None and not block.steps
                and self._availability(world)(block.sector, block.arena) is not None):
            block.sector = block.arena = None  # the planned place cannot be entered now
        if block.sector is None or block.arena is None:
            await self._place_block(block, perception, world)
            block.steps = []
            self.state.planning.mark()
        if not block.steps or now >= block.steps[-1].end:  # none yet, or the last part is done
            objects = world.objects_in(block.sector, block.arena)
            block.steps = await planning.decompose(self.model, self.persona, block, objects, now)
            self.state.planning.mark()
            if block.steps:
                steps = "; ".join([f"{planning.face_of(s.start)} {s.action}" for s in block.steps])
                self.remember("plan", f"{self.name}'s steps for '{block.activity}' at "
                                      f"{block.sector}: {steps}")
        step = block.step_at(now) or (block.steps[-1] if block.steps else None)
        if step is None:
            return Intent(self.name, block.sector, block.arena, block.activity, "🙂")
        return Intent(self.name, block.sector, block.arena, step.action, step.emoji,
                      step.object or None, step.object_state or None, tending=block.tending)

    def _record_own_action(self, intent: Intent) -> None:
        """Remember what we do, once per activity (not every 5-15 minute step of it)."""
        now = self.now
        block = self.current_block(now) if now and not intent.asleep else None
        doing = planning.as_ongoing(block.activity) if block else intent.action
        key = f"{intent.sector}|{intent.arena}|{doing}"
        if key != self.state.attention.last_step and now is not None:
            self.state.attention.last_step = key
            self.state.attention.mark()
            text = f"{self.name} is {doing}"  # a sight of our own: new, or refreshed
            if note_sight(self.state.attention.sights, text, now, self._sight_gap):
                self.remember("observation", text)
            elif (memory := self.stream.latest_with(text)) is not None:
                self.stream.touch([memory.id], now)

    def refused(self, sector: str, arena: str, reason: str, now: datetime) -> None:
        """The world would not let us in: remember why and choose another place next tick."""
        self.state.places.refused[f"{sector}: {arena}"] = Refusal(now + REFUSAL_MEMORY, reason)
        self.state.places.mark()
        self.remember("observation", f"{self.name} could not go to {sector}: {arena} ({reason})")
        block = self.current_block(now)
        if block is not None:
            block.sector = block.arena = None
            block.steps = []
            self.state.planning.mark()
