"""Scenarios: seeded events a moderator can load from scenarios/*.yaml."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from townbot.world.loading import read_yaml


class SeedSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    resident: str
    thought: str = Field(min_length=1, max_length=600)


class ObjectStateSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    state: str = Field(min_length=1, max_length=80)


class ScenarioSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str = ""
    seeds: list[SeedSpec] = []
    objects: list[ObjectStateSpec] = []
    announcement: str | None = None


def scenario_names(folder: Path) -> list[str]:
    return sorted(path.stem for path in folder.glob("*.yaml"))


def load_scenario(folder: Path, name: str) -> ScenarioSpec:
    return read_yaml(folder / f"{name}.yaml", ScenarioSpec)
