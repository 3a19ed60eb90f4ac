"""One resident's mind: it perceives, remembers, plans and chooses its next action.

The engine hands it a perception and a read-only view of the world; it answers with an
intent (where it wants to be and what it is doing). It never changes the world itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from townbot.llm.port import Ask, LanguageModel
from townbot.llm.purposes import ImportanceScores
from townbot.mind import acting, planning
from townbot.mind.memory import MemoryStream
from townbot.mind.plans import PlanBlock
from townbot.mind.prompting import numbered, render
from townbot.world.clock import clock_face, format_game_time, minute_of_day, parse_game_time
from townbot.world.model import Persona

RETENTION = timedelta(minutes=60)  # the same sight is not stored again within this window
REFUSAL_MEMORY = timedelta(minutes=30)  # a refused place is avoided for this long
# New texts are scored for importance together, at most this often: one call instead of three.
SCORING_INTERVAL = timedelta(minutes=30)
SLEEPING = "sleeping"


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
    observations: list[str] = field(default_factory=list)


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


@dataclass
class MindState:
    day: str | None = None
    day_plan: list[str] = field(default_factory=list)
    blocks: list[PlanBlock] = field(default_factory=list)
    known: dict[str, list[str]] = field(default_factory=dict)
    seen: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    last_step: str | None = None
    # Memories waiting to be scored and stored: [kind, text, evidence ids, created].
    pending: list[list] = field(default_factory=list)
    last_scored: str | None = None

    def to_dict(self) -> dict:
        return {"day": self.day, "day_plan": self.day_plan,
                "blocks": [b.to_dict() for b in self.blocks], "known": self.known,
                "seen": self.seen, "refused": self.refused, "last_step": self.last_step,
                "pending": self.pending, "last_scored": self.last_scored}

    @classmethod
    def from_dict(cls, data: dict) -> MindState:
        return cls(day=data.get("day"), day_plan=list(data.get("day_plan", [])),
                   blocks=[PlanBlock.from_dict(b) for b in data.get("blocks", [])],
                   known={k: list(v) for k, v in data.get("known", {}).items()},
                   seen=dict(data.get("seen", {})), refused=dict(data.get("refused", {})),
                   last_step=data.get("last_step"), pending=list(data.get("pending", [])),
                   last_scored=data.get("last_scored"))


def starting_knowledge(persona: Persona, arenas_of: dict[str, list[str]]) -> dict[str, list[str]]:
    """Residents start knowing their home, work and the places they frequent."""
    return {sector: list(arenas_of[sector]) for sector in persona.starting_sectors()}


class AgentMind:
    def __init__(self, persona: Persona, model: LanguageModel, stream: MemoryStream,
                 state: MindState) -> None:
        self.persona = persona
        self.model = model
        self.stream = stream
        self.state = state
        self.clock: datetime | None = None
        self._importance_by_text = {m.text: m.importance for m in stream.memories}

    @property
    def name(self) -> str:
        return self.persona.name

    # --- memory -----------------------------------------------------------------------------

    def remember(self, kind: str, text: str, evidence: tuple[int, ...] = (),
                 when: datetime | None = None) -> None:
        """Queue a memory; it is scored and embedded together with the others queued."""
        created = when or self.clock
        if created is None:
            raise ValueError("remember() needs a time before the first step")
        self.state.pending.append([kind, text, list(evidence), format_game_time(created)])

    async def flush_memories(self, now: datetime, *, force: bool = False) -> None:
        """Score and store queued memories; texts never seen before wait for the next batch."""
        pending = self.state.pending
        if not pending:
            return
        unscored = list(dict.fromkeys(p[1] for p in pending if p[1] not in self._importance_by_text))
        last = self.state.last_scored
        if unscored and not force and last and now - parse_game_time(last) < SCORING_INTERVAL:
            return
        if unscored:
            scores = await self._rate(unscored)
            self._importance_by_text.update(zip(unscored, scores, strict=True))
            self.state.last_scored = format_game_time(now)
        self.state.pending = []
        vectors = await self.model.embed([p[1] for p in pending])
        for (kind, text, evidence, created), vector in zip(pending, vectors, strict=True):
            self.stream.add(kind, text, parse_game_time(created), self._importance_by_text[text],
                            vector, tuple(evidence))

    async def _rate(self, texts: list[str]) -> list[int]:
        prompt = render("importance", name=self.name, identity=self.persona.identity(),
                        numbered=numbered(texts))
        answer = await self.model.ask(Ask(
            purpose="importance", prompt=prompt, schema=ImportanceScores, agent=self.name,
            context={"texts": texts},
            check=lambda a: None if len(a.scores) == len(texts)
            else f"expected {len(texts)} scores, got {len(a.scores)}",
            default=lambda: ImportanceScores(scores=[3] * len(texts))))
        return list(answer.scores)

    def observe(self, perception: Perception) -> None:
        now = perception.now
        for text in perception.observations:
            last = self.state.seen.get(text)
            if last is None or now - parse_game_time(last) >= RETENTION:
                self.remember("observation", text)
                self.state.seen[text] = format_game_time(now)
        cutoff = now - RETENTION
        self.state.seen = {t: s for t, s in self.state.seen.items()
                           if parse_game_time(s) > cutoff}

    # --- the step ---------------------------------------------------------------------------

    async def think(self, perception: Perception, world: WorldView) -> Intent:
        now = perception.now
        self.clock = now
        self.observe(perception)
        self.state.refused = {k: v for k, v in self.state.refused.items()
                              if parse_game_time(v.partition("|")[0]) > now}
        if not self.persona.is_awake_at(minute_of_day(now)):
            intent = self._sleep_intent()
        else:
            if self.state.day != now.date().isoformat():
                await self.start_day(now)
            intent = await self._act(now, perception, world)
        self._record_own_action(intent)
        await self.flush_memories(now)
        return intent

    def _sleep_intent(self) -> Intent:
        return Intent(self.name, self.persona.home_sector, self.persona.home_arena, SLEEPING,
                      "😴", "bed", "occupied", asleep=True)

    async def start_day(self, now: datetime) -> None:
        yesterday = ("; ".join(self.state.day_plan) if self.state.day_plan
                     else "nothing yet: this is the first day here")
        items = await planning.plan_day(self.model, self.persona, now, yesterday)
        day_label = now.strftime("%A %B %d")
        self.remember("plan", f"{self.name}'s plan for {day_label}: {'; '.join(items)}")
        blocks = await planning.plan_hours(self.model, self.persona, now, items)
        schedule = "; ".join(f"{clock_face(minute_of_day(b.start))} {b.activity}" for b in blocks)
        self.remember("plan", f"{self.name}'s schedule for {day_label}: {schedule}")
        self.state.day, self.state.day_plan, self.state.blocks = now.date().isoformat(), items, blocks
        self.state.refused = {}

    def current_block(self, now: datetime) -> PlanBlock | None:
        return next((b for b in self.state.blocks if b.covers(now)), None)

    def _routine_hint(self, block: PlanBlock) -> tuple[str, str]:
        minute = minute_of_day(block.start)
        step = self.persona.routine[0]
        for candidate in self.persona.routine:
            if candidate.minute <= minute:
                step = candidate
        return step.sector, step.arena

    def _availability(self, world: WorldView) -> acting.Availability:
        def check(sector: str, arena: str | None) -> str | None:
            key = f"{sector}: {arena}" if arena else sector
            refusal = self.state.refused.get(key)
            if refusal is not None:
                return refusal.partition("|")[2]
            return world.availability(self.name, sector, arena)
        return check

    async def _place_block(self, block: PlanBlock, perception: Perception,
                           world: WorldView) -> None:
        hint_sector, hint_arena = self._routine_hint(block)
        available = self._availability(world)
        current = perception.sector or self.persona.home_sector
        norms = {s: world.norms_of(s) for s in self.state.known}
        block.sector = await acting.choose_sector(
            self.model, self.persona, block.activity, block.start, self.state.known, current,
            hint_sector, norms, available)
        arenas = self.state.known.get(block.sector) or world.arenas_of(block.sector)
        block.arena = await acting.choose_arena(
            self.model, self.persona, block.activity, block.start, block.sector, arenas,
            hint_arena if hint_sector == block.sector else None,
            perception.arena if perception.sector == block.sector else None,
            world.norms_of(block.sector), available)

    async def _act(self, now: datetime, perception: Perception, world: WorldView) -> Intent:
        block = self.current_block(now)
        if block is None:
            return Intent(self.name, self.persona.home_sector, self.persona.home_arena,
                          "getting ready for the day", "🙂")
        if block.sector is None or block.arena is None:
            await self._place_block(block, perception, world)
            block.steps = []
        if not block.steps:
            objects = world.objects_in(block.sector, block.arena)
            block.steps = await planning.decompose(self.model, self.persona, block, objects, now)
            if block.steps:
                self.remember("plan", self._steps_memory(block))
        step = block.step_at(now) or (block.steps[-1] if block.steps else None)
        if step is None:
            return Intent(self.name, block.sector, block.arena, block.activity, "🙂")
        return Intent(self.name, block.sector, block.arena, step.action, step.emoji,
                      step.object or None, step.object_state)

    def _steps_memory(self, block: PlanBlock) -> str:
        steps = "; ".join(f"{clock_face(minute_of_day(s.start))} {s.action}" for s in block.steps)
        return f"{self.name}'s steps for '{block.activity}' at {block.sector}: {steps}"

    def _record_own_action(self, intent: Intent) -> None:
        key = f"{intent.sector}|{intent.arena}|{intent.action}"
        if key != self.state.last_step:
            self.state.last_step = key
            self.remember("observation", f"{self.name} is {intent.action}")

    def refused(self, sector: str, arena: str, reason: str, now: datetime) -> None:
        """The world would not let us in: remember why and choose another place next tick."""
        until = format_game_time(now + REFUSAL_MEMORY)
        self.state.refused[f"{sector}: {arena}"] = f"{until}|{reason}"
        self.remember("observation", f"{self.name} could not go to {sector}: {arena} ({reason})")
        block = self.current_block(now)
        if block is not None:
            block.sector = block.arena = None
            block.steps = []
