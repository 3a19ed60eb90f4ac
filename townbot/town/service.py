"""TownService: every use case a person has in the town, once, for every platform.

Each use case is validated, permission-checked, rate-limited where it costs model calls, and
written to the audit log with its outcome. Bad input raises `TownError` with what was wrong and
what would be right, and changes nothing. Platforms (console, Discord) only translate.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from townbot.llm.settings import ModelSettings
from townbot.mind import dialogue
from townbot.mind.answering import Ablation, answer_as, todays_plan
from townbot.mind.retrieval import retrieve
from townbot.prompting import quoted, quoted_name
from townbot.store.database import AuditEntry
from townbot.text import clean_text
from townbot.town import commands
from townbot.town.admission import READ_OUTS, Admission, RateLimit, audited
from townbot.town.body import Body
from townbot.town.costs import real_day_line, recent_cost
from townbot.town.engine import Engine
from townbot.town.launch import PROJECT_ROOT
from townbot.town.names import name_problem, taken_names
from townbot.town.news import describe_status, event_status, tracked_events
from townbot.town.requests import SPEED_RANGE, Outcome, Person, TownError, bounded, closest_names
from townbot.town.scenarios import load_scenario, scenario_names
from townbot.town.usage import model_notes
from townbot.wording import plural
from townbot.world.clock import clock_face, format_game_time, minute_of_day
from townbot.world.errors import DataError
from townbot.world.events import TownEvent
from townbot.world.model import join_path, split_path

WEB_CLOSED = ""  # the stored token of a web page a moderator closed
OBJECT_FORM = re.compile(r"^\s*<([^>]+)>\s*(?:is\s+)?(.+?)\s*$", re.IGNORECASE)
# A tick on a clock waits this share of its interval for its conversations, then lets the
# unfinished ones go on beside the next ticks: a slow model's talk never makes the town fall behind.
TALK_SHARE = 0.25


class TownService:
    def __init__(self, engine: Engine, *, scenarios: Path | None = None,
                 permissions: dict[str, str] | None = None,
                 rates: dict[str, RateLimit] | None = None,
                 now: Callable[[], float] = time.monotonic,
                 model_settings: ModelSettings | None = None) -> None:
        self.engine = engine
        self.model_settings = model_settings  # prices, for the cost per real day
        self.scenarios = scenarios or PROJECT_ROOT / "scenarios"
        self.admission = Admission(permissions, rates, now)
        self._exchanges: dict[tuple[str, str], list[dialogue.Line]] = {}
        self.lock = asyncio.Lock()  # a use case and a tick never interleave

    # --- plumbing ---------------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        return bool(self.engine.town.paused)

    async def tick(self, *, interval: float | None = None) -> list[TownEvent]:
        """One tick unless paused. `interval`: the real seconds between ticks of a platform
        that ticks on a clock, whose slower talks carry over (Engine.tick); None waits for all."""
        patience = TALK_SHARE * interval if interval else None
        async with self.lock:
            if self.paused:
                return []
            return await self.engine.tick(carry_after=patience)

    async def _run(self, case: str, person: Person, arguments: dict[str, Any],
                   action: Callable[[], Awaitable[Outcome]]) -> Outcome:
        """Admit, act and audit: what the use case changes commits in one transaction with
        its audit row (Engine.held), so a kill at any point leaves both or neither. A read-out
        reads the town in one step and changes nothing: it answers at once, even while a tick
        (seconds on a real model) holds the lock."""
        async with contextlib.nullcontext() if case in READ_OUTS else self.lock:
            try:
                self.admission.admit(case, person, paused=self.paused)
                async with self.engine.held() as hold:
                    outcome = await action()
                    hold.audits.append(self._audit_row(case, person, arguments, "ok",
                                                       outcome.text[:200]))
            except TownError as refusal:
                await self._refused(case, person, arguments, refusal)
                raise
            self.admission.count(case, person)  # only accepted use cases count toward a rate limit
            return outcome

    async def _refused(self, case: str, person: Person, arguments: dict[str, Any],
                       refusal: TownError) -> None:
        """An audit row alone: a refusal changed nothing."""
        refusal.args = (clean_text(str(refusal)),)  # it may quote what the person typed
        row = self._audit_row(case, person, arguments, "refused", str(refusal))
        await self.engine.store.add_audits(self.engine.town.id, [row])

    def _audit_row(self, case: str, person: Person, arguments: dict[str, Any], outcome: str,
                   detail: str) -> AuditEntry:
        return AuditEntry(datetime.now(UTC).isoformat(timespec="seconds"),
                          format_game_time(self.engine.clock.now), clean_text(person.id),
                          clean_text(person.name), person.role, case,
                          {key: audited(value) for key, value in arguments.items()}, outcome,
                          detail)

    async def refused(self, case: str, person: Person, reason: str) -> None:
        """Audit a refusal a platform made before the use case ran (a moderator command
        asked for by someone else, turned away at once so that nothing waits for a tick)."""
        async with self.lock:
            await self._refused(case, person, {}, TownError(reason))

    # --- lookups ----------------------------------------------------------------------------

    def resident(self, name: str) -> str:
        names = list(self.engine.minds)
        wanted = " ".join(name.split()).lower()
        exact = [n for n in names if n.lower() == wanted]
        first = [n for n in names if n.split()[0].lower() == wanted]
        if exact or len(first) == 1:
            return (exact or first)[0]
        first_names = {n.split()[0]: n for n in names}
        raise TownError(f"there is no resident called '{name}'{closest_names(name, names, first_names)}")

    def area(self, text: str) -> tuple[str, str]:
        """An area by 'Sector', 'Sector: arena' or channel slug. A sector alone means its
        liveliest arena (most people awake there), else its first."""
        world = self.engine.world
        parts = split_path(text)
        by_channel = {s.channel: s.name for s in world.sectors.values()}
        sector = by_channel.get(parts[0].lstrip("#").lower(), parts[0])
        matches = [s for s in world.sectors if s.lower() == sector.lower()]
        if not matches:
            options = list(world.sectors) + list(by_channel)
            raise TownError(f"there is no area called '{text}'{closest_names(sector, options)}")
        sector = matches[0]
        arenas = list(world.sectors[sector].arenas)
        if len(parts) == 1:
            company = Counter(body.arena for body in self.engine.bodies.values()
                              if body.sector == sector and body.action != "sleeping")
            return sector, max(arenas, key=lambda arena: (company[arena], -arenas.index(arena)))
        arena = next((a for a in arenas if a.lower() == parts[1].lower()), None)
        if arena is None:
            raise TownError(f"{sector} has no '{parts[1]}'{closest_names(parts[1], arenas)}; "
                            f"its areas are {', '.join(arenas)}")
        return sector, arena

    def object_path(self, path: str) -> str:
        parts = split_path(path)
        if len(parts) != 3:
            raise TownError(f"'{path}' is not an object; write <Sector: arena: object>, e.g. "
                            "<Isabella Rodriguez's apartment: kitchen: stove>")
        sector, arena = self.area(f"{parts[0]}: {parts[1]}")
        objects = list(self.engine.world.arena(sector, arena).objects)
        obj = next((o for o in objects if o.lower() == parts[2].lower()), None)
        if obj is None:
            raise TownError(f"{sector}: {arena} has no '{parts[2]}'"
                            f"{closest_names(parts[2], objects)}; its objects are "
                            f"{', '.join(objects)}")
        return join_path(sector, arena, obj)

    def _speaker(self, person: Person) -> tuple[str, Body]:
        """The name a person speaks under in the town (a visitor's, or a taken-over
        resident's) and that body."""
        row = self.engine.people.get(person.id)
        if row is None:
            raise TownError("you are not in the town; join first (a name and a one-line "
                            "description)")
        name = row.resident or row.name
        return name, self.engine.bodies[name]

    def speaker_of(self, person: Person) -> tuple[str, Body] | None:
        """`_speaker`, or None when the person is not in the town."""
        return self._speaker(person) if person.id in self.engine.people else None

    # --- joining and moving -----------------------------------------------------------------

    async def join(self, person: Person, name: str, description: str,
                   area: str = "Johnson Park") -> Outcome:
        async def act() -> Outcome:
            visitor_name = bounded(name, "name")
            about = bounded(description, "description")
            if person.id in self.engine.people:
                raise TownError(f"you are already in the town as "
                                f"{self.engine.people[person.id].name}; leave first to rejoin")
            self._check_name_is_free(visitor_name)
            sector, arena = self.area(area)
            closed = self.engine.availability(visitor_name, sector, arena)
            if closed:
                raise TownError(f"you cannot join at {sector}: {closed}; choose another area, "
                                "e.g. Johnson Park")
            events = await commands.arrive(self.engine, person.id, visitor_name, about, sector,
                                           arena)
            return Outcome(f"You are {visitor_name}, {about}, at {sector}: {arena}.", events)
        return await self._run("join", person, {"name": name, "description": description,
                                                "area": area}, act)

    def _check_name_is_free(self, name: str) -> None:
        """Refuse a name that, as any platform shows it, could be taken for a resident (full or
        first name), another person in the town, the town or its narrator, or a mention
        (townbot.town.names): on Discord it would post under that name."""
        visitors = [n for n in self.engine.bodies if n not in self.engine.minds]
        problem = name_problem(name, taken_names(self.engine.minds, visitors,
                                                 self.engine.world.town))
        if problem is None:
            return
        advice = "choose another name" if " is already " in problem else \
            "choose a name that cannot be mistaken for it"
        raise TownError(f"{problem}; {advice}")

    async def takeover(self, moderator: Person, person: Person, resident: str) -> Outcome:
        async def act() -> Outcome:
            who = self.resident(resident)
            if person.id in self.engine.people:
                raise TownError(f"{person.name} is already in the town; they must leave first")
            if who in self.engine.controlled():
                raise TownError(f"{who} is already taken over by someone else")
            await commands.take_over(self.engine, person.id, who)
            return Outcome(f"{person.name} now speaks and moves as {who}; {who} stops acting "
                           "on their own until they leave.")
        return await self._run("takeover", moderator, {"person": person.id,
                                                       "resident": resident}, act)

    async def go(self, person: Person, area: str) -> Outcome:
        async def act() -> Outcome:
            name, _ = self._speaker(person)
            sector, arena = self.area(area)
            reason = self.engine.availability(name, sector, arena)
            if reason:
                raise TownError(f"you cannot go there now: {reason}")
            events, minutes = await commands.walk(self.engine, name, sector, arena)
            when = f"in {minutes} game minutes" if minutes else "now"
            return Outcome(f"You will be at {sector}: {arena} {when}.", events)
        return await self._run("go", person, {"area": area}, act)

    async def leave(self, person: Person) -> Outcome:
        async def act() -> Outcome:
            name, _ = self._speaker(person)
            events = await commands.leave(self.engine, person.id)
            return Outcome(f"{name} has left the town.", events)
        return await self._run("leave", person, {}, act)

    # --- speaking ---------------------------------------------------------------------------

    @staticmethod
    def _addressed(text: str, present: list[str]) -> str | None:
        """The first one present whom the text names (full or first name), else the only one."""
        lowered = text.lower()
        named = (n for n in present if re.search(rf"\b({re.escape(n.lower())}|"
                                                 rf"{re.escape(n.split()[0].lower())})\b", lowered))
        return next(named, present[0] if len(present) == 1 else None)

    def _named_elsewhere(self, text: str, present: list[str], speaker: str) -> str | None:
        """A resident the text names who is not among those present (nor the speaker)."""
        lowered = text.lower()
        firsts = Counter(n.split()[0] for n in self.engine.minds)
        for name in sorted(self.engine.minds):
            if name in present or name == speaker:
                continue
            first = name.split()[0]
            forms = [name.lower()] + ([first.lower()] if firsts[first] == 1 else [])
            if any(re.search(rf"\b{re.escape(form)}\b", lowered) for form in forms):
                return name
        return None

    def whereabouts(self, resident: str) -> str:
        """'Isabella is at Hobbs Cafe, serving coffee' (or on the way somewhere, or asleep)."""
        body, first = self.engine.bodies[resident], resident.split()[0]
        if body.walking or body.sector is None:
            return f"{first} is on the way to {body.travel_sector}"
        if body.action == "sleeping":
            return f"{first} is asleep at {body.sector}"
        return f"{first} is at {body.sector}, {body.action}"

    async def say(self, person: Person, text: str) -> Outcome:
        async def act() -> Outcome:
            name, body = self._speaker(person)
            said = bounded(text, "say")
            if body.walking or body.sector is None:
                raise TownError(f"you are on the way to {body.travel_sector}; speak when you "
                                "arrive")
            # An area is a sector (one channel on Discord): everyone awake in it hears.
            present = [n for n, b in sorted(self.engine.bodies.items())
                       if n in self.engine.minds and n != name and b.sector == body.sector
                       and b.action != "sleeping"]
            addressed = self._addressed(said, present)
            history = self._exchanges.setdefault((name, addressed), []) if addressed else []
            events, reply = await commands.speak(self.engine, name, said, present, addressed,
                                                 [*history[-7:], (name, said)])
            if addressed is not None and reply is not None:
                history += [(name, said), (addressed, reply)]  # only what was committed
                del history[:-8]
            elsewhere = None if reply else self._named_elsewhere(said, present, name)
            heard = f"heard by {', '.join(present)}" if present else "nobody here is awake to hear you"
            if reply:
                answer = f"{addressed}: {reply}"
            elif elsewhere:
                answer = f"{elsewhere} is not here; {self.whereabouts(elsewhere)} ({heard})."
            else:
                answer = heard[0].upper() + heard[1:] + ("; say a name to get an answer." if present else ".")
            return Outcome(answer, events, {"reply": reply, "from": addressed})
        return await self._run("say", person, {"text": text}, act)

    # --- the inner voice, interviews, objects -------------------------------------------------

    async def whisper(self, person: Person, resident: str, text: str) -> Outcome:
        async def act() -> Outcome:
            who = self.resident(resident)
            directive = bounded(text, "whisper")
            thought, replanned = await commands.whisper(self.engine, who, directive)
            changed = "and rewrites the rest of the day" if replanned else \
                "(asleep now: it will shape tomorrow's plan)"
            return Outcome(f"{who} hears the thought {quoted(thought)} {changed}.",
                           data={"thought": thought, "replanned": replanned})
        return await self._run("whisper", person, {"resident": resident, "text": text}, act)

    async def interview(self, person: Person, resident: str, question: str,
                        as_persona: str | None = None, remember: bool = False,
                        access: Ablation | None = None) -> Outcome:
        """The resident answers while the clock runs: the town is read under the lock, the
        model answers without it (seconds, or a minute on a slow server), and the memory and
        audit row are committed under it again. Uses under way at once count toward the limit."""
        arguments = {"resident": resident, "question": question, "as": as_persona,
                     "remember": remember}
        async with self.lock:
            try:
                self.admission.admit("interview", person, paused=self.paused)
                who = self.resident(resident)
                asked = bounded(question, "interview")
                asker = quoted(bounded(as_persona, "description"), 120) if as_persona else \
                    quoted_name(person.name)  # a platform's display name is a person's text too
            except TownError as refusal:
                await self._refused("interview", person, arguments, refusal)
                raise
            self.admission.count("interview", person)
            mind, body, now = self.engine.minds[who], self.engine.bodies[who], self.engine.clock.now
            summary, planning = mind.summary_text, mind.state.planning
            moment = {"doing": body.action, "plan": todays_plan(planning.day, planning.blocks, now),
                      "people": list(self.engine.minds),
                      "guarded": self.engine.settings.interview_guards}
        # The stream only grows, and retrieval reads it in one step: a tick under way meanwhile
        # adds memories, never changes the ones read.
        reply = await answer_as(self.engine.model, mind.persona, summary, mind.stream, asked, now,
                                asker=asker, access=access or Ablation(), remember=remember,
                                **moment)
        async with self.lock, self.engine.held() as hold:
            if remember:
                await commands.remember_interview(self.engine, who, asker, asked, reply)
            outcome = Outcome(f"{who}: {reply}", data={"answer": reply, "resident": who})
            hold.audits.append(self._audit_row("interview", person, arguments, "ok",
                                               outcome.text[:200]))
        return outcome

    async def set_object(self, person: Person, path: str, state: str | None = None) -> Outcome:
        async def act() -> Outcome:
            target, new_state = path, state
            if state is None:  # the whole change in `path`: '<Sector: arena: object> is burning'
                written = OBJECT_FORM.match(path or "")
                if written is None:
                    raise TownError("write the change as <Sector: arena: object> is <state>, "
                                    "e.g. <Isabella Rodriguez's apartment: kitchen: stove> is "
                                    "burning")
                target, new_state = written.groups()
            full = self.object_path(target)
            value = bounded(new_state, "state")
            events = await commands.change_object(self.engine, full, value)
            return Outcome(f"<{full}> is {value}; anyone there notices at the next tick.",
                           events)
        return await self._run("set", person, {"path": path, "state": state}, act)

    async def look(self, person: Person, path: str) -> Outcome:
        async def act() -> Outcome:
            full = self.object_path(path)
            state = self.engine.objects.get(full) or self.engine.defaults[full]
            users = sorted(n for n, b in self.engine.bodies.items() if b.object_path == full)
            using = f"; in use by {', '.join(users)}" if users else ""
            return Outcome(f"<{full}> is {state}{using}.",
                           data={"path": full, "state": state, "users": users})
        return await self._run("look", person, {"path": path}, act)

    # --- moderators -------------------------------------------------------------------------

    async def seed(self, moderator: Person, resident: str, intent: str) -> Outcome:
        async def act() -> Outcome:
            who = self.resident(resident)
            text = bounded(intent, "seed")
            await commands.seed(self.engine, who, text)
            return Outcome(f"{who} now has in mind: {quoted(text)}")
        return await self._run("seed", moderator, {"resident": resident, "intent": intent}, act)

    def scenario_names(self) -> list[str]:
        return scenario_names(self.scenarios)

    async def load_scenario(self, moderator: Person, name: str) -> Outcome:
        async def act() -> Outcome:
            names = self.scenario_names()
            if name not in names:
                raise TownError(f"there is no scenario '{name}'{closest_names(name, names)}; "
                                f"available: {', '.join(names) or 'none'}")
            try:
                spec = load_scenario(self.scenarios, name)
            except DataError as error:
                raise TownError(str(error)) from error
            # A smaller town (--residents) seeds the residents it has and says whom it skipped.
            seeds: list[tuple[str, str]] = []
            absent: set[str] = set()
            for seed in spec.seeds:
                try:
                    seeds.append((self.resident(seed.resident), " ".join(seed.thought.split())))
                except TownError:
                    absent.add(seed.resident)
            objects = [(self.object_path(o.path), o.state) for o in spec.objects]
            events = await commands.apply_scenario(self.engine, seeds, objects, spec.announcement)
            skipped = f" (not in this town, so not seeded: {', '.join(sorted(absent))})" \
                if absent else ""
            return Outcome(f"Loaded scenario '{spec.name}': {' '.join(spec.description.split())}"
                           f"{skipped}", events)
        return await self._run("scenario", moderator, {"name": name}, act)

    async def announce(self, moderator: Person, text: str, area: str | None = None) -> Outcome:
        async def act() -> Outcome:
            notice = bounded(text, "announce")
            where = self.area(area) if area else None
            events, heard = await commands.announce(self.engine, notice, where[0] if where else None)
            return Outcome(f"Announced to {plural(heard, 'resident')} present.", events)
        return await self._run("announce", moderator, {"text": text, "area": area}, act)

    async def pause(self, moderator: Person) -> Outcome:
        return await self._set_paused(moderator, True)

    async def resume(self, moderator: Person) -> Outcome:
        return await self._set_paused(moderator, False)

    async def _set_paused(self, moderator: Person, paused: bool) -> Outcome:
        case = "pause" if paused else "resume"

        async def act() -> Outcome:
            if self.paused == paused:
                raise TownError(f"the town is already {'paused' if paused else 'running'}")
            self.engine.set_flags(paused=paused)  # committed with the audit row
            return Outcome("The town is paused." if paused else "The town is running again.")
        return await self._run(case, moderator, {}, act)

    async def speed(self, moderator: Person, seconds_per_tick: float) -> Outcome:
        async def act() -> Outcome:
            low, high = SPEED_RANGE
            if not low <= seconds_per_tick <= high:
                raise TownError(f"{seconds_per_tick} s per tick is out of range; use {low:g} "
                                f"to {high:g} seconds")
            self.engine.set_flags(tick_seconds=seconds_per_tick)  # committed with the audit row
            return Outcome(f"One tick ({self.engine.clock.tick_minutes} game minutes) every "
                           f"{plural(seconds_per_tick, 'real second')}.")
        return await self._run("speed", moderator, {"seconds": seconds_per_tick}, act)

    # --- looking ------------------------------------------------------------------------------

    async def status(self, person: Person, tick_seconds: float | None = None) -> Outcome:
        """The clock and the town. `tick_seconds` is the pace the platform really ticks at (a
        terminal's --speed), when it is not the town's stored one."""
        async def act() -> Outcome:
            engine = self.engine
            state = "paused" if self.paused else "running"
            seconds = engine.town.tick_seconds if tick_seconds is None else tick_seconds
            pace = "back to back" if seconds == 0 else f"every {plural(seconds, 'real second')}"
            visitors = len(engine.people)
            text = (f"{engine.world.town} is {state}: {engine.clock.now:%A %B %d, %H:%M}, tick "
                    f"{engine.clock.tick}, {plural(len(engine.minds), 'resident')}, "
                    f"{plural(visitors, 'person', 'people')} visiting, one tick "
                    f"({engine.clock.tick_minutes} game minutes) {pace}; model: {engine.model.label}")
            notes = model_notes(engine.model, engine.clock.day_number)  # answers, budget
            text += "".join(f"\n{line}" for line in notes["answers"] + notes["budget"])
            # What a real day costs at this pace, from the last game days' recorded usage (the
            # committed rows: the read needs no lock).
            cost = await recent_cost(engine.store, engine.town.id, engine.clock.tick,
                                     engine.clock.tick_minutes, seconds, self.model_settings)
            cost_line = real_day_line(cost, engine.clock.tick_minutes, seconds)
            text += "\n" + cost_line
            return Outcome(text, data={"paused": self.paused, "tick": engine.clock.tick,
                                       "time": format_game_time(engine.clock.now),
                                       "town": engine.world.town, "residents": len(engine.minds),
                                       "visitors": visitors, "tick_seconds": seconds,
                                       "tick_minutes": engine.clock.tick_minutes,
                                       "model": engine.model.label,
                                       "per_real_day": asdict(cost) if cost else None,
                                       "per_real_day_line": cost_line,
                                       **{key: lines for key, lines in notes.items() if lines}})
        return await self._run("status", person, {}, act)

    async def where(self, person: Person) -> Outcome:
        async def act() -> Outcome:
            rows = [{"name": name, "kind": "resident" if body.visitor is None else "visitor",
                     "place": body.place, "action": body.action, "emoji": body.emoji}
                    for name, body in sorted(self.engine.bodies.items())]
            text = "\n".join(f"{r['emoji']} {r['name']}: {r['action']} ({r['place']})"
                             for r in rows)
            return Outcome(text, data={"people": rows})
        return await self._run("where", person, {}, act)

    async def profile(self, person: Person, resident: str) -> Outcome:
        async def act() -> Outcome:
            who = self.resident(resident)
            mind, body = self.engine.minds[who], self.engine.bodies[who]
            plan = [f"{clock_face(minute_of_day(b.start))} {b.activity}"
                    for b in mind.state.planning.blocks]
            text = (f"{mind.summary_text}\nNow: {body.emoji} {body.action} ({body.place})\n"
                    "Today: " + ("; ".join(plan) or "not planned yet"))
            return Outcome(text, data={"resident": who, "summary": mind.summary_text,
                                       "action": body.action, "place": body.place, "plan": plan})
        return await self._run("profile", person, {"resident": resident}, act)

    async def memories(self, moderator: Person, resident: str, query: str, count: int = 10) -> Outcome:
        async def act() -> Outcome:
            who = self.resident(resident)
            asked = bounded(query, "query")
            if not 1 <= count <= 50:
                raise TownError(f"{count} memories is out of range; ask for 1 to 50")
            mind = self.engine.minds[who]
            vector = (await self.engine.model.embed([asked]))[0]
            found = retrieve(mind.stream, vector, self.engine.clock.now, limit=count,
                             weights=self.engine.settings.weights, touch=False)
            rows = [{"id": s.memory.id, "kind": s.memory.kind, "text": s.memory.text,
                     "score": round(s.score, 3), "recency": round(s.recency, 3),
                     "importance": round(s.importance, 3), "relevance": round(s.relevance, 3)}
                    for s in found]
            text = "\n".join(f"{r['score']:.2f} (rec {r['recency']:.2f}, imp {r['importance']:.2f},"
                             f" rel {r['relevance']:.2f}) [{r['kind']}] {r['text']}" for r in rows)
            return Outcome(text or "no memories yet", data={"memories": rows})
        return await self._run("memories", moderator, {"resident": resident, "query": query,
                                                       "count": count}, act)

    async def event_status(self, moderator: Person) -> Outcome:
        """For each tracked event (the party, the candidacy): who knows of it, by which memory,
        from whom, and who has it in today's plan. From memories and plans: no model calls."""
        async def act() -> Outcome:
            today = self.engine.clock.now.date()
            minds = self.engine.minds
            memories = {name: mind.stream.memories for name, mind in minds.items()}
            plans = {name: [*mind.state.planning.day_plan,
                            *(b.activity for b in mind.state.planning.blocks)]
                     for name, mind in minds.items() if mind.state.planning.day == today}
            statuses = [event_status(e, memories, plans) for e in tracked_events().values()]
            known = [s for s in statuses if s.heard]
            text = "\n\n".join(describe_status(s) for s in known) or (
                "Nobody knows of a tracked event yet; load one with the scenario command "
                "(valentines-party, mayoral-election).")
            return Outcome(text, data={"events": {
                s.event.key: {"heard": [{"resident": h.resident, "teller": h.teller,
                                         "time": format_game_time(h.time),
                                         "memory_id": h.memory_id} for h in s.heard],
                              "planning": list(s.planning)} for s in statuses}})
        return await self._run("event_status", moderator, {}, act)

    # --- the web page's link ------------------------------------------------------------------

    async def web_link(self, person: Person) -> Outcome:
        """The secret of the town's web page, made on first use: its pages answer only under it.
        The token travels in `data` only, never in the text the audit log keeps."""
        async def act() -> Outcome:
            store, town_id = self.engine.store, self.engine.town.id
            token = await store.web_token(town_id)
            if token == WEB_CLOSED:
                raise TownError("a moderator has closed the town's web page; a moderator can "
                                "open it again with a new link")
            if token is None:
                token = secrets.token_urlsafe(24)
                await store.set_web_token(town_id, token)
            return Outcome("The town's web page, for the people of this town only.",
                           data={"token": token})
        return await self._run("web_link", person, {}, act)

    async def rotate_web_link(self, moderator: Person) -> Outcome:
        """A new secret for the web page (opening it if it was closed): the old link stops
        working at once."""
        async def act() -> Outcome:
            token = secrets.token_urlsafe(24)
            await self.engine.store.set_web_token(self.engine.town.id, token)
            return Outcome("The town's web page has a new link; the old one no longer works.",
                           data={"token": token})
        return await self._run("web_rotate", moderator, {}, act)

    async def close_web_page(self, moderator: Person) -> Outcome:
        """No link works until a moderator makes a new one."""
        async def act() -> Outcome:
            await self.engine.store.set_web_token(self.engine.town.id, WEB_CLOSED)
            return Outcome("The town's web page is closed: no link opens it until a moderator "
                           "makes a new one.")
        return await self._run("web_close", moderator, {}, act)
