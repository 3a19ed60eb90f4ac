"""What a recorded run against a real model gives the town, read from the recording alone.

A recording (tests/real_replies/*.jsonl, made by tests/real_run.py with TOWNBOT_RECORD) holds
every reply with the reason it was refused, whichever check refused it. This script groups the
replies into calls (a reply and its repair) and prints:

- the outcome of each call, ok / repaired / defaulted, overall and by purpose, and the share
  answered by defaults (goals: at most 25% for a 1.5B model, 45% for a 0.5B one);
- accepted replies that name an object, place or person the question did not offer (goal 0);
- the replies to a burning object (the stove the morning run sets burning): each reaction, and
  how many right answers (react, with an action) were refused (goal 0);
- the conversations held (goal at least 1 in the 3-hour morning run);
- the wall time of the town's calls per game hour (the interviews left out): from the start of
  the first call to the last reply (replies reused from an earlier recording of the same prompt,
  `tests/real_run.py --reuse`, took no time: the figure is then scaled by the live ones).

Usage: python benchmarks/real_model.py FILE [--hours H]   (H: game hours the run covered;
default 3, the morning run's; the older one-hour recordings need --hours 1)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from townbot.llm.structured import extract_json
from townbot.prompting import pieces
from townbot.town.mishaps import is_alarming

GOALS = {"0.5b": 0.45, "1.5b": 0.25}  # the largest defaulted share each size may have
REPAIR_MARK = pieces("repair")[1][0][1].split("$")[0].strip()  # "Your previous answer could ..."
PLACES_LINE = re.compile(r"Places .+? knows, each with its areas: (.+)")
OBJECTS_LINE = re.compile(r"^Objects here: (.+)$", re.MULTILINE)
PARTNER = re.compile(r"starts a conversation with (.+?),\s+who was")
PEOPLE = re.compile(r"^(.+) just had this conversation:$", re.MULTILINE)
NOTICED = re.compile(r"notices: (.+)")
REUSED = "(reused: "  # the model's name in a reply tests/real_run.py --reuse took from a recording


@dataclass
class Call:
    """One question: its first reply and, when that was refused, the repair's."""

    first: dict[str, Any]
    repair: dict[str, Any] | None = None

    @property
    def outcome(self) -> str:
        if self.first.get("problem") is None:
            return "ok"
        if self.repair is not None and self.repair.get("problem") is None:
            return "repaired"
        return "defaulted"

    @property
    def replies(self) -> list[dict[str, Any]]:
        return [self.first] + ([self.repair] if self.repair else [])


def read_calls(path: Path) -> list[Call]:
    """The recording's replies as calls: a repair follows the reply it repairs (one request at
    a time), and its prompt is that reply's prompt with the problem appended."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    calls: list[Call] = []
    open_calls: dict[tuple[str, str | None, str], Call] = {}
    for record in records:
        prompt = record["prompt"]
        if REPAIR_MARK in prompt:
            asked = prompt[: prompt.rindex(REPAIR_MARK)].rstrip()
            call = open_calls.pop((record["purpose"], record.get("agent"), asked), None)
            if call is not None:
                call.repair = record
                continue
        call = Call(record)
        calls.append(call)
        open_calls[(record["purpose"], record.get("agent"), prompt)] = call
    return calls


def answer_of(record: dict[str, Any]) -> dict[str, Any] | None:
    try:
        data = json.loads(extract_json(record.get("raw") or ""))
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def offered_places(prompt: str) -> dict[str, list[str]]:
    """'A (areas: x, y); B (areas: z)' from a prompt's places line, as {place: areas}."""
    found = PLACES_LINE.findall(prompt)
    if not found:
        return {}
    places = {}
    for part in found[-1].split("); "):
        name, _, areas = part.partition(" (areas: ")
        places[name.strip()] = [a.strip() for a in areas.rstrip(")").split(", ")]
    return places


def strangers(record: dict[str, Any]) -> list[str]:
    """What an accepted reply names that its question did not offer."""
    answer, prompt, purpose = answer_of(record), record["prompt"], record["purpose"]
    if answer is None:
        return []
    named: list[str] = []
    if purpose == "decompose" and (line := OBJECTS_LINE.findall(prompt)):
        objects = line[-1].split(", ")
        if objects != ["none"]:
            named = [s.get("object") for s in answer.get("steps", []) if s.get("object") not in objects]
    elif purpose == "choose_place" and (places := offered_places(prompt)):
        place, area = answer.get("place"), answer.get("area")
        if area not in places.get(place, ()):
            named = [f"{place}: {area}"]
    elif purpose == "hourly_schedule" and (places := offered_places(prompt)):
        spots = {f"{p}: {a}" for p, areas in places.items() for a in areas}
        named = [b.get("place") for b in answer.get("blocks", []) if b.get("place") not in spots | {""}]
    elif purpose == "conversation" and (partner := PARTNER.findall(prompt)):
        names = {record.get("agent"), partner[-1]}
        named = [line.get("speaker") for line in answer.get("lines", []) if line.get("speaker") not in names]
    elif purpose == "takeaways" and (people := PEOPLE.findall(prompt)):
        names = set(people[-1].split(" and "))
        named = [e.get("name") for e in answer.get("learned", []) if e.get("name") not in names]
    return [str(n) for n in named]


def alarm_reactions(calls: list[Call]) -> list[tuple[dict[str, Any], bool]]:
    """(reply, whether it was a right answer) for each reply to a reaction question about
    something burning, smoking or leaking."""
    found = []
    for call in calls:
        if call.first["purpose"] != "react":
            continue
        noticed = NOTICED.findall(call.first["prompt"])
        if not noticed or not is_alarming(noticed[-1]):
            continue
        for record in call.replies:
            answer = answer_of(record) or {}
            right = answer.get("react") is True and bool(str(answer.get("action", "")).strip())
            found.append((record, right))
    return found


def size_of(path: Path, calls: list[Call]) -> str | None:
    text = f"{path.name} {calls[0].first.get('model', '') if calls else ''}".lower()
    return next((size for size in GOALS if size in text), None)


def report(path: Path, hours: float) -> list[str]:
    calls = read_calls(path)
    lines = [f"{path.name}: {len(calls)} calls, {sum(len(c.replies) for c in calls)} replies"]
    if not any("why" in c.first for c in calls):
        lines.append("  (recorded before recordings said why: refusals by a question's own check "
                     "are not counted, so the figures below are too kind)")
    outcomes = Counter(c.outcome for c in calls)
    share = outcomes["defaulted"] / max(1, len(calls))
    size = size_of(path, calls)
    goal = f" (goal for {size}: <= {GOALS[size]:.0%})" if size else ""
    lines.append(f"  ok / repaired / defaulted: {outcomes['ok']} / {outcomes['repaired']} / "
                 f"{outcomes['defaulted']}; defaulted share {share:.0%}{goal}")
    by_purpose: dict[str, Counter[str]] = {}
    for call in calls:
        by_purpose.setdefault(call.first["purpose"], Counter())[call.outcome] += 1
    for purpose, counts in sorted(by_purpose.items()):
        lines.append(f"    {purpose:22} ok {counts['ok']:3}  repaired {counts['repaired']:3}  "
                     f"defaulted {counts['defaulted']:3}")
    problems = Counter(r.get("problem") for c in calls for r in c.replies if r.get("problem"))
    lines.append(f"  refusals by kind: {dict(problems.most_common())}")
    accepted = [r for c in calls for r in c.replies if r.get("problem") is None]
    named = [(r["purpose"], s) for r in accepted for s in strangers(r)]
    lines.append(f"  accepted replies naming an object, place or person not offered: {len(named)} "
                 "(goal 0)" + "".join(f"\n    {purpose}: {what!r}" for purpose, what in named))
    alarms = alarm_reactions(calls)
    refused = sum(1 for record, right in alarms if right and record.get("problem"))
    lines.append(f"  reactions to something burning, smoking or leaking: {len(alarms)}; right "
                 f"answers refused: {refused} (goal 0)")
    for record, right in alarms:
        answer = answer_of(record) or {}
        verdict = f"refused ({record.get('why') or record.get('problem')})" if record.get("problem") \
            else "accepted"
        lines.append(f"    {record.get('agent')}: react={answer.get('react')} "
                     f"{answer.get('action', '')!r}: {verdict}{'' if right else ' (no reaction)'}")
    talks = max(sum(c.first["purpose"] == "takeaways" for c in calls),
                sum(c.first["purpose"] == "conversation" for c in calls))
    lines.append(f"  conversations: {talks} (goal at least 1 in the 3-hour morning run)")
    town = [r for c in calls if c.first["purpose"] != "answer" for r in c.replies]
    stamps = [r["at"] - r.get("seconds", 0) for r in town[:1] if "at" in r] + \
        [r["at"] for r in town[-1:] if "at" in r]
    reused = sum(REUSED in str(r.get("model", "")) for r in town)
    if len(stamps) == 2 and reused:
        # Reused replies (tests/real_run.py --reuse) came at once: scale by the live ones.
        wall = stamps[1] - stamps[0]
        estimate = wall * len(town) / max(1, len(town) - reused)
        lines.append(f"  wall time of the town's calls: {wall:.0f} s over {hours:g} game hours for "
                     f"the {len(town) - reused} live replies; {reused} of {len(town)} were reused "
                     f"from an earlier recording of the same prompts and took no time, so about "
                     f"{estimate / hours / 60:.0f} min per game hour had all been asked (the "
                     f"interviews left out)")
    elif len(stamps) == 2:
        wall = stamps[1] - stamps[0]
        lines.append(f"  wall time of the town's calls: {wall:.0f} s over {hours:g} game hours, "
                     f"{wall / hours / 60:.1f} min per game hour (the interviews left out)")
    else:
        lines.append("  wall time: not in the recording (made before replies kept the time they "
                     "came; tests/real_run.py prints each tick's)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="recordings (JSON lines)")
    parser.add_argument("--hours", type=float, default=3.0,
                        help="game hours the recorded run covered (default 3)")
    args = parser.parse_args(argv)
    for path in args.files:
        if not path.is_file():
            print(f"error: no recording at {path}; give a .jsonl file made by tests/real_run.py",
                  file=sys.stderr)
            return 2
        print("\n".join(report(path, args.hours)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
