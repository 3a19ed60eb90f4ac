"""`townbot play`: the town in a terminal. It ticks on a timer, prints each area's events in
its own colour above an input line, and turns typed commands into TownService use cases (plain
text is /say). The input line is prompt_toolkit's: history, and completion of commands and of
their arguments (residents, areas, objects, scenarios).

When standard input is not a terminal the session is a script, a tick before each line:
    printf '/join Alex a reporter\\nWho is running for mayor?\\n' | townbot play --ticks 6
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import sys
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TextIO, TypeVar

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.patch_stdout import patch_stdout

from townbot.llm.settings import ModelSettings
from townbot.platforms.terminal import Interrupts, Screen
from townbot.town.engine import Engine
from townbot.town.launch import TownFiles, open_engine
from townbot.town.service import Outcome, Person, TownError, TownService, closest_names
from townbot.town.transcript import event_line
from townbot.wording import plural
from townbot.world.events import TownEvent

HELP = """Commands (plain text is /say; Tab completes commands, residents, areas, objects, scenarios):
  /join NAME DESCRIPTION [@ AREA]   enter the town as a visitor (default: Johnson Park)
  /say TEXT                         speak where you are; name someone to get an answer
  /go AREA                          walk to another area (e.g. /go Johnson Park)
  /leave                            leave the town
  /whisper RESIDENT: TEXT           speak as a resident's inner voice
  /interview RESIDENT: QUESTION [as PERSONA]   ask a resident (changes no memory)
  /set <SECTOR: ARENA: OBJECT> is STATE        change an object, e.g. a stove to burning
  /look <SECTOR: ARENA: OBJECT>                 an object's state and who is using it
  /where | /status | /profile RESIDENT
  /seed RESIDENT: INTENT | /scenario NAME | /announce [AREA:] TEXT     (moderators)
  /memories RESIDENT: QUERY | /pause | /resume | /speed SECONDS        (moderators)
  /event                            who knows of each seeded event, from whom (moderators)
  /wait [N]                         let N ticks pass now (default 1; at most 1000 or what
                                    --ticks leaves)
  /help | /quit (or Ctrl-D; Ctrl-C also stops, once the tick under way is saved)"""
COMMANDS = ("/join", "/say", "/go", "/leave", "/whisper", "/interview", "/set", "/look", "/where",
            "/status", "/profile", "/seed", "/scenario", "/announce", "/memories", "/event", "/pause",
            "/resume", "/speed", "/wait", "/help", "/quit")
# What each command takes first, for completion ("resident:" is a name then a colon).
ARGUMENTS = {"/whisper": "resident:", "/interview": "resident:", "/seed": "resident:",
             "/memories": "resident:", "/profile": "resident", "/go": "area", "/announce": "area:",
             "/scenario": "scenario", "/set": "object", "/look": "object"}
EXAMPLES = {"/whisper": "/whisper John Lin: You are going to run for mayor",
            "/interview": "/interview Isabella Rodriguez: What are you planning this week?",
            "/seed": "/seed Isabella Rodriguez: Throw a Valentine's Day party at Hobbs Cafe",
            "/memories": "/memories Klaus Mueller: research"}
PROMPT = "you> "
WAIT_MAX = 1000  # /wait's most ticks at once, when --ticks does not leave fewer
T = TypeVar("T")


@dataclass
class Console:
    """Typed lines to use cases, events to area-coloured lines. `out` None is standard output."""

    service: TownService
    person: Person
    out: TextIO | None = None
    styled: bool = False
    seconds_per_tick: float = 2.0
    ticks_done: int = 0
    tick_limit: int | None = None  # --ticks: the session's ticks, /wait's included
    quitting: asyncio.Event = field(default_factory=asyncio.Event)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)  # a signal asked to stop

    def __post_init__(self) -> None:
        world = self.service.engine.world
        channels = [s.channel for s in world.sectors.values()] + [world.town_hall_channel]
        self.screen = Screen(self.out, styled=self.styled, channels=channels)
        self._width = max(len(c) for c in channels) + 1

    def pace(self) -> str:
        if self.seconds_per_tick == 0:
            return "after another, back to back"
        return f"every {plural(self.seconds_per_tick, 'real second')}"

    def show(self, events: list[TownEvent]) -> None:
        """The events in game-time order: a conversation comes as one block when it ends, and
        its lines go between the tick's other events rather than stepping the clock back."""
        for event in sorted(events, key=lambda e: e.game_time):
            self.screen.area_line(event_line(event, self._width))

    async def tick(self, *, paced: bool = False) -> None:
        """One tick; a tick of the running clock lets slow talks carry over (Engine.tick)."""
        self.show(await self.service.tick(interval=self.seconds_per_tick if paced else None))
        self.ticks_done += 1

    async def run_clock(self, limit: int | None) -> None:
        """A tick every `seconds_per_tick` until `limit` or quitting; a tick under way when
        quitting begins is finished (and committed) first."""
        while limit is None or self.ticks_done < limit:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.quitting.wait(), self.seconds_per_tick)
            if self.quitting.is_set():
                return
            if not self.service.paused:
                await self.tick(paced=True)

    # --- commands ---------------------------------------------------------------------------

    async def handle(self, line: str) -> bool:
        """Run one typed line; False when the person asked to quit."""
        line = line.strip()
        if not line:
            return True
        if not line.startswith("/"):
            line = "/say " + line
        name, _, rest = line.partition(" ")
        name = name.lower()
        if name == "/quit":
            return False
        handler = self._handlers().get(name)
        try:
            if handler is None:
                raise TownError(f"there is no command {name}{closest_names(name, list(COMMANDS))}; "
                                "type /help for the list")
            outcome = await handler(rest.strip())
        except TownError as refusal:
            self.screen.refusal(str(refusal))
            return True
        if outcome is not None:
            self.show(outcome.events)
            if not _already_shown(outcome):
                self.screen.reply(outcome.text)
        return True

    def _handlers(self) -> dict[str, Callable[[str], Awaitable[Outcome | None]]]:
        s, me = self.service, self.person
        return {
            "/join": self._join, "/say": lambda a: s.say(me, a),
            "/go": lambda a: s.go(me, a), "/leave": lambda a: s.leave(me),
            "/whisper": lambda a: s.whisper(me, *self._resident_and_text(a, "/whisper")),
            "/interview": self._interview, "/set": lambda a: s.set_object(me, a),
            "/look": lambda a: s.look(me, a),
            "/where": self._where, "/status": self._status,
            "/profile": lambda a: s.profile(me, a),
            "/seed": lambda a: s.seed(me, *self._resident_and_text(a, "/seed")),
            "/scenario": lambda a: s.load_scenario(me, a), "/announce": self._announce,
            "/memories": lambda a: s.memories(me, *self._resident_and_text(a, "/memories")),
            "/event": lambda a: s.event_status(me),
            "/pause": lambda a: s.pause(me), "/resume": lambda a: s.resume(me),
            "/speed": self._speed, "/wait": self._wait, "/help": self._help,
        }

    def _resident_and_text(self, arguments: str, command: str) -> tuple[str, str]:
        """'John Lin: text' (the service checks the name), or a resident's full or first name
        followed by the text."""
        before, colon, after = arguments.partition(":")
        if colon:
            return before.strip(), after.strip()
        lowered = arguments.lower()
        for name in sorted(self.service.engine.minds, key=len, reverse=True):
            for form in (name, name.split()[0]):
                if lowered == form.lower() or lowered.startswith(form.lower() + " "):
                    return name, arguments[len(form):].strip()
        first = arguments.split()[0] if arguments.split() else ""
        try:
            self.service.resident(first)
        except TownError as unknown:
            raise TownError(f"{unknown}; name a resident first, e.g. {EXAMPLES[command]}") from None
        raise TownError(f"name a resident first, e.g. {EXAMPLES[command]}")

    async def _join(self, arguments: str) -> Outcome:
        words, area = arguments, "Johnson Park"
        if " @ " in arguments:
            words, _, area = arguments.partition(" @ ")
        name, _, description = words.strip().partition(" ")
        return await self.service.join(self.person, name, description, area.strip())

    async def _interview(self, arguments: str) -> Outcome:
        resident, question = self._resident_and_text(arguments, "/interview")
        persona = None
        if " as " in question:
            question, _, persona = question.rpartition(" as ")
        return await self.service.interview(self.person, resident, question.strip(),
                                            as_persona=persona.strip() if persona else None)

    async def _announce(self, arguments: str) -> Outcome:
        area, sep, text = arguments.partition(":")
        if sep:
            try:
                self.service.area(area.strip())
            except TownError:
                pass  # not an area: the colon is part of the text
            else:
                return await self.service.announce(self.person, text.strip(), area.strip())
        return await self.service.announce(self.person, arguments)

    async def _where(self, arguments: str) -> None:
        outcome = await self.service.where(self.person)
        rows = [[p["emoji"], p["name"], p["action"], p["place"]] for p in outcome.data["people"]]
        # on a narrow terminal the place is shortened first and what people do wraps: who
        # does what is never lost
        self.screen.table(["", "who", "doing", "where"], rows, wrap=[2], shorten=[3])

    async def _status(self, arguments: str) -> None:
        data = (await self.service.status(self.person, self.seconds_per_tick)).data
        rows = [["town", f"{data['town']}, {'paused' if data['paused'] else 'running'}"],
                ["game time", f"{self.service.engine.clock.now:%A %B %d, %H:%M} (tick {data['tick']})"],
                ["speed", f"one tick ({data['tick_minutes']} game minutes) {self.pace()}"],
                ["people", f"{plural(data['residents'], 'resident')}, "
                           f"{plural(data['visitors'], 'visitor')}"],
                ["model", data["model"]],
                ["cost", data["per_real_day_line"]]]
        rows += [["answers", line] for line in data.get("answers", ())]
        rows += [["budget", line] for line in data.get("budget", ())]
        self.screen.table([], rows)

    async def _speed(self, arguments: str) -> Outcome:
        try:
            seconds = float(arguments)
        except ValueError as error:
            raise TownError(f"'{arguments}' is not a number of seconds; e.g. /speed 2") from error
        outcome = await self.service.speed(self.person, seconds)
        self.seconds_per_tick = seconds
        return outcome

    async def _wait(self, arguments: str) -> None:
        try:
            count = int(arguments or "1")
        except ValueError as error:
            raise TownError(f"'{arguments}' is not a whole number of ticks; e.g. /wait 3") \
                from error
        most = WAIT_MAX if self.tick_limit is None else \
            min(WAIT_MAX, self.tick_limit - self.ticks_done)
        if most < 1:
            raise TownError(f"all {self.tick_limit} ticks of --ticks have passed; /quit to leave")
        if not 1 <= count <= most:
            within = "" if most == WAIT_MAX else f" (--ticks {self.tick_limit} leaves {most})"
            raise TownError(f"{count} ticks is out of range; wait 1 to {most} ticks{within}")
        if self.service.paused:
            raise TownError("the town is paused; /resume it first")
        for _ in range(count):
            if self.stopping.is_set() or self.quitting.is_set():
                break  # a signal stops a long wait after the tick under way
            await self.tick()

    async def _help(self, arguments: str) -> None:
        self.screen.line(HELP)


def _already_shown(outcome: Outcome) -> bool:
    """Whether the outcome's text is a resident's answer its events have just printed as their
    line, so that the answer is not printed twice."""
    reply, speaker = (outcome.data or {}).get("reply"), (outcome.data or {}).get("from")
    return bool(reply) and any(e.kind == "speech" and e.actor == speaker and e.text == reply
                               for e in outcome.events)


# --- completion -------------------------------------------------------------------------------


def _matching(typed: str, options: Iterable[str]) -> list[str]:
    """Options that start with what was typed, or have a word that does ('Hob', 'cafe')."""
    wanted = typed.strip().lower()
    return [o for o in options
            if o.lower().startswith(wanted) or any(w.startswith(wanted) for w in o.lower().split())]


@dataclass
class TownCompleter(Completer):
    """Completes a line's command, then its argument: a resident (and the colon after it), an
    area, a scenario, or an object path <Sector: arena: object> one part at a time."""

    service: TownService

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        for text, start in self.complete(document.text_before_cursor):
            yield Completion(text, start_position=start, display=text.rstrip(": >"))

    def complete(self, line: str) -> list[tuple[str, int]]:
        """(replacement, start position relative to the cursor) for what is typed so far."""
        command, space, argument = line.partition(" ")
        if not space:
            return [(c, -len(command)) for c in COMMANDS if c.startswith(command.lower())] \
                if command.startswith("/") else []
        kind = ARGUMENTS.get(command.lower())
        if command.lower() == "/join" and " @ " in argument:
            kind, argument = "area", argument.rpartition(" @ ")[2]
        if kind is None or (kind.endswith(":") and ":" in argument):
            return []
        if kind == "object":
            return self._object(argument)
        engine = self.service.engine
        options = {"resident": list(engine.minds), "area": list(engine.world.sectors),
                   "scenario": self.service.scenario_names()}[kind.rstrip(":")]
        after = ": " if kind.endswith(":") else ""
        return [(o + after, -len(argument)) for o in _matching(argument, options)]

    def _object(self, argument: str) -> list[tuple[str, int]]:
        if not argument.startswith("<") or ">" in argument:
            return [("<", -len(argument))] if not argument.strip() else []
        *done, typed = argument[1:].split(":")
        world = self.service.engine.world
        done = [part.strip() for part in done]
        if not done:
            options, after = list(world.sectors), ": "
        elif len(done) == 1 and done[0] in world.sectors:
            options, after = list(world.sectors[done[0]].arenas), ": "
        elif len(done) == 2 and done[0] in world.sectors and done[1] in world.sectors[done[0]].arenas:
            options, after = list(world.arena(done[0], done[1]).objects), "> "
        else:
            return []
        return [(o + after, -len(typed)) for o in _matching(typed, options)]


# --- the session --------------------------------------------------------------------------------


async def first_of(awaitable: Awaitable[T], event: asyncio.Event) -> T | None:
    """The awaitable's result, or None as soon as `event` is set (it is then cancelled)."""
    task = asyncio.ensure_future(awaitable)
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return task.result() if not task.cancelled() else None


def read_piped_lines(queue: asyncio.Queue[str | None], stream: TextIO) -> None:
    """Feed standard input's lines to `queue` from a daemon thread (it never holds up the exit);
    bytes that are not UTF-8 become U+FFFD instead of stopping the session."""
    loop = asyncio.get_running_loop()

    def pump() -> None:
        try:
            for raw in iter(stream.buffer.readline, b""):
                loop.call_soon_threadsafe(queue.put_nowait, raw.decode("utf-8", errors="replace"))
            loop.call_soon_threadsafe(queue.put_nowait, None)
        except RuntimeError:  # the session ended first and its loop is closed: nobody reads on
            return

    threading.Thread(target=pump, name="stdin", daemon=True).start()


async def play_scripted(console: Console, queue: asyncio.Queue[str | None], limit: int | None,
                        stop: asyncio.Event) -> None:
    """A tick passes before each line, so a script plays out over game time (/wait N lets more
    pass), then the remaining ticks up to `limit`. Ends at /quit, the end of input, or `stop`."""
    while not stop.is_set():
        line = await first_of(queue.get(), stop)
        if line is None:
            break
        if not line.strip():
            continue
        if (limit is None or console.ticks_done < limit) and not console.service.paused:
            await console.tick()
        if not await console.handle(line):
            return
    while limit is not None and console.ticks_done < limit and not console.service.paused \
            and not stop.is_set():
        await console.tick()
        await first_of(asyncio.sleep(console.seconds_per_tick), stop)


async def play_live(console: Console, session: PromptSession, limit: int | None,
                    stop: asyncio.Event) -> bool:
    """Typed commands run as they come while the clock ticks; True when it ended by Ctrl-C.
    /quit, Ctrl-D, Ctrl-C and the end of --ticks leave at once, after the tick under way.
    The prompt is awaited here, not in a task of its own: asyncio lets a KeyboardInterrupt
    out of a task to the loop, while here it is simply caught."""
    clock = asyncio.create_task(console.run_clock(limit))
    ending = asyncio.Event()  # the clock reached --ticks, or Ctrl-C came outside the prompt
    clock.add_done_callback(lambda _: ending.set())
    watcher = asyncio.create_task(stop.wait())
    watcher.add_done_callback(lambda _: ending.set())

    def leave_prompt() -> None:
        app = session.app
        if ending.is_set() and app.is_running and app.future is not None and not app.future.done():
            app.exit(result=None)

    ending_watch = asyncio.create_task(ending.wait())
    ending_watch.add_done_callback(lambda _: leave_prompt())
    interrupted = False
    try:
        while not ending.is_set():
            try:
                line = await session.prompt_async(PROMPT, handle_sigint=False, pre_run=leave_prompt)
            except KeyboardInterrupt:  # Ctrl-C typed at the prompt
                interrupted = True
                break
            except EOFError:  # Ctrl-D
                break
            if line is not None and not await console.handle(line):
                break
    finally:
        console.quitting.set()
        watcher.cancel()
        ending_watch.cancel()
        await clock  # a tick under way commits before we leave
    return interrupted or stop.is_set()


def make_session(console: Console) -> PromptSession:
    return PromptSession(completer=TownCompleter(console.service), auto_suggest=AutoSuggestFromHistory(),
                         complete_while_typing=False)


SYSTEM = Person("console:scenario", "scenario loader", moderator=True)


async def run_play(args: argparse.Namespace, settings: ModelSettings) -> int:
    """`townbot play`. Ctrl-C, SIGTERM and SIGHUP are taken from the start; a session one ends
    says so in one line and exits with the signal's code (130, 143, 129); a signal after that
    is one line more."""
    if isinstance(sys.stdin, io.TextIOWrapper):  # a stray invalid byte must not end play
        sys.stdin.reconfigure(errors="replace")
    with Interrupts() as interrupts:
        try:
            engine = await open_engine(TownFiles(args.world, args.personas, args.residents),
                                       args.db, seed=args.seed, settings=settings)
        except asyncio.CancelledError:
            print(f"stopped by {interrupts.name} while the town was opening", file=sys.stderr)
            return interrupts.exit_code
        try:
            interrupted = await _play(engine, args, settings, interrupts.requested)
        except asyncio.CancelledError:  # a second signal: the tick under way is rolled back
            interrupted = True
        finally:
            interrupts.closing = True
            await engine.model.close()
            await engine.store.close()
        if interrupted:
            print(f"stopped by {interrupts.name} at {engine.clock.now:%a %H:%M}; the town is saved "
                  f"in {args.db}", file=sys.stderr)
            return interrupts.exit_code
    return 0


async def _play(engine: Engine, args: argparse.Namespace, settings: ModelSettings,
                stop: asyncio.Event) -> bool:
    """The session on an open town, live on a terminal or scripted from a pipe; True when
    Ctrl-C ended it."""
    name = args.name or "a visitor"  # not the login name: residents would be asked by "root"
    person = Person(f"console:{name}", name, moderator=args.role == "moderator")
    console = Console(TownService(engine, model_settings=settings), person,
                      styled=sys.stdout.isatty(), seconds_per_tick=max(0.0, args.speed),
                      tick_limit=args.ticks, stopping=stop)
    console.screen.line(f"{engine.world.town}, {engine.clock.now:%A %B %d %H:%M}: "
                        f"{plural(len(engine.minds), 'resident')}. One tick "
                        f"({engine.clock.tick_minutes} game minutes) {console.pace()}. "
                        "Type /help for commands.")
    console.screen.legend()
    if args.scenario:
        console.screen.reply((await console.service.load_scenario(SYSTEM, args.scenario)).text)
    if sys.stdin.isatty() and sys.stdout.isatty():
        with patch_stdout(raw=True):
            return await play_live(console, make_session(console), args.ticks, stop)
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    read_piped_lines(queue, sys.stdin)
    await play_scripted(console, queue, args.ticks, stop)
    return stop.is_set()
