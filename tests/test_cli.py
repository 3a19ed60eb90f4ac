"""`townbot sim` and `townbot export` as a person runs them."""

from __future__ import annotations

import json

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


def test_sim_prints_the_transcript_grouped_by_channel(tmp_path, capsys):
    assert main(["sim", "--hours", "1", "--db", str(tmp_path / "t.db")]) == 0
    out = capsys.readouterr().out
    assert "#hobbs-cafe (" in out
    headers = [line for line in out.splitlines() if line.startswith("#")]
    assert headers == sorted(headers), "channels are listed in a stable order"
    assert "calls" in out and "importance" in out, "the usage summary closes the run"


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


def test_export_of_an_empty_database_says_what_to_do(tmp_path, capsys):
    assert main(["export", "--db", str(tmp_path / "empty.db")]) == 2
    assert "townbot sim --db" in capsys.readouterr().err
