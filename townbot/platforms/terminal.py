"""What the terminal shows, on `rich`: area colours, tables, the progress bar. On a terminal the
text is styled; into a pipe or a file it is plain, so scripts and tests read simple lines."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from townbot.platforms.arguments import STOP_SIGNALS, exit_code, say_stopping, signal_name
from townbot.town.transcript import Line
from townbot.wording import text_table

if TYPE_CHECKING:  # rich loads only for styled text, a table or a progress bar: `sim` into a
    from rich.console import Console  # pipe or a file starts without it

# Colours that stay apart from each other on dark and light backgrounds: 24 of the 256-colour
# palette, and the 12 of a 16-colour terminal (black, white and greys are left out).
RICH_COLOURS = ("color(196)", "color(40)", "color(220)", "color(33)", "color(201)", "color(44)",
                "color(208)", "color(129)", "color(118)", "color(39)", "color(211)", "color(136)",
                "color(30)", "color(160)", "color(99)", "color(148)", "color(214)", "color(51)",
                "color(170)", "color(28)", "color(166)", "color(63)", "color(180)", "color(125)")
BASIC_COLOURS = ("red", "green", "yellow", "blue", "magenta", "cyan", "bright_red", "bright_green",
                 "bright_yellow", "bright_blue", "bright_magenta", "bright_cyan")


class Palette:
    """One colour per area, each different while there are enough colours; past that, colours
    repeat and `legend` says which area has which."""

    def __init__(self, channels: Iterable[str], colours: tuple[str, ...]) -> None:
        self.channels = sorted(set(channels))
        self.colours = colours
        self.by_channel = {c: colours[i % len(colours)] for i, c in enumerate(self.channels)}

    @property
    def repeats(self) -> bool:
        return len(self.channels) > len(self.colours)

    def style(self, channel: str | None) -> str:
        if channel is None:
            return "dim"
        if channel not in self.by_channel:  # an area met later: the next colour in turn
            self.by_channel[channel] = self.colours[len(self.by_channel) % len(self.colours)]
        return self.by_channel[channel]


class Screen:
    """Prints lines, area lines, replies, refusals and tables. `file` None means whatever
    sys.stdout is at the moment of printing (prompt_toolkit swaps it to keep the input line)."""

    def __init__(self, file: TextIO | None = None, styled: bool | None = None,
                 channels: Iterable[str] = ()) -> None:
        self.file = file
        self.styled = (file or sys.stdout).isatty() if styled is None else styled
        self.console: Console | None = None  # rich's console, for styled text only
        colours = BASIC_COLOURS
        if self.styled:
            from rich.console import Console

            self.console = Console(file=file, force_terminal=True, highlight=False, markup=False,
                                   emoji=False, soft_wrap=True)
            if self.console.color_system in ("256", "truecolor"):
                colours = RICH_COLOURS
        self.palette = Palette(channels, colours)

    def line(self, text: str, style: str = "") -> None:
        if self.console is not None:
            from rich.text import Text

            self.console.print(Text(text, style=style))
        else:
            print(text, file=self.file or sys.stdout, flush=True)

    def area_line(self, line: Line) -> None:
        self.line(line.text, self.palette.style(line.channel) if self.styled else "")

    def reply(self, text: str) -> None:
        self.line(f"> {text}", "bold")

    def refusal(self, text: str) -> None:
        """Every refusal looks the same: '! what was wrong; what would be right'."""
        self.line(f"! {text}", "bold red")

    def legend(self) -> None:
        """The area colours, when some areas share one (more areas than colours)."""
        if self.console is None or not self.palette.repeats:
            return
        from rich.text import Text

        legend = Text("areas: ")
        for channel in self.palette.channels:
            legend.append(f"#{channel} ", style=self.palette.style(channel))
        self.console.print(legend)

    def table(self, headers: list[str], rows: list[list[str]], right: Iterable[int] = (),
              title: str | None = None, wrap: Iterable[int] = (),
              shorten: Iterable[int] = ()) -> None:
        """A table: rich's on a terminal, aligned plain columns otherwise. Where a terminal is
        too narrow, `shorten` columns are cut with an ellipsis first (down to a quarter of the
        width) and `wrap` columns wrap; the other columns keep their whole text."""
        from rich.cells import cell_len  # columns a text takes on a terminal (an emoji: two)

        right, wrap, shorten = frozenset(right), frozenset(wrap), frozenset(shorten)
        if self.console is None:
            text = text_table(headers, rows, right, measure=cell_len)
            print(f"{title}\n{text}" if title else text, file=self.file or sys.stdout, flush=True)
            return
        from rich.table import Table

        table = Table(title=title, title_justify="left", header_style="bold", box=None,
                      pad_edge=False, show_header=bool(headers))
        for index, header in enumerate(headers or [""] * len(rows[0] if rows else [])):
            widest = max((cell_len(row[index]) for row in rows), default=0)
            limit = max(12, self.console.width // 4) if index in shorten else None
            table.add_column(header, justify="right" if index in right else "left",
                             no_wrap=index not in wrap, overflow="ellipsis" if limit else "fold",
                             max_width=limit,
                             min_width=None if index in wrap or limit else widest)
        for row in rows:
            table.add_row(*row)
        self.console.print(table)


@contextmanager
def tick_progress(total: int, label: Callable[[], str],
                  file: TextIO | None = None) -> Iterator[Callable[[int], None]]:
    """The progress of `sim` on standard error: rich's bar on a terminal, a line per tenth
    otherwise. Yields the function to call with the ticks done; `label` gives the text after
    the bar (the game time, budget notes, ...)."""
    total, file = max(1, total), file or sys.stderr
    if not file.isatty():
        last_tenth = -1

        def line(done: int) -> None:
            nonlocal last_tenth
            text = label()
            if (tenth := 10 * done // total) != last_tenth:
                last_tenth = tenth
                print(f"progress: {done}/{total} ticks ({text})", file=file, flush=True)
        yield line
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("ticks"), TimeElapsedColumn(), TextColumn("{task.fields[label]}"),
                   console=Console(file=file), transient=False)
    task = bar.add_task("sim", total=total, label=label())
    with bar:
        yield lambda done: bar.update(task, completed=done, label=label())


class Interrupts:
    """Ctrl-C, SIGTERM and SIGHUP each ask to stop once the current tick has committed; a
    second one stops at once (the unfinished tick is rolled back). Once that happened, or once
    the town is `closing`, every further signal is one line on standard error and nothing
    else: closing the town is never cut short. Used as `with Interrupts() as stop:` inside the
    loop; `name` and `exit_code` say which signal decided the ending."""

    def __init__(self) -> None:
        self.requested = asyncio.Event()
        self.signum: int | None = None  # the signal that decided how the run ends
        self.closing = False
        self._cancelled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._previous: dict[int, object] = {}

    def __enter__(self) -> Interrupts:
        self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        try:
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.getsignal(signum)
                self._loop.add_signal_handler(signum, self.press, signum)
        except (NotImplementedError, RuntimeError, ValueError):  # no signals here (Windows, a thread)
            self._loop = None
        return self

    @property
    def name(self) -> str:
        return signal_name(self.signum or signal.SIGINT)

    @property
    def exit_code(self) -> int:
        return exit_code(self.signum or signal.SIGINT)

    def press(self, signum: int = signal.SIGINT) -> None:
        if self.closing or self._cancelled:
            say_stopping(signum)
            return
        again = self.requested.is_set()
        self.signum = signum
        self.requested.set()
        if again and self._task is not None:
            self._cancelled = True
            self._task.cancel()

    def __exit__(self, *_: object) -> None:
        if self._loop is None:
            return
        # The loop lets go of a signal by setting its default action (for SIGTERM and SIGHUP, a
        # kill) before the next handler is set: held meanwhile, a signal reaches the next one.
        # Once a signal is stopping the run, any later one is only a line.
        after = (lambda number, frame: say_stopping(number)) if self.signum is not None else None
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            for signum, previous in self._previous.items():
                self._loop.remove_signal_handler(signum)
                signal.signal(signum, after or previous)  # type: ignore[arg-type]
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
