"""`townbot map`: draw any moment of a town's history as a PNG, or a span as a GIF whose
frames between ticks show walkers on their way.

Read-only: the database is opened so that it cannot be changed, and a missing one is never
created.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

from townbot.pictures.townmap import MapPainter, animate
from townbot.store.database import Store, StoreError
from townbot.town.history import load_history, parse_moment
from townbot.town.launch import TownFiles
from townbot.world.loading import closest

FRAME_MS = 100
VIDEOS = {".mp4": "MP4", ".webm": "WebM"}
STEPS_PER_TICK = 4  # frames from one tick to the next: walkers move along the streets between


def check_request(args: argparse.Namespace) -> str:
    """'png', 'gif', 'mp4' or 'webm' from the options, or a StoreError saying which combination
    would work."""
    span = args.start is not None or args.end is not None
    if span and (args.start is None or args.end is None):
        raise StoreError("an animation needs both --from and --to, e.g. --from '2023-02-13 07:00' "
                         "--to '2023-02-13 22:00'")
    if span and args.at:
        raise StoreError("give either --at (one picture) or --from and --to (an animation)")
    if args.every < 1:
        raise StoreError(f"--every {args.every} is not a number of ticks; use 1 or more")
    suffix = Path(args.out).suffix.lower()
    wanted = (suffix if suffix in VIDEOS else ".gif") if span else ".png"
    if suffix != wanted:
        raise StoreError(f"--out {args.out}: " + (
            "an animation is written as a GIF, or with ffmpeg as MP4 or WebM; name the file "
            "*.gif, *.mp4 or *.webm" if span else
            "one moment is written as a PNG; name the file *.png (or give --from and --to "
            "for an animation)"))
    if suffix in VIDEOS and shutil.which("ffmpeg") is None:
        raise StoreError(f"--out {args.out}: writing {VIDEOS[suffix]} needs ffmpeg, which is not "
                         "installed here; name the file *.gif (or install ffmpeg)")
    if span and args.positions:
        raise StoreError("--positions goes with one picture (--at), not an animation")
    if Path(args.out).resolve() == Path(args.db).resolve():
        raise StoreError("--out must not be the database itself")
    return wanted[1:]


async def run_map(args: argparse.Namespace) -> int:
    kind = check_request(args)
    world = TownFiles(args.world, args.personas).load()
    area = resolve_area(args.area, list(world.sectors))
    store = await Store.open(args.db, read_only=True)
    try:
        history = await load_history(store, world)
    finally:
        await store.close()
    painter = MapPainter(world)
    if kind == "png":
        moment = history.at(parse_moment(args.at, history) if args.at else history.latest)
        picture = painter.draw(moment, area)
        Path(args.out).write_bytes(picture.png())
        if args.positions:
            Path(args.positions).write_text(json.dumps(
                {"time": f"{moment.time:%Y-%m-%d %H:%M}", "people": picture.positions_json()},
                indent=1, ensure_ascii=False), encoding="utf-8")
        width, height = picture.image.size
        print(f"wrote {args.out}: {world.town} at {moment.time:%Y-%m-%d %H:%M}, "
              f"{len(moment.people)} people, {width}x{height} pixels")
        return 0
    start, end = parse_moment(args.start, history), parse_moment(args.end, history)
    if end < start:
        raise StoreError(f"--to {args.end} is before --from {args.start}")
    step = timedelta(minutes=history.town.tick_minutes * args.every)
    times = [start + step * index for index in range((end - start) // step + 1)]
    frames = in_between(times, STEPS_PER_TICK)
    pictures = [painter.draw(history.at(t), area) for t in frames]
    data = animate(pictures, FRAME_MS) if kind == "gif" else \
        await asyncio.to_thread(video, pictures, kind)
    Path(args.out).write_bytes(data)
    print(f"wrote {args.out}: {world.town} from {start:%Y-%m-%d %H:%M} to {times[-1]:%H:%M}, "
          f"{len(frames)} frames ({STEPS_PER_TICK} a tick), {len(data) // 1024} KiB")
    return 0


def video(pictures: list, kind: str) -> bytes:
    """The frames as an MP4 (H.264) or WebM (VP9) made by ffmpeg, read from its output."""
    codec = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "frag_keyframe+empty_moov"] \
        if kind == "mp4" else ["-c:v", "libvpx-vp9", "-pix_fmt", "yuv420p"]
    frames = b"".join(picture.png() for picture in pictures)
    done = subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-f", "image2pipe", "-framerate", str(1000 // FRAME_MS),
         "-i", "-", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", *codec, "-f", kind, "-"],
        input=frames, capture_output=True, check=False)
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no reason"]
        raise StoreError(f"ffmpeg could not write the {kind.upper()}: {reason[0]}; name the "
                         "file *.gif instead")
    return done.stdout


def in_between(times: list[datetime], steps: int) -> list[datetime]:
    """The times with `steps - 1` evenly spaced moments between each two, so that a walker is
    drawn part of the way along (a moment between ticks replays as far as its walks go)."""
    frames = []
    for earlier, later in zip(times, times[1:], strict=False):
        frames += [earlier + (later - earlier) * part / steps for part in range(steps)]
    return frames + times[-1:]


def resolve_area(area: str | None, sectors: list[str]) -> str | None:
    """A sector name from what a person typed (case and spacing forgiven)."""
    if area is None:
        return None
    by_key = {name.lower(): name for name in sectors}
    found = by_key.get(" ".join(area.split()).lower())
    if found is None:
        raise StoreError(f"there is no area called '{area}'{closest(area, sectors)}; areas are "
                         f"sectors of world.yaml, e.g. Hobbs Cafe")
    return found
