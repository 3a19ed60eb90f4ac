"""What the terminal shows: the transcript in time order with folded filler, the usage table,
distinct area colours, plain text into pipes, and Ctrl-C ending `sim` after a committed tick."""

from __future__ import annotations

import io
import re
import signal
import subprocess
import sys

import pytest
from conftest import ROOT

from townbot.platforms.terminal import BASIC_COLOURS, RICH_COLOURS, Palette, Screen
from townbot.town.transcript import by_area, in_time_order
from townbot.town.usage import render_usage, summarise
from townbot.wording import plural
from townbot.world.events import TownEvent

BREAK = "is taking a short break to stretch"
NAMES = ["Ann Lee", "Bo Chan", "Cy Diaz", "Di Eng", "Ed Fox"]


def action(time: str, channel: str, actor: str, text: str) -> TownEvent:
    return TownEvent(f"2023-02-13 {time}", channel, "action", actor, text, "🙂")


def test_filler_is_shown_once_an_hour_and_the_rest_counted_in_one_line():
    events = [action(f"08:{10 * i:02d}", "park", name, BREAK) for i, name in enumerate(NAMES)]
    events += [action(f"09:0{i}", "park", name, BREAK) for i, name in enumerate(NAMES[:4])]
    events.append(action("08:05", "hobbs-cafe", "Isabella Rodriguez", "is serving coffee"))
    lines = [line.text for line in in_time_order(events)]
    assert lines[0] == "--- 2023-02-13 ---"
    assert sum(BREAK in line for line in lines) == 2, "one shown per hour"
    assert "      ... and 4 more taking a short break to stretch this hour (Bo Chan, Cy Diaz, Di Eng " \
           "and 1 other)" in lines
    assert any(line.startswith("08:05 #hobbs-cafe 🙂 Isabella Rodriguez is serving") for line in lines)
    assert [line[:5] for line in lines if line[0].isdigit()] == ["08:00", "08:05", "09:00"]


def test_nothing_is_folded_without_repetition_and_by_area_keeps_every_line():
    events = [action("08:00", "park", name, f"is doing thing {i}") for i, name in enumerate(NAMES)]
    assert len(in_time_order(events)) == 1 + len(events)
    grouped = by_area(events)
    assert grouped[0].text == "#park (5 events)" and len(grouped) == len(events) + 2
    assert grouped[1].text.startswith("  2023-02-13 08:00")


def test_the_usage_table_has_one_header_per_column_and_aligned_rows():
    rows = [{"purpose": p, "model": "m", "prompt_tokens": t, "completion_tokens": 5, "outcome": "ok",
             "agent": "Ann Lee", "game_day": 1, "estimated": 0, "tick": 1}
            for p, t in [("reflection_questions", 123456), ("importance", 7)]]
    text = render_usage(summarise(rows, tick_minutes=10), "model usage, this run:")
    lines = text.splitlines()
    header, table = lines[1], lines[2:4]
    columns = re.split(r"\s{2,}", header)
    assert len(columns) == len(set(columns)) == 6, "no header twice; outcome columns of zeros left out"
    assert len({len(line) for line in [header, *table]}) == 1, "rows end where the header ends"
    assert "model problems" not in text


def test_every_area_gets_its_own_colour_and_a_legend_only_when_they_run_out():
    channels = [f"area-{i}" for i in range(20)]
    palette = Palette(channels, RICH_COLOURS)
    assert len(set(palette.by_channel.values())) == 20 and not palette.repeats
    basic = Palette(channels, BASIC_COLOURS)
    assert basic.repeats
    out = io.StringIO()
    screen = Screen(out, styled=True, channels=channels)
    screen.console.legacy_windows = False
    screen.legend()
    screen.refusal("no such area")
    if screen.palette.repeats:
        assert "areas: " in out.getvalue()
    assert "\x1b[" in out.getvalue(), "styled on a terminal"


def test_plain_text_into_a_pipe():
    out = io.StringIO()
    screen = Screen(out, channels=["park"])
    assert not screen.styled
    screen.table(["who", "where"], [["Ann Lee", "park"]], title="people:")
    screen.refusal("there is no resident called 'Zed'")
    assert out.getvalue() == "people:\nwho      where\nAnn Lee  park\n! there is no resident called 'Zed'\n"


def test_plural_forms():
    assert [plural(1, "person", "people"), plural(2, "person", "people"), plural(1, "resident"),
            plural(1.0, "real second"), plural(2.5, "real second")] == \
        ["1 person", "2 people", "1 resident", "1 real second", "2.5 real seconds"]


def test_ctrl_c_ends_sim_after_the_tick_under_way_with_one_line(tmp_path):
    db = tmp_path / "t.db"
    sim = subprocess.Popen([sys.executable, "-m", "townbot", "sim", "--days", "3", "--db", str(db)],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert sim.stderr.readline().startswith("progress: "), "the first tick is done"
        sim.send_signal(signal.SIGINT)
        out, err = sim.communicate(timeout=120)
    finally:
        sim.kill()
    assert sim.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    notes = [line for line in err.splitlines() if not line.startswith("progress: ")]
    assert len(notes) == 1 and notes[0].startswith("stopped by Ctrl-C after "), err
    resumed = subprocess.run([sys.executable, "-m", "townbot", "sim", "--hours", "1", "--db", str(db),
                              "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0 and "from Mon Feb 13 07:00" not in resumed.stdout, \
        "the ticks before Ctrl-C were kept"


@pytest.mark.parametrize("columns", [80, 100, 140])
def test_where_keeps_who_and_what_on_a_narrow_terminal(columns):
    rows = [["🎨", "Isabella Rodriguez", "getting ready for the Valentine's Day party at Hobbs "
             "Cafe and decorating the counter", "Isabella Rodriguez's apartment: kitchen"],
            ["🚶", "Klaus Mueller", "walking to Oak Hill College", "on the way"]]
    out = io.StringIO()
    screen = Screen(out, styled=True, channels=["park"])
    screen.console.width = columns
    screen.table(["", "who", "doing", "where"], rows, wrap=[2], shorten=[3])
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in out.getvalue().splitlines()]
    assert all(len(line) <= columns for line in lines)
    text = "\n".join(lines)
    assert "Isabella Rodriguez" in text and "Klaus Mueller" in text  # who: never cut
    cells = text.split()
    assert all(word in cells for word in "getting ready for the Valentine's Day party at Hobbs "
               "Cafe and decorating the counter".split())  # what: wrapped, never lost
    assert "getting" in lines[1] and lines[1].count("Isabella Rodriguez") == 2  # place: shortened
