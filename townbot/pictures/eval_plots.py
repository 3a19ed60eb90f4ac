"""The evaluation's pictures (PNG, matplotlib's Agg backend, no display needed): the relationship
network, news spreading over game time, who was at a gathering when, and TrueSkill ratings with
error bars beside the paper's. Each function takes plain data and writes one file."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt  # noqa: E402 - the backend must be chosen first
from matplotlib.figure import Figure  # noqa: E402

DPI = 110


def _save(figure: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    plt.close(figure)
    return path


def _title(axes, title: str, note: str) -> None:  # noqa: ANN001 (matplotlib's Axes)
    """The picture's title, and under it who answered and judged (a picture travels alone)."""
    width = int(axes.figure.get_figwidth() * 14)  # characters a line of 9-point text holds
    lines = [title, *textwrap.wrap(note, width)] if note else [title]
    axes.set_title("\n".join(lines), fontsize=9 if note else 10)


def network(names: Sequence[str], edges: Sequence[tuple[str, str]], title: str,
            path: Path, note: str = "") -> Path:
    """Residents on a circle, a line for each pair who know of each other."""
    figure, axes = plt.subplots(figsize=(6.5, 6.5))
    count = max(1, len(names))
    spot = {n: (math.cos(2 * math.pi * i / count), math.sin(2 * math.pi * i / count))
            for i, n in enumerate(names)}
    for a, b in edges:
        (x1, y1), (x2, y2) = spot[a], spot[b]
        axes.plot([x1, x2], [y1, y2], color="#6a8caf", linewidth=0.7, alpha=0.6)
    for name, (x, y) in spot.items():
        axes.scatter([x], [y], s=40, color="#d95f02", zorder=3)
        axes.annotate(name, (x * 1.08, y * 1.08), fontsize=7,
                      ha="left" if x >= 0 else "right", va="center")
    _title(axes, title, note)
    axes.set_xlim(-1.7, 1.7)
    axes.set_ylim(-1.3, 1.3)
    axes.axis("off")
    return _save(figure, path)


def diffusion(series: Mapping[str, Sequence[datetime]], total: int, start: datetime,
              end: datetime, path: Path, note: str = "") -> Path:
    """For each event, how many residents knew of it as game time went on."""
    figure, axes = plt.subplots(figsize=(7.5, 3.8))
    for title, times in series.items():
        ordered = sorted(t for t in times if t <= end)
        xs = [start, *ordered, end]
        ys = [0, *range(1, len(ordered) + 1), len(ordered)]
        axes.step(xs, [y / total for y in ys], where="post", label=title)
    axes.set_ylabel("share of residents who know")
    axes.set_ylim(0, 1)
    _title(axes, "News spreading through the town", note)
    axes.legend(fontsize=8, loc="upper left")
    figure.autofmt_xdate()
    return _save(figure, path)


def attendance(spans: Mapping[str, Sequence[tuple[datetime, datetime]]],
               window: tuple[datetime, datetime], invited: Sequence[str], place: str,
               day: tuple[datetime, datetime], path: Path, note: str = "") -> Path:
    """Who was at the place on the day of the gathering; the gathering's hours shaded."""
    names = sorted(spans, key=lambda n: (n not in invited, n))
    figure, axes = plt.subplots(figsize=(7.5, max(2.5, 0.3 * len(names) + 1.2)))
    axes.axvspan(window[0], window[1], color="#fde0c5", label="the party's hours")
    for row, name in enumerate(names):
        for a, b in spans[name]:
            a, b = max(a, day[0]), min(b, day[1])
            if b > a:
                axes.plot([a, b], [row, row], linewidth=6, solid_capstyle="butt",
                          color="#1b9e77" if name in invited else "#999999")
    axes.set_yticks(range(len(names)), [n + (" (invited)" if n in invited else "")
                                        for n in names], fontsize=7)
    axes.set_xlim(day[0], day[1])
    axes.invert_yaxis()  # the invited on top
    _title(axes, f"At {place} on {window[0]:%B} {window[0].day}", note)
    axes.legend(fontsize=8, loc="lower right")
    figure.autofmt_xdate()
    return _save(figure, path)


def trueskill(labels: Sequence[str], ours: Sequence[tuple[float, float, float]],
              paper: Sequence[float | None], path: Path, subtitle: str = "",
              note: str = "") -> Path:
    """mu per condition (the mean over match orders) with its 95% interval as error bars
    (`ours`: mu, low, high), and the paper's mu beside it."""
    figure, axes = plt.subplots(figsize=(7.5, 4.0))
    xs = range(len(labels))
    mus = [m for m, _, _ in ours]
    bars = [[m - low for m, low, _ in ours], [high - m for m, _, high in ours]]
    axes.bar([x - 0.18 for x in xs], mus, width=0.36, yerr=bars, capsize=4, color="#1b9e77",
             label="this evaluation")
    axes.bar([x + 0.18 for x in xs], [p or 0 for p in paper], width=0.36, color="#bbbbbb",
             label="the paper (Figure 8)")
    axes.set_xticks(list(xs), labels, fontsize=7)
    axes.set_ylabel("TrueSkill mu (bar: 95% of match orders)")
    _title(axes, "Believability per condition" + (f" ({subtitle})" if subtitle else ""), note)
    axes.legend(fontsize=8)
    return _save(figure, path)
