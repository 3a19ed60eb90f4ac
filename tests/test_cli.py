"""`townbot sim` and `townbot export` as a person runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from townbot.cli import main


def test_sim_says_it_is_offline_first_and_a_second_run_continues(tmp_path, capsys):
    db = tmp_path / "town.db"
    assert main(["sim", "--hours", "1", "--db", str(db), "--no-transcript"]) == 0
    first = capsys.readouterr().out.splitlines()
    assert "offline model" in first[0] and "not a language model" in first[0]
    assert "from Mon Feb 13 07:00 for 6 ticks" in first[1]
    assert main(["sim", "--hours", "3", "--db", str(db), "--no-transcript"]) == 0
    second = capsys.readouterr().out
    assert "from Mon Feb 13 08:00 for 18 ticks" in second
    assert "Mon 08:00 to Mon 11:00" in second


def test_sim_prints_the_transcript_in_time_order_tagged_with_areas(tmp_path, capsys):
    assert main(["sim", "--hours", "1", "--db", str(tmp_path / "t.db")]) == 0
    out = capsys.readouterr().out
    events = [line for line in out.splitlines() if line[:2].isdigit() and line[2] == ":"]
    assert events and [line[:5] for line in events] == sorted(line[:5] for line in events)
    assert all(line.split()[1].startswith("#") for line in events), "each line names its area"
    assert "--- 2023-02-13 ---" in out
    assert "calls" in out and "importance" in out, "the usage summary closes the run"


def test_sim_by_area_groups_the_transcript_by_channel(tmp_path, capsys):
    assert main(["sim", "--hours", "1", "--db", str(tmp_path / "t.db"), "--by-area"]) == 0
    out = capsys.readouterr().out
    assert "#hobbs-cafe (" in out
    headers = [line for line in out.splitlines() if line.startswith("#")]
    assert headers == sorted(headers), "channels are listed in a stable order"


def test_a_second_sim_shows_its_own_figures_beside_the_towns_totals(tmp_path, capsys):
    db = str(tmp_path / "t.db")
    assert main(["sim", "--hours", "1", "--db", db, "--quiet"]) == 0
    first = capsys.readouterr().out
    assert main(["sim", "--hours", "1", "--db", db, "--quiet"]) == 0
    second = capsys.readouterr().out
    assert "model usage, this run:" in second and "town totals (all runs):" in second

    def calls(text: str, prefix: str) -> int:
        line = next(line for line in text.splitlines() if line.startswith(prefix))
        return int(line.removeprefix(prefix).split()[0])

    assert calls(second, "town totals (all runs): ") == calls(first, "town totals (all runs): ") \
        + calls(second, "total: ")
    assert "model problems" not in first + second
    assert not any(line[:2].isdigit() and ":" in line[:3] for line in second.splitlines()), \
        "--quiet prints no transcript"


def test_export_markdown_and_json_agree_on_the_residents(tmp_path, capsys):
    db = tmp_path / "town.db"
    main(["sim", "--hours", "1", "--db", str(db), "--no-transcript"])
    capsys.readouterr()
    assert main(["export", "--db", str(db)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "townbot-export/1"
    assert set(data) == {"format", "town", "agents", "conversations", "objects", "events"}
    assert main(["export", "--db", str(db), "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    for agent in data["agents"]:
        assert f"## {agent['name']}" in markdown


def test_export_of_a_missing_database_says_what_to_do_and_creates_nothing(tmp_path, capsys):
    for command in ("export", "usage"):
        assert main([command, "--db", str(tmp_path / "missing.db")]) == 2
        assert "does not exist" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("length", [["--hours", "0"], ["--days", "0"], ["--hours", "-1"],
                                    ["--days", "nan"], ["--hours", "two"]])
def test_sim_length_must_be_a_positive_number_and_nothing_is_founded(tmp_path, capsys, length):
    with pytest.raises(SystemExit) as stopped:
        main(["sim", *length, "--db", str(tmp_path / "t.db")])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "not above zero" in err or "not a number" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["sim", "--hours", "1"], ["play", "--ticks", "1"]])
def test_an_unknown_scenario_is_refused_before_the_town_is_founded(tmp_path, capsys, command):
    assert main([*command, "--scenario", "valentine", "--db", str(tmp_path / "t.db")]) == 2
    assert "there is no scenario 'valentine' (did you mean 'valentines-party'" in \
        capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


BLAS_AFTER_COMMAND = """
import os, sys
from threadpoolctl import threadpool_info
from townbot.cli import main
main(sys.argv[1:])
blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
print(blas, len(os.listdir("/proc/self/task")))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_a_command_starts_numpys_blas_with_one_thread_and_no_workers() -> None:
    """One BLAS thread, and no idle OpenBLAS workers beside the main thread (their spinning
    cost CPU at start-up)."""
    root = Path(__file__).resolve().parents[1]
    clean = {key: value for key, value in os.environ.items()
             if not key.startswith("TOWNBOT_") and key != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", BLAS_AFTER_COMMAND, "check"], cwd=root, env=clean,
                          capture_output=True, text=True, check=False)
    assert done.stdout.strip().splitlines()[-1] == "[1] 1", done.stderr
