"""An hourly schedule anchored to the day: gaps joined or filled from the routine, places kept
when known, everything cut to the waking day and, when replanning, to what is still ahead."""

from __future__ import annotations

from datetime import datetime

from townbot.llm.purposes import HourlySchedule, ScheduleBlock
from townbot.mind.planning import blocks_from_schedule
from townbot.world.model import World

DAY = datetime(2023, 2, 14, 6, 0)
HOME, CAFE = "Isabella Rodriguez's apartment", "Hobbs Cafe"
KNOWN = {HOME: ["main room"], CAFE: ["cafe"]}
OPEN = "open the doors, serve coffee and chat with the morning regulars"  # her routine from 8:00
SCHEDULE = HourlySchedule(blocks=[
    ScheduleBlock(start="06:00", minutes=60, activity="wake up", place=f"{HOME}: main room"),
    ScheduleBlock(start="07:20", minutes=40, activity="bake", place=f"{CAFE}: cafe"),
    ScheduleBlock(start="10:00", minutes=90, activity="wander", place="Nowhere: void"),
    ScheduleBlock(start="21:00", minutes=180, activity="read"),
    ScheduleBlock(start="23:00", minutes=30, activity="past bedtime"),
])


def laid_out(world: World, start: datetime | None) -> list[tuple]:
    persona = world.personas["Isabella Rodriguez"]  # awake 6:00 to 22:30
    return [(f"{b.start:%H:%M}", f"{b.end:%H:%M}", b.activity, b.sector, b.arena, b.steps,
             b.resumed) for b in blocks_from_schedule(SCHEDULE, persona, DAY, start, KNOWN)]


def test_a_schedule_becomes_blocks_of_the_waking_day(world):
    assert laid_out(world, None) == [
        ("06:00", "07:20", "wake up", HOME, "main room", [], False),  # a 20-minute gap joins
        ("07:20", "08:00", "bake", CAFE, "cafe", [], False),
        ("08:00", "10:00", OPEN, None, None, [], False),  # a longer one follows the routine
        ("10:00", "11:30", "wander", None, None, [], False),  # an unknown place is chosen later
        ("11:30", "21:00", OPEN, None, None, [], False),
        ("21:00", "22:30", "read", None, None, [], False)]  # nothing past bedtime


def test_replanning_keeps_what_is_still_ahead(world):
    assert laid_out(world, DAY.replace(hour=10, minute=30)) == [
        ("10:30", "11:30", "wander", None, None, [], False),
        ("11:30", "21:00", OPEN, None, None, [], False),
        ("21:00", "22:30", "read", None, None, [], False)]
