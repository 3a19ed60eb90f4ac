"""An hourly schedule anchored to the day: gaps joined or filled from the routine (a block per
routine step, never one step stretched over the day), places kept when known, clock times
taken out of activities, everything cut to the waking day and, when replanning, to what is
still ahead."""

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
    ScheduleBlock(start="10:00", minutes=90, activity="wander at 10:00 am", place="Nowhere: void"),
    ScheduleBlock(start="21:00", minutes=180, activity="read"),
    ScheduleBlock(start="23:00", minutes=30, activity="past bedtime"),
])


def laid_out(world: World, start: datetime | None) -> list[tuple]:
    persona = world.personas["Isabella Rodriguez"]  # awake 6:00 to 22:30
    return [(f"{b.start:%H:%M}", f"{b.end:%H:%M}", b.activity, b.sector, b.arena, b.steps,
             b.resumed) for b in blocks_from_schedule(SCHEDULE, persona, DAY, start, KNOWN)]


AFTERNOON = [  # the routine's steps from 11:30, each until the next
    ("11:30", "12:00", OPEN, CAFE, "cafe", [], False),
    ("12:00", "12:30", "eat a fast lunch in the back", None, None, [], False),  # kitchen: unknown
    ("12:30", "15:00", "serve the lunch crowd and catch up with customers at the counter", CAFE,
     "cafe", [], False),
    ("15:00", "16:00", "sketch out plans, decorations and a guest list for upcoming events at the "
     "cafe", CAFE, "cafe", [], False),
    ("16:00", "16:45", "pick up milk, fruit and baking supplies", None, None, [], False),
    ("16:45", "20:00", "return to the counter for the evening rush", CAFE, "cafe", [], False),
    ("20:00", "20:45", "close the cafe, wash up and prepare dough for tomorrow", None, None, [],
     False),
    ("20:45", "21:00", "cook a simple dinner and unwind", None, None, [], False),
    ("21:00", "22:30", "read", None, None, [], False)]  # nothing past bedtime


def test_a_schedule_becomes_blocks_of_the_waking_day(world):
    assert laid_out(world, None) == [
        ("06:00", "07:20", "wake up", HOME, "main room", [], False),  # a 20-minute gap joins
        ("07:20", "08:00", "bake", CAFE, "cafe", [], False),
        ("08:00", "10:00", OPEN, CAFE, "cafe", [], False),  # a longer one follows the routine
        ("10:00", "11:30", "wander", None, None, [], False),  # an unknown place is chosen later
        *AFTERNOON]


def test_replanning_keeps_what_is_still_ahead(world):
    assert laid_out(world, DAY.replace(hour=10, minute=30)) == [
        ("10:30", "11:30", "wander", None, None, [], False), *AFTERNOON]


def test_a_schedule_that_ends_early_follows_the_routine_to_bedtime(world):
    """A schedule of one morning block leaves the day open: no block lasts past the next
    routine step (not lunch from noon to bedtime)."""
    persona = world.personas["Isabella Rodriguez"]
    early = HourlySchedule(blocks=[ScheduleBlock(start="06:00", minutes=60, activity="wake up")])
    blocks = blocks_from_schedule(early, persona, DAY, None, KNOWN)
    assert [f"{b.start:%H:%M}" for b in blocks][:4] == ["06:00", "07:00", "07:15", "08:00"]
    assert max(b.end - b.start for b in blocks[1:]).total_seconds() <= 4 * 3600
    assert blocks[-1].end.strftime("%H:%M") == "22:30"
