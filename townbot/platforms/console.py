"""`townbot play`: the town in a terminal. It ticks on a timer, prints each area's events in
its own colour, and turns typed commands into TownService use cases (plain text is /say).

Commands come from the keyboard (with history and tab completion) or, when standard input is
not a terminal, from a pipe, so a session can be scripted:
    printf '/join Alex a reporter\\nWho is running for mayor?\\n' | townbot play --ticks 6
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from townbot.town.service import Outcome, Person, TownError, TownService
from townbot.world.events import TownEvent

COLOURS = (31, 32, 33, 34, 35, 36, 91, 92, 93, 94, 95, 96)
HELP = """Commands (plain text is /say):
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
  /wait [N]                         let N ticks pass now (default 1)
  /help | /quit"""
COMMANDS = ("/join", "/say", "/go", "/leave", "/whisper", "/interview", "/set", "/look", "/where",
            "/status", "/profile", "/seed", "/scenario", "/announce", "/memories", "/pause",
            "/resume", "/speed", "/wait", "/help", "/quit")


def add_play_parser(commands: argparse._SubParsersAction) -> None:
    play = commands.add_parser("play", help="the town in the terminal: watch it and join in")
    play.add_argument("--world", help="world file (default: ./world.yaml)")
    play.add_argument("--personas", help="persona folder (default: ./personas)")
    play.add_argument("--db", default="townbot.db", help="database file (default: townbot.db)")
    play.add_argument("--seed", type=int, default=0, help="seed for a new town (default 0)")
    play.add_argument("--ticks", type=int, help="stop after this many ticks")
    play.add_argument("--speed", type=float, default=2.0,
                      help="real seconds per tick (default 2; 0 runs ticks back to back)")
    play.add_argument("--name", default=None, help="your name in the audit log (default: login)")
    play.add_argument("--role", choices=["moderator", "everyone"], default="moderator",
                      help="play as a moderator (default) or as everyone else")
    play.add_argument("--scenario", help="scenario from scenarios/ to load first")


def colour_for(channel: str, enabled: bool) -> Callable[[str], str]:
    if not enabled:
        return lambda text: text
    code = COLOURS[zlib.crc32(channel.encode()) % len(COLOURS)]
    return lambda text: f"\x1b[{code}m{text}\x1b[0m"


@dataclass
class Console:
    service: TownService
    person: Person
    out: TextIO = sys.stdout
    colour: bool = False
    seconds_per_tick: float = 2.0
    ticks_done: int = 0

    def show(self, events: list[TownEvent]) -> None:
        for event in events:
            paint = colour_for(event.channel, self.colour)
            print(paint(f"#{event.channel:<22} {event.line()}"), file=self.out, flush=True)

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def tick(self) -> None:
        self.show(await self.service.tick())
        self.ticks_done += 1

    # --- commands ---------------------------------------------------------------------------

    async def handle(self, line: str) -> bool:
        """Run one typed line; False when the person asked to quit."""
        line = line.strip()
        if not line:
            return True
        if not line.startswith("/"):
            line = "/say " + line
        name, _, rest = line.partition(" ")
        handler = self._handlers().get(name.lower())
        if handler is None:
            self.say(f"unknown command {name}; type /help for the list")
            return True
        if name.lower() == "/quit":
            return False
        try:
            outcome = await handler(rest.strip())
        except TownError as refusal:
            self.say(f"! {refusal}")
            return True
        if outcome is not None:
            self.show(outcome.events)
            self.say(f"> {outcome.text}")
        return True

    def _handlers(self) -> dict[str, Callable[[str], object]]:
        s, me = self.service, self.person
        return {
            "/join": self._join, "/say": lambda a: s.say(me, a),
            "/go": lambda a: s.go(me, a), "/leave": lambda a: s.leave(me),
            "/whisper": lambda a: s.whisper(me, *self._resident_and_text(a)),
            "/interview": self._interview, "/set": lambda a: s.set_object(me, a),
            "/look": lambda a: s.look(me, a),
            "/where": lambda a: s.where(me), "/status": lambda a: s.status(me),
            "/profile": lambda a: s.profile(me, a),
            "/seed": lambda a: s.seed(me, *self._resident_and_text(a)),
            "/scenario": lambda a: s.load_scenario(me, a), "/announce": self._announce,
            "/memories": lambda a: s.memories(me, *self._resident_and_text(a)),
            "/pause": lambda a: s.pause(me), "/resume": lambda a: s.resume(me),
            "/speed": self._speed, "/wait": self._wait, "/help": self._help,
            "/quit": self._help,
        }

    def _resident_and_text(self, arguments: str) -> tuple[str, str]:
        """'John Lin: text', or a resident's full or first name followed by the text."""
        before, colon, after = arguments.partition(":")
        if colon and self._is_resident(before):
            return before.strip(), after.strip()
        lowered = arguments.lower()
        for name in sorted(self.service.engine.minds, key=len, reverse=True):
            for form in (name, name.split()[0]):
                if lowered.startswith(form.lower() + " "):
                    return name, arguments[len(form):].strip()
        raise TownError("name a resident first, e.g. /whisper John Lin: You are going to run "
                        "for mayor")

    async def _join(self, arguments: str) -> Outcome:
        words, area = arguments, "Johnson Park"
        if " @ " in arguments:
            words, _, area = arguments.partition(" @ ")
        name, _, description = words.strip().partition(" ")
        return await self.service.join(self.person, name, description, area.strip())

    async def _interview(self, arguments: str) -> Outcome:
        resident, question = self._resident_and_text(arguments)
        persona = None
        if " as " in question:
            question, _, persona = question.rpartition(" as ")
        return await self.service.interview(self.person, resident, question.strip(),
                                            as_persona=persona.strip() if persona else None)

    async def _announce(self, arguments: str) -> Outcome:
        area, sep, text = arguments.partition(":")
        if sep and self._is_area(area):
            return await self.service.announce(self.person, text.strip(), area.strip())
        return await self.service.announce(self.person, arguments)

    def _is_resident(self, text: str) -> bool:
        return _resolves(self.service.resident, text)

    def _is_area(self, text: str) -> bool:
        return _resolves(self.service.area, text)

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
        if not 1 <= count <= 1000:
            raise TownError(f"{count} ticks is out of range; wait 1 to 1000 ticks")
        if self.service.paused:
            raise TownError("the town is paused; /resume it first")
        for _ in range(count):
            await self.tick()

    async def _help(self, arguments: str) -> None:
        self.say(HELP)

    # --- completion -------------------------------------------------------------------------

    def completions(self) -> list[str]:
        engine = self.service.engine
        names = list(engine.minds) + [n.split()[0] for n in engine.minds]
        return [*COMMANDS, *names, *engine.world.sectors, *self.service.scenario_names()]


def _resolves(lookup: Callable[[str], object], text: str) -> bool:
    try:
        lookup(text.strip())
    except TownError:
        return False
    return True


def install_completion(console: Console) -> None:
    try:
        import readline
    except ImportError:  # some platforms ship Python without readline
        return
    words = console.completions()

    def complete(text: str, state: int) -> str | None:
        buffer = readline.get_line_buffer()
        matches = [w for w in words if w.lower().startswith(buffer.lower())
                   or w.lower().startswith(text.lower())]
        if state >= len(matches):
            return None
        match = matches[state]
        return match[len(buffer) - len(text):] if match.lower().startswith(buffer.lower()) \
            else match

    readline.set_completer_delims("\t\n")
    readline.set_completer(complete)
    readline.parse_and_bind("tab: complete")


async def read_lines(queue: asyncio.Queue[str | None], interactive: bool) -> None:
    loop = asyncio.get_running_loop()
    while True:
        if interactive:
            try:
                line = await loop.run_in_executor(None, input, "")
            except EOFError:
                line = None
        else:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            line = line if line else None
        await queue.put(line)
        if line is None:
            return


async def play(console: Console, limit: int | None, interactive: bool) -> None:
    """Interactive: typed commands run as they come, a tick every `seconds_per_tick`.
    Scripted (input from a pipe): a tick passes before each command, so a script plays out over
    game time (/wait N lets more pass), then the remaining ticks up to --ticks. Without --ticks
    a session ends at /quit or at the end of the input."""
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    reader = asyncio.create_task(read_lines(queue, interactive))
    try:
        if interactive:
            await _play_live(console, queue, limit)
            return
        while (line := await queue.get()) is not None:
            if not line.strip():
                continue
            if (limit is None or console.ticks_done < limit) and not console.service.paused:
                await console.tick()
            if not await console.handle(line):
                return
        while limit is not None and console.ticks_done < limit and not console.service.paused:
            await console.tick()
            await asyncio.sleep(console.seconds_per_tick)
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


async def _play_live(console: Console, queue: asyncio.Queue[str | None],
                     limit: int | None) -> None:
    next_tick = time.monotonic() + console.seconds_per_tick
    while limit is None or console.ticks_done < limit:
        try:
            line = await asyncio.wait_for(queue.get(), max(0.0, next_tick - time.monotonic()))
        except TimeoutError:
            if not console.service.paused:
                await console.tick()
            next_tick = time.monotonic() + console.seconds_per_tick
            continue
        if line is None or not await console.handle(line):
            return


def person_for(args: argparse.Namespace) -> Person:
    name = args.name or getpass.getuser()
    return Person(f"console:{name}", name, moderator=args.role == "moderator")



SYSTEM = Person("console:scenario", "scenario loader", moderator=True)


async def run_play(args: argparse.Namespace, open_town: Callable[..., object]) -> int:
    """`townbot play`: `open_town` opens the engine (see townbot.town.launch.open_engine)."""
    engine = await open_town()
    console = Console(TownService(engine), person_for(args), colour=sys.stdout.isatty(),
                      seconds_per_tick=max(0.0, args.speed))
    interactive = sys.stdin.isatty()
    try:
        console.say(f"{engine.world.town}, {engine.clock.now:%A %B %d %H:%M}: "
                    f"{len(engine.minds)} residents. One tick ({engine.clock.tick_minutes} game "
                    f"minutes) every {console.seconds_per_tick:g} s. Type /help for commands.")
        if args.scenario:
            console.say("> " + (await console.service.load_scenario(SYSTEM, args.scenario)).text)
        if interactive:
            install_completion(console)
        await play(console, args.ticks, interactive)
    finally:
        await engine.model.close()
        await engine.store.close()
    return 0
