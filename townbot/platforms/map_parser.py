"""The arguments of `townbot map` (argparse only: `townbot --help` stays light); the command
itself is townbot/platforms/map_command.py, imported once `map` is chosen."""

from __future__ import annotations

from typing import Any

from townbot.platforms.arguments import add_town_files


def add_map_parser(subparsers: Any) -> None:
    draw = subparsers.add_parser("map", help="draw the town at a moment (PNG) or over a span (GIF, or "
                                  "MP4/WebM with ffmpeg)")
    draw.add_argument("--db", required=True, help="the town's database (read only)")
    draw.add_argument("--at", help='game time, e.g. "2023-02-14 17:30" (default: the last tick)')
    draw.add_argument("--from", dest="start", help="first game time of an animation")
    draw.add_argument("--to", dest="end", help="last game time of an animation")
    draw.add_argument("--every", type=int, default=1, help="ticks between animation frames "
                      "(default 1)")
    draw.add_argument("--area", help="draw one sector close up, e.g. 'Hobbs Cafe'")
    draw.add_argument("--out", required=True, help="picture to write: .png, or for a span .gif "
                      "(.mp4 or .webm when ffmpeg is installed)")
    draw.add_argument("--positions", help="also write where each person was drawn (pixels and "
                      "place) to this JSON file")
    add_town_files(draw)
