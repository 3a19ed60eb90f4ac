"""Summaries of language-model usage: calls and tokens per purpose, per agent per game day."""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    purposes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    agent_days: set[tuple[str, int]] = set()
    for row in rows:
        entry = purposes[row["purpose"]]
        entry["calls"] += 1
        entry["prompt_tokens"] += row["prompt_tokens"]
        entry["completion_tokens"] += row["completion_tokens"]
        entry["fallbacks"] += row["outcome"] == "fallback"
        if row["agent"]:
            agent_days.add((row["agent"], row["game_day"]))
    total_calls = sum(p["calls"] for p in purposes.values())
    total_prompt = sum(p["prompt_tokens"] for p in purposes.values())
    per = max(1, len(agent_days))
    return {"purposes": {k: dict(v) for k, v in sorted(purposes.items())},
            "calls": total_calls, "prompt_tokens": total_prompt, "agent_days": len(agent_days),
            "calls_per_agent_day": total_calls / per, "prompt_tokens_per_agent_day": total_prompt / per,
            "estimated": any(row["estimated"] for row in rows)}


def render_usage(summary: dict[str, Any]) -> str:
    lines = [f"{'purpose':<18}{'calls':>8}{'prompt tok':>12}{'compl tok':>11}{'fallbacks':>11}"]
    for purpose, entry in summary["purposes"].items():
        lines.append(f"{purpose:<18}{entry['calls']:>8}{entry['prompt_tokens']:>12}"
                     f"{entry['completion_tokens']:>11}{entry['fallbacks']:>11}")
    mark = " (estimated)" if summary["estimated"] else ""
    lines.append(f"total: {summary['calls']} calls, {summary['prompt_tokens']} prompt tokens{mark}; "
                 f"per agent per game day: {summary['calls_per_agent_day']:.1f} calls, "
                 f"{summary['prompt_tokens_per_agent_day']:.0f} prompt tokens "
                 f"over {summary['agent_days']} agent-days")
    return "\n".join(lines)
