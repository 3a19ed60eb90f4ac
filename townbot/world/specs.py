"""File formats of world.yaml and personas/*.yaml, checked field by field with pydantic."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from townbot.world.clock import parse_clock

Name = Annotated[str, Field(min_length=1, max_length=80)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ObjectSpec(Strict):
    name: Name
    state: Annotated[str, Field(min_length=1, max_length=80)]


class ArenaSpec(Strict):
    name: Name
    capacity: Annotated[int, Field(ge=1)] | None = None
    objects: list[ObjectSpec] = Field(min_length=1)


class StreetSpec(Strict):
    name: Name
    start: tuple[int, int] = Field(alias="from")
    end: tuple[int, int] = Field(alias="to")


class LayoutSpec(Strict):
    """A hint for the map where the street grid alone leaves a sector's building unclear."""

    side: str | None = Field(default=None, pattern="^(north|south|east|west)$")
    size: tuple[Annotated[float, Field(gt=0, le=12)], Annotated[float, Field(gt=0, le=12)]] | None = None
    shift: Annotated[float, Field(ge=-6, le=6)] = 0  # blocks along the street (east or south)


def _check_hours(value: str | None) -> str | None:
    if value is not None:
        opens, sep, closes = value.partition("-")
        if not sep:
            raise ValueError(f"'{value}' is not opening hours; write HH:MM-HH:MM, e.g. 08:00-17:00")
        parse_clock(opens)
        parse_clock(closes)
    return value


class SectorSpec(Strict):
    name: Name
    kind: str = Field(pattern="^(home|business|public|college)$")
    channel: str = Field(pattern="^[a-z0-9][a-z0-9-]{0,99}$")
    entrance: tuple[int, int]
    hours: Annotated[str | None, AfterValidator(_check_hours)] = None
    staff: list[str] = []
    description: str = ""
    norms: list[str] = []
    layout: LayoutSpec | None = None
    arenas: list[ArenaSpec] = Field(min_length=1)


class WorldSpec(Strict):
    town: Name
    start: str = Field(pattern=r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$")
    tick_minutes: Annotated[int, Field(ge=1, le=60)] = 10
    minutes_per_block: Annotated[int, Field(ge=1, le=30)] = 1
    town_hall_channel: str = Field(default="town-hall", pattern="^[a-z0-9][a-z0-9-]{0,99}$")
    streets: list[StreetSpec] = Field(min_length=1)
    sectors: list[SectorSpec] = Field(min_length=1)


def _check_time(value: object) -> str:
    if isinstance(value, int):  # YAML reads an unquoted 12:30 as the number 750
        raise ValueError(f"{value} is a number: YAML read an unquoted time; write it in quotes, "
                         'e.g. "12:30"')
    if not isinstance(value, str):
        raise ValueError('expected a time in quotes, e.g. "07:30"')
    parse_clock(value)
    return value


Time = Annotated[str, BeforeValidator(_check_time)]


class LifestyleSpec(Strict):
    wakes: Time
    sleeps: Time


class RoutineSpec(Strict):
    at: Time
    do: Annotated[str, Field(min_length=1, max_length=200)]
    where: str


class PersonaSpec(Strict):
    name: Name
    age: Annotated[int, Field(ge=1, le=120)]
    traits: list[str] = Field(min_length=1)
    background: Annotated[str, Field(min_length=1)]
    currently: Annotated[str, Field(min_length=1)]
    lifestyle: LifestyleSpec
    home: str
    work: str | None = None
    knows_places: list[str] = []
    routine: list[RoutineSpec] = Field(min_length=2)
    memories: list[str] = Field(min_length=1)
    avatar: Annotated[str, Field(pattern=r"^https?://\S+$", max_length=2048)] | None = None
