"""The paper's end-to-end measures (section 7.1) read from a town's export, for the two-day
offline party run: who heard the news by conversation, who passed it on to whom, who accepted
the invitation and who came, mutual knowing (network density), and repeated observations.

Run as a script it runs two offline game days and prints the figures beside the paper's:

    .venv/bin/python tests/party_measures.py [--db PATH] [--seed N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import re
import sys
from collections import Counter, defaultdict
from datetime import datetime
from itertools import combinations
from pathlib import Path
from typing import Any

NEWS = {"party": ("Valentine", "Isabella Rodriguez"), "candidacy": ("for mayor", "Sam Moore")}
PARTY_DAY = "2023-02-14"
PARTY_CHANNEL = "hobbs-cafe"
ACCEPTING = re.compile(r"\b(I'd (like|love) to come|I'll (come|be there)|count me in|"
                       r"I'll see you there)\b", re.IGNORECASE)
PAPER = {"party": "4% -> 48%", "candidacy": "4% -> 32%", "density": "0.167 -> 0.74",
         "came": "5 of 12"}


def residents(data: dict[str, Any]) -> list[str]:
    return sorted(a["name"] for a in data["agents"])


def heard_of(data: dict[str, Any], keyword: str, source: str) -> set[str]:
    """Residents besides the source who remember a conversation that mentions the news."""
    return {a["name"] for a in data["agents"] if a["name"] != source
            and any(keyword in m["text"] for m in a["memories"]["conversation"])}


def tellers(data: dict[str, Any], keyword: str) -> dict[str, set[str]]:
    """Who said something naming the news to whom."""
    told: dict[str, set[str]] = defaultdict(set)
    for talk in data["conversations"]:
        for line in talk["utterances"]:
            if keyword in line["text"]:
                told[line["speaker"]] |= set(talk["participants"]) - {line["speaker"]}
    return told


def accepted(data: dict[str, Any], before: str) -> dict[str, str]:
    """Residents who accepted the party invitation (name -> when), before a time."""
    names = set(residents(data))
    found: dict[str, str] = {}
    for talk in data["conversations"]:
        lines = talk["utterances"]
        for previous, line in zip(lines, lines[1:], strict=False):
            if (line["game_time"] < before and line["speaker"] in names
                    and ("party" in previous["text"].lower() or "Valentine" in previous["text"])
                    and ACCEPTING.search(line["text"])):
                found.setdefault(line["speaker"], line["game_time"])
    found.pop(NEWS["party"][1], None)
    return found


def at_party(data: dict[str, Any], start: str = f"{PARTY_DAY} 17:00",
             end: str = f"{PARTY_DAY} 19:00") -> set[str]:
    """Residents seen at Hobbs Cafe between the party's start and end (or there when it began)."""
    last_before: dict[str, dict] = {}
    present = set()
    for event in data["events"]:
        if event["kind"] not in ("action", "move", "speech"):
            continue
        if event["time"] < start:
            last_before[event["actor"]] = event
        elif event["time"] < end and event["channel"] == PARTY_CHANNEL and event["kind"] != "move":
            present.add(event["actor"])
    present |= {actor for actor, e in last_before.items()
                if e["channel"] == PARTY_CHANNEL and e["kind"] != "move"}
    return present & set(residents(data))


def density(data: dict[str, Any], until: str | None = None) -> float:
    """Share of pairs of residents who both have a memory naming the other."""
    names = residents(data)
    knows: dict[str, set[str]] = {}
    for agent in data["agents"]:
        texts = " ".join(m["text"] for kind in agent["memories"].values() for m in kind
                         if until is None or m["created"] <= until)
        knows[agent["name"]] = {n for n in names if n != agent["name"] and n in texts}
    pairs = list(combinations(names, 2))
    mutual = sum(1 for a, b in pairs if b in knows[a] and a in knows[b])
    return mutual / len(pairs)


def duplicate_observations(data: dict[str, Any]) -> tuple[int, int]:
    """(observation texts stored again by the same resident on the same day, agent-days of
    the run)."""
    repeats = 0
    for agent in data["agents"]:
        seen: Counter[tuple[str, str]] = Counter()
        for m in agent["memories"]["observation"]:
            seen[(m["created"][:10], m["text"])] += 1
        repeats += sum(count - 1 for count in seen.values())
    start, now = (datetime.strptime(data["town"][k], "%Y-%m-%d %H:%M") for k in ("start", "now"))
    days = max(1, round((now - start).total_seconds() / 86400))
    return repeats, days * len(data["agents"])


def measure(data: dict[str, Any]) -> dict[str, Any]:
    total = len(residents(data))
    figures: dict[str, Any] = {"residents": total}
    for news, (keyword, source) in NEWS.items():
        heard = heard_of(data, keyword, source)
        relays = {s: sorted(t) for s, t in tellers(data, keyword).items() if s != source}
        figures[news] = {"knew": 1 + len(heard), "share": (1 + len(heard)) / total,
                         "source_told": len(tellers(data, keyword).get(source, ())),
                         "most_listeners_of_a_relayer": max(map(len, relays.values()),
                                                           default=0),
                         "relayers": relays}
    invited = accepted(data, f"{PARTY_DAY} 17:00")
    came = at_party(data)
    figures["accepted"] = sorted(invited)
    figures["came"] = sorted(came - {NEWS["party"][1]})
    figures["accepted_and_came"] = sorted(set(invited) & came)
    figures["density"] = (density(data, data["town"]["start"]), density(data))
    repeats, agent_days = duplicate_observations(data)
    figures["duplicate_observations"] = repeats
    figures["duplicates_per_agent_day"] = repeats / max(1, agent_days)
    return figures


def report(figures: dict[str, Any]) -> str:
    rows = [("measure", "paper", "this town")]
    for news in NEWS:
        f = figures[news]
        rows.append((f"knew of the {news}", PAPER[news],
                     f"{f['knew']} of {figures['residents']} ({f['share']:.0%})"))
        rows.append((f"  {news}: most listeners of one relayer", "-",
                     str(f["most_listeners_of_a_relayer"])))
        rows.append((f"  {news}: listeners of its source", "-", str(f["source_told"])))
    rows.append(("accepted before 5 pm, came", PAPER["came"],
                 f"{len(figures['accepted_and_came'])} of {len(figures['accepted'])}"
                 f" (came at all: {len(figures['came'])})"))
    start, end = figures["density"]
    rows.append(("network density", PAPER["density"], f"{start:.3f} -> {end:.2f}"))
    rows.append(("duplicate observations per agent-day", "-",
                 f"{figures['duplicates_per_agent_day']:.1f} "
                 f"({figures['duplicate_observations']} in all)"))
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"{a:<{width}}  {b:<14}  {c}" for a, b, c in rows)


def export_of(db: Path) -> dict[str, Any]:
    from townbot.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if main(["export", "--db", str(db)]) != 0:
            raise SystemExit(f"could not export {db}")
    return json.loads(out.getvalue())


async def run_two_days(db: Path, seed: int = 0) -> None:
    from townbot.llm.offline import OfflineModel
    from townbot.llm.stack import build_model_stack
    from townbot.store.database import Store
    from townbot.town.engine import Engine
    from townbot.world.loading import load_world

    root = Path(__file__).resolve().parents[1]
    world = load_world(root / "world.yaml", root / "personas")
    store = await Store.open(db)
    engine = await Engine.open(world, store, build_model_stack(OfflineModel(seed=seed)), seed=seed)
    for _ in range(engine.clock.ticks_for(days=2) - engine.clock.tick):
        await engine.tick()
    await store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, default=Path("party-run.db"),
                        help="database of the run (a finished run is measured as it is)")
    parser.add_argument("--seed", type=int, default=0, help="seed of a new run (default 0)")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    args = parser.parse_args(argv)
    asyncio.run(run_two_days(args.db, args.seed))
    figures = measure(export_of(args.db))
    print(json.dumps(figures, indent=1) if args.json else report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
