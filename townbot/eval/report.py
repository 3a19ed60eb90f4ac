"""The evaluation's report: report.json (format `townbot-eval/2`, documented in
docs/evaluation.md), report.md with the pictures, and the comparison of two reports."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from townbot import installed_version
from townbot.eval.interviews import CATEGORIES, CONDITIONS
from townbot.pictures import eval_plots
from townbot.world.clock import parse_game_time

REPORT_FORMAT = "townbot-eval/2"
# Formats `compare` reads: their figures and settings have the same shape.
READABLE_FORMATS = ("townbot-eval/1", REPORT_FORMAT)
PAPER_TRUESKILL = {"full": (29.89, 0.72), "no_reflection": (26.88, 0.69),
                   "no_reflection_planning": (25.64, 0.68), "human": (22.95, 0.69),
                   "no_memory": (21.21, 0.70)}
OFFLINE_CAVEAT = "offline: measures the mechanics, not believability"
OFFLINE_JUDGE_NOTE = ("The judge was the offline model: its rankings follow a fixed word-overlap "
                      "rule and its yes/no labels a keyword rule. They are not a language model's "
                      "judgement, so the ratings show only that the pipeline runs; configure "
                      "TOWNBOT_JUDGE_MODEL (or a chat model) for a real one.")


def caveat(settings: dict[str, Any]) -> str | None:
    """The offline caveat, when the residents' model or the judge is the offline one."""
    offline = settings["model"] == "offline model" or settings["judge_kind"] != "language model"
    return OFFLINE_CAVEAT if offline else None


def headline(settings: dict[str, Any]) -> str:
    """Who answered and who judged, in one line: the console, report.md and every picture
    carry it, so no figure travels without it."""
    line = f"model: {settings['model']}; judge: {settings['judge']} ({settings['judge_kind']})"
    warning = caveat(settings)
    return f"{line} - {warning}" if warning else line


def _get(run: dict[str, Any], *keys: str) -> Any:
    value: Any = run
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _attended(run: dict[str, Any], what: str) -> int | None:
    came = _get(run, "events", "party", "attendance")
    return None if came is None else len(came[what])


def _read(path: str) -> Callable[[dict[str, Any]], Any]:
    return lambda run: _get(run, *path.split("."))


# (key, label, paper's figure, how to read it from one run)
FIGURES: list[tuple[str, str, float | None, Callable[[dict[str, Any]], Any]]] = [
    *[(f"trueskill.{c}.mu", f"TrueSkill mu: {CONDITIONS[c][0] if c in CONDITIONS else 'human'}",
       PAPER_TRUESKILL[c][0], _read(f"ratings.{c}.mu"))
      for c in ("full", "no_reflection", "no_reflection_planning", "human", "no_memory")],
    ("party.start", "knew of the party at the start", 0.04, _read("events.party.start.share")),
    ("party.end", "knew of the party at the end", 0.48, _read("events.party.end.share")),
    ("candidacy.start", "knew of the candidacy at the start", 0.04,
     _read("events.candidacy.start.share")),
    ("candidacy.end", "knew of the candidacy at the end", 0.32,
     _read("events.candidacy.end.share")),
    ("density.start", "network density at the start", 0.167, _read("network.start.density")),
    ("density.end", "network density at the end", 0.74, _read("network.end.density")),
    ("party.invited", "invited to the party before it began", 12,
     lambda r: _attended(r, "invited")),
    ("party.came", "invited residents who came", 5, lambda r: _attended(r, "came")),
    ("hallucinated.relationships", "hallucinated share of relationship answers (unguarded)",
     0.013, lambda r: _share(_get(r, "hallucination", "relationships"))),
    ("hallucinated.relationships.guarded",
     "hallucinated share of relationship answers (town's guards)", None,
     lambda r: _share(_get(r, "hallucination", "relationships", "guarded"))),
    ("hallucinated.awareness", "hallucinated share of event answers (unguarded)", 0.0,
     lambda r: _share(_get(r, "hallucination", "awareness"))),
    ("cost.calls", "model calls of the evaluation", None, _read("cost.calls")),
    ("cost.tokens", "prompt + completion tokens of the evaluation", None,
     lambda r: (_get(r, "cost", "prompt_tokens") or 0) + (_get(r, "cost", "completion_tokens") or 0)),
]


def _share(entry: dict[str, Any] | None) -> float | None:
    """Hallucinated answers over the answers that claim something (a yes, or a meeting)."""
    if not entry:
        return None
    return round(entry["hallucinated"] / entry["claims"], 4) if entry["claims"] else 0.0


def figures(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every figure per run, with mean and spread (sample standard deviation) over the runs."""
    table = {}
    for key, label, paper, read in FIGURES:
        values = [read(run) for run in runs]
        known = [v for v in values if v is not None]
        table[key] = {"label": label, "paper": paper, "values": values,
                      "mean": round(statistics.fmean(known), 4) if known else None,
                      "spread": round(statistics.stdev(known), 4) if len(known) > 1 else 0.0}
    return table


def build_report(runs: list[dict[str, Any]], settings: dict[str, Any],
                 simulation: dict[str, Any] | None, wall_seconds: float) -> dict[str, Any]:
    return {"format": REPORT_FORMAT, "townbot_version": installed_version(),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "headline": headline(settings), "caveat": caveat(settings),
            "settings": settings, "simulation": simulation, "figures": figures(runs),
            "paper": {"trueskill": {c: {"mu": m, "sigma": s}
                                    for c, (m, s) in PAPER_TRUESKILL.items()}},
            "cost": {k: sum(_get(r, "cost", k) or 0 for r in runs)
                     for k in ("calls", "prompt_tokens", "completion_tokens", "embedding_tokens")},
            "wall_seconds": round(wall_seconds, 1), "pictures": {}, "runs": runs}


# --- pictures ---------------------------------------------------------------------------------


def draw(report: dict[str, Any], folder: Path) -> dict[str, str]:
    """The pictures of the first run (network, spread, attendance) and the ratings of all; each
    picture's title carries the headline (model, judge, and the offline caveat)."""
    pictures: dict[str, str] = {}
    runs = report["runs"]
    if not runs:
        return pictures
    note = report["headline"]
    first = runs[0]
    names = _get(first, "network", "residents") or []
    for moment in ("start", "end"):
        graph = _get(first, "network", moment)
        if graph is not None and names:
            path = eval_plots.network(names, [tuple(e) for e in graph["edges"]],
                                      f"Who knows whom at the {moment} (density "
                                      f"{graph['density']:.3f})",
                                      folder / f"network-{moment}.png", note)
            pictures[f"network_{moment}"] = path.name
    start, end = parse_game_time(first["town"]["start"]), parse_game_time(first["town"]["now"])
    series = {e["title"]: [parse_game_time(h["time"]) for h in e.get("diffusion", [])]
              for e in first.get("events", {}).values()}
    if series:
        total = first["town"]["residents"]
        pictures["diffusion"] = eval_plots.diffusion(series, total, start, end,
                                                     folder / "diffusion.png", note).name
    came = _get(first, "events", "party", "attendance")
    if came and came["present"]:
        window = (parse_game_time(came["starts"]), parse_game_time(came["ends"]))
        day = (window[0].replace(hour=6, minute=0), window[0].replace(hour=23, minute=0))
        spans = {n: [(parse_game_time(a), parse_game_time(b)) for a, b in s]
                 for n, s in came["present"].items()}
        spans = {n: s for n, s in spans.items() if any(b > day[0] and a < day[1] for a, b in s)}
        if spans:
            pictures["attendance"] = eval_plots.attendance(
                spans, window, came["invited"], came["place"], day,
                folder / "attendance.png", note).name
    conditions = [c for c in ("full", "no_reflection", "no_reflection_planning", "no_memory")
                  if report["figures"][f"trueskill.{c}.mu"]["mean"] is not None]
    if conditions:
        ours = [(report["figures"][f"trueskill.{c}.mu"]["mean"],
                 min(_get(r, "ratings", c, "low") for r in runs),
                 max(_get(r, "ratings", c, "high") for r in runs)) for c in conditions]
        pictures["trueskill"] = eval_plots.trueskill(
            [CONDITIONS[c][0].replace(", ", ",\n") for c in conditions], ours,
            [PAPER_TRUESKILL[c][0] for c in conditions], folder / "trueskill.png",
            f"mean of {len(runs)} run(s)", note).name
    return pictures


# --- Markdown -----------------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1:
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1 else f"{value:.2f}"
    return str(value)


def markdown(report: dict[str, Any]) -> str:
    settings, runs = report["settings"], report["runs"]
    lines = ["# townbot evaluation", "", f"**{report['headline']}**", "",
             f"townbot {report['townbot_version']}, {report['created']}; format "
             f"`{report['format']}` (docs/evaluation.md).", "",
             f"- model: {settings['model']}; embedder: {settings['embedding_model']}",
             f"- judge: {settings['judge']} ({settings['judge_kind']})",
             f"- conditions: {', '.join(settings['conditions'])}; retrieval: "
             f"{settings['retrieval_count']} memories per answer",
             f"- seeds: {', '.join(str(s) for s in settings['seeds'])}; call cap: "
             f"{settings['max_calls'] or 'none'}",
             "- interview guards: off, as in the paper (on in a town by default); hallucination "
             "is given unguarded and as the town's guards would have left it"]
    if report["simulation"]:
        sim = report["simulation"]
        lines.append(f"- simulated first: {sim['days']} game days, scenario "
                     f"{sim['scenario'] or 'none'}, {sim['wall_seconds']:.0f} s")
    lines.append(f"- wall time of the whole command: {report['wall_seconds']:.0f} s")
    if settings["judge_kind"] != "language model":
        lines += ["", f"> {OFFLINE_JUDGE_NOTE}"]
    lines += ["", "## The figures beside the paper's", "",
              f"Mean over {len(runs)} run(s), ± the sample standard deviation; then each run.", "",
              "| measure | paper | this town | per run |", "|---|---|---|---|"]
    for key, figure in report["figures"].items():
        mean = figure["mean"]
        ours = "not run" if key == "trueskill.human.mu" else \
            f"{_fmt(mean)} ± {_fmt(figure['spread'])}" if len(runs) > 1 and mean is not None \
            else _fmt(mean)
        lines.append(f"| {figure['label']} | {_fmt(figure['paper'])} | {ours} | "
                     f"{', '.join(_fmt(v) for v in figure['values'])} |")
    lines += _ratings(runs) + _counts(runs) + _categories(runs) + _pictures(report)
    lines += _spread(runs) + _cost(report)
    lines += ["", "## Notes", "",
              "- The paper's human-author condition (mu 22.95) has no counterpart here.",
              "- The start is the town as founded: persona seed memories and the thoughts seeded "
              "before the first tick. Interviews at the start use the persona's own description "
              "as the summary and no plan.",
              "- A 'yes' counts only when a memory of the resident backs it; an unbacked 'yes' is "
              "a hallucination (the paper's check), and so is an answer claiming a meeting or "
              "talk the resident has no memory of. The model is asked without the town's "
              "interview guards, as in the paper; the figure with the guards is beside it. "
              "Answers and memory ids are in report.json."]
    return "\n".join(lines) + "\n"


def _ratings(runs: list[dict[str, Any]]) -> list[str]:
    """Each run's TrueSkill with its 95% interval over match orders, which conditions the
    judge's rankings cannot tell apart, and how often two conditions answered alike."""
    lines: list[str] = []
    for run in runs:
        ratings = run.get("ratings")
        if not ratings:
            continue
        orders = next(iter(ratings.values()))["orders"]
        lines += ["", f"## TrueSkill, seed {run['seed']}: the mean of {orders} match orders", "",
                  "Conditions whose 95% intervals overlap are not told apart by these rankings.",
                  "", "| condition | mu | 95% of orders | sigma | mean rank | matches | "
                  "not told apart from |", "|---|---|---|---|---|---|---|"]
        apart = run.get("not_told_apart", {})
        for condition, r in sorted(ratings.items(), key=lambda kv: -kv[1]["mu"]):
            lines.append(f"| {CONDITIONS[condition][0]} | {r['mu']:.2f} | {r['low']:.2f} to "
                         f"{r['high']:.2f} | {r['sigma']:.2f} | {r['mean_rank']:.2f} | "
                         f"{r['matches']} | "
                         f"{'; '.join(CONDITIONS[c][0] for c in apart.get(condition, [])) or '—'} |")
        same = run.get("identical_answers", [])
        if same:
            lines += ["", "Identical answers (word for word) between two conditions:", "",
                      "| conditions | identical | share |", "|---|---|---|"]
            lines += [f"| {' / '.join(CONDITIONS[c][0] for c in pair['conditions'])} | "
                      f"{pair['identical']} of {pair['of']} | {pair['share']:.3f} |"
                      for pair in same]
    return lines


def _counts(runs: list[dict[str, Any]]) -> list[str]:
    """Each share with the counts behind it, and the pairs density gained and lost."""
    lines = ["", "## The shares with their counts", ""]
    for run in runs:
        lines += [f"**Seed {run['seed']}**", ""]
        for event in run.get("events", {}).values():
            for moment in ("start", "end"):
                aware = event.get(moment)
                if aware:
                    lines.append(f"- {event['title']} at the {moment}: {aware['knowing']} of "
                                 f"{aware['asked']} residents know (share {aware['share']:.3f});"
                                 f" {aware['hallucinated']} of {aware['said_yes']} yeses "
                                 "unbacked by a memory")
        network = run.get("network", {})
        for moment in ("start", "end"):
            graph = network.get(moment)
            if graph:
                count = len(network["residents"])
                lines.append(f"- density at the {moment}: {len(graph['edges'])} of "
                             f"{count * (count - 1) // 2} pairs know each other "
                             f"({graph['density']:.3f})")
        if "lost" in network:
            lines.append(f"- pairs gained from start to end: {len(network['gained'])}"
                         + _pairs(network["gained"]) + f"; pairs lost: {len(network['lost'])}"
                         + _pairs(network["lost"]))
        hallucination = run.get("hallucination")
        for key, title in (("relationships", "relationship answers"),
                           ("awareness", "event answers")):
            entry = (hallucination or {}).get(key)
            if entry:
                guarded = entry["guarded"]
                lines.append(f"- {title}: {entry['hallucinated']} of {entry['claims']} claims "
                             f"unbacked, asked unguarded as in the paper; with the town's "
                             f"guards on, {guarded['hallucinated']} of {guarded['claims']}")
        lines.append("")
    return lines


def _pairs(pairs: list[list[str]], shown: int = 6) -> str:
    if not pairs:
        return ""
    named = ", ".join(f"{a} - {b}" for a, b in pairs[:shown])
    more = f" and {len(pairs) - shown} more" if len(pairs) > shown else ""
    return f" ({named}{more})"


def _categories(runs: list[dict[str, Any]]) -> list[str]:
    if not runs or not runs[0].get("categories"):
        return []
    conditions = list(runs[0]["ratings"])
    ratings = next(iter(runs[0]["categories"].values()))
    orders = next(iter(ratings.values())).get("orders", 1) if ratings else 0
    lines = ["", "## Believability by question category", "",
             f"TrueSkill mu per category (each the mean of {orders} match "
             "orders, then of the runs); the last column names the condition that loses most "
             "against the full architecture.", "",
             "| category | " + " | ".join(CONDITIONS[c][0] for c in conditions)
             + " | loses most |", "|---" * (len(conditions) + 2) + "|"]
    for category in CATEGORIES:
        mus = [statistics.fmean(_get(r, "categories", category, c, "mu") or 0 for r in runs)
               for c in conditions]
        worst = _get(runs[0], "pattern", category, "largest_loss")
        lines.append(f"| {category} | " + " | ".join(f"{m:.2f}" for m in mus)
                     + f" | {CONDITIONS[worst][0] if worst else '—'} |")
    return lines


def _pictures(report: dict[str, Any]) -> list[str]:
    titles = {"trueskill": "TrueSkill per condition", "network_start": "Relationships at the start",
              "network_end": "Relationships at the end", "diffusion": "News over game time",
              "attendance": "The party's attendance"}
    lines = ["", "## Pictures (first run)", ""] if report["pictures"] else []
    for key, name in report["pictures"].items():
        lines += [f"![{titles.get(key, key)}]({name})", ""]
    return lines


def _spread(runs: list[dict[str, Any]]) -> list[str]:
    if not runs:
        return []
    lines = ["", "## Who told whom (first run)", ""]
    for event in runs[0].get("events", {}).values():
        lines.append(f"**{event['title']}**: " + (", ".join(
            f"{h['time'][5:]} {h['teller'] + ' → ' if h['teller'] else ''}{h['resident']}"
            + (" (started it)" if h["how"] == "originator" else "")
            for h in event.get("diffusion", [])) or "nobody"))
        came = event.get("attendance")
        if came:
            lines.append(f"Invited before it began: {', '.join(came['invited']) or 'nobody'}; "
                         f"came: {', '.join(came['came']) or 'nobody'}; there without an "
                         f"invitation: {', '.join(came['uninvited']) or 'nobody'}"
                         + ("" if came["reached"] else " (the town never reached the party)"))
        lines.append("")
    return lines


def _cost(report: dict[str, Any]) -> list[str]:
    total = report["cost"]
    lines = ["## What the evaluation cost", "",
             f"{total['calls']} model calls, {total['prompt_tokens']} prompt and "
             f"{total['completion_tokens']} completion tokens, {total['embedding_tokens']} "
             f"embedding tokens over {len(report['runs'])} run(s); "
             f"{sum(r['cost']['fallbacks'] for r in report['runs'])} answers were defaults "
             "(the model's reply refused, or the call failed).", "",
             "| purpose | calls | prompt tokens | completion tokens |", "|---|---|---|---|"]
    purposes: dict[str, Counter[str]] = {}
    for run in report["runs"]:
        for purpose, entry in run["cost"]["purposes"].items():
            purposes.setdefault(purpose, Counter()).update(entry)
    lines += [f"| {p} | {c['calls']} | {c['prompt_tokens']} | {c['completion_tokens']} |"
              for p, c in sorted(purposes.items())]
    prices = [r["cost"]["price"] for r in report["runs"] if r["cost"]["price"] is not None]
    if prices:
        lines += ["", f"Estimated price: ${sum(prices):.4f} (from the configured prices)."]
    return lines


# --- files --------------------------------------------------------------------------------------


def write_report(report: dict[str, Any], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    report["pictures"] = draw(report, folder)
    (folder / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False),
                                        encoding="utf-8")
    path = folder / "report.md"
    path.write_text(markdown(report), encoding="utf-8")
    return path


def load_report(path: Path) -> dict[str, Any]:
    file = path / "report.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{file} does not exist; give a report.json or the folder holding "
                         "one (written by townbot eval)") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{file} is not JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict) or data.get("format") not in READABLE_FORMATS:
        found = data.get("format") if isinstance(data, dict) else None
        raise ValueError(f"{file} is not a townbot eval report (format: {found!r}; expected "
                         f"{' or '.join(READABLE_FORMATS)})")
    return data


def compare(first: dict[str, Any], second: dict[str, Any]) -> str:
    """The figures of two reports side by side, with the change."""
    lines = [f"{'measure':<52}{'paper':>8}{'A':>10}{'B':>10}{'B - A':>10}"]
    for key, figure in first["figures"].items():
        other = second["figures"].get(key, {})
        a, b = figure.get("mean"), other.get("mean")
        change = _fmt(round(b - a, 4)) if a is not None and b is not None else "—"
        lines.append(f"{figure['label'][:51]:<52}{_fmt(figure['paper']):>8}{_fmt(a):>10}"
                     f"{_fmt(b):>10}{change:>10}")
    for name, report in (("A", first), ("B", second)):
        s = report["settings"]
        lines.append(f"{name}: model {s['model']}, judge {s['judge']}, seeds "
                     f"{', '.join(str(x) for x in s['seeds'])}, townbot {report['townbot_version']}")
    return "\n".join(lines)
