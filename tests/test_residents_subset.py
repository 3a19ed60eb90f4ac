"""`--residents`: a smaller town for a cheap trial, with staff and relationships outside it
handled rather than refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from townbot.cli import main
from townbot.world.errors import DataError
from townbot.world.loading import select_residents
from townbot.world.model import World


def test_a_number_picks_residents_who_know_each_other_and_staff_lists_shrink(world: World):
    small = select_residents(world, "4")
    assert len(small.personas) == 4
    assert all(p in small.personas for s in small.sectors.values() for p in s.staff)
    assert any(s.staff for s in world.sectors.values()), "the shipped town has staff to drop"
    assert len(world.personas) == 25, "the full world is left as it was"


def test_names_may_be_full_or_first_names_and_unknown_ones_are_named(world: World):
    small = select_residents(world, "isabella, Klaus Mueller")
    assert sorted(small.personas) == ["Isabella Rodriguez", "Klaus Mueller"]
    with pytest.raises(DataError, match="Isabela.*did you mean 'Isabella Rodriguez'"):
        select_residents(world, "Isabela")
    with pytest.raises(DataError, match="between 1 and 25"):
        select_residents(world, "40")


def test_sim_runs_a_smaller_town_with_a_scenario_for_residents_it_lacks(tmp_path: Path, capsys):
    db = str(tmp_path / "small.db")
    assert main(["sim", "--residents", "Klaus, Maria Lopez", "--hours", "0.5", "--db", db,
                 "--scenario", "valentines-party", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "not seeded: Isabella Rodriguez" in out and "2 residents" in out
