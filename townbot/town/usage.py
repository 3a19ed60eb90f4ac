"""Summaries of language-model usage: calls and tokens per purpose, per agent per game day, cache
hits, answers given by defaults, and an estimated price from the configured prices."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from townbot.llm.budget import EMBEDDING_PURPOSES
from townbot.llm.offline import OFFLINE_LABEL
from townbot.llm.port import ASKED, DEFAULTED, LanguageModel
from townbot.llm.settings import ModelSettings
from townbot.llm.watching import defaulted_share, share_lines
from townbot.wording import plural, text_table

COLUMNS = ("calls", "prompt_tokens", "completion_tokens", "repaired", "fallbacks", "failed", "cached",
           "budget", "cached_tokens")


def _tally(entry: dict[str, float], row: dict[str, Any]) -> None:
    outcome = row["outcome"]
    entry["calls"] += outcome in ASKED  # asked of the model: also the defaulted share's base
    entry["prompt_tokens"] += row["prompt_tokens"]
    entry["completion_tokens"] += row["completion_tokens"]
    entry["cached_tokens"] += row.get("cached_tokens") or 0
    entry["repaired"] += outcome == "repaired"
    entry["fallbacks"] += outcome in DEFAULTED  # the model gave no usable answer
    entry["failed"] += outcome == "failed"
    entry["cached"] += outcome == "cached"
    entry["budget"] += outcome in ("skipped", "over_budget")


def agent_days_of(rows: list[dict[str, Any]], tick_minutes: int | None) -> float:
    """Residents times the game days the rows span (by tick); without the tick length, the
    number of (resident, calendar day) pairs, which overcounts runs that cross midnight."""
    agents = {row["agent"] for row in rows if row["agent"]}
    if tick_minutes and rows:
        ticks = [row["tick"] for row in rows]
        days = (max(ticks) - min(ticks) + 1) * tick_minutes / (24 * 60)
        return len(agents) * days
    return float(len({(row["agent"], row["game_day"]) for row in rows if row["agent"]}))


def summarise(rows: list[dict[str, Any]], settings: ModelSettings | None = None,
              tick_minutes: int | None = None) -> dict[str, Any]:
    purposes: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(COLUMNS, 0))
    for row in rows:
        _tally(purposes[row["purpose"]], row)
    agent_days = agent_days_of(rows, tick_minutes)
    per = agent_days or 1.0  # a run shorter than an agent-day gives its rates scaled to one
    asks = {k: v for k, v in purposes.items() if k not in EMBEDDING_PURPOSES}
    for entry in purposes.values():
        entry["calls_per_agent_day"] = entry["calls"] / per
        entry["prompt_tokens_per_agent_day"] = entry["prompt_tokens"] / per
    total_calls = sum(p["calls"] for p in asks.values())
    total_prompt = sum(p["prompt_tokens"] for p in asks.values())
    price, unpriced = estimate_price(rows, settings)
    return {"purposes": {k: dict(v) for k, v in sorted(purposes.items())},
            "calls": total_calls, "prompt_tokens": total_prompt,
            "completion_tokens": sum(p["completion_tokens"] for p in asks.values()),
            "cached_tokens": sum(p["cached_tokens"] for p in asks.values()),
            "embedding_tokens": sum(p["prompt_tokens"] for k, p in purposes.items()
                                    if k in EMBEDDING_PURPOSES),
            "agent_days": agent_days, "calls_per_agent_day": total_calls / per,
            "prompt_tokens_per_agent_day": total_prompt / per,
            "cache_hits": sum(p["cached"] for p in purposes.values()),
            "fallbacks": sum(p["fallbacks"] for p in purposes.values()),
            "budget_defaults": sum(p["budget"] for p in purposes.values()),
            "estimated": any(row["estimated"] for row in rows),
            "offline": bool(rows) and all(row["model"] == OFFLINE_LABEL for row in rows),
            "price": price, "unpriced_tokens": unpriced}


def _row_price(row: dict[str, Any], settings: ModelSettings) -> float | None:
    """Dollars for one row, or None when its model has no configured price."""
    prices, model = settings.prices, row["model"]
    if row["purpose"] in EMBEDDING_PURPOSES:
        return row["prompt_tokens"] * prices.embedding / 1e6 if model == settings.embedding_model else None
    if model == settings.small_model and model != settings.chat_model:
        prompt = prices.small_prompt if prices.small_prompt is not None else prices.prompt
        completion = prices.small_completion if prices.small_completion is not None else prices.completion
    elif model == settings.chat_model:
        prompt, completion = prices.prompt, prices.completion
    else:
        return None
    return (row["prompt_tokens"] * prompt + row["completion_tokens"] * completion) / 1e6


def estimate_price(rows: list[dict[str, Any]], settings: ModelSettings | None) -> tuple[float | None, int]:
    """(dollars, tokens of models without a price); dollars is None when no price is configured."""
    if settings is None or not settings.prices.any:
        return None, 0
    dollars, unpriced = 0.0, 0
    for row in rows:
        if row["model"] == OFFLINE_LABEL:
            continue  # the offline model costs nothing
        price = _row_price(row, settings)
        if price is None:
            unpriced += row["prompt_tokens"] + row["completion_tokens"]
        else:
            dollars += price
    return dollars, unpriced


def _price_line(summary: dict[str, Any]) -> str:
    if summary["offline"]:
        return "price: nothing (the offline model runs locally)"
    if summary["price"] is None:
        return ("price: set TOWNBOT_PRICE_PROMPT and TOWNBOT_PRICE_COMPLETION (dollars per million "
                "tokens) to estimate it")
    line = f"estimated price: ${summary['price']:.4f}"
    if summary["unpriced_tokens"]:
        line += f" (plus {summary['unpriced_tokens']} tokens of models without a configured price)"
    return line


USAGE_HEADERS = ["purpose", "calls", "calls/agent-day", "prompt tok", "prompt/agent-day",
                 "completion tok", "repaired", "defaults", "cached", "budget"]
OUTCOME_COLUMNS = {"repaired": "repaired", "defaults": "fallbacks", "cached": "cached", "budget": "budget"}


def usage_table(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The per-purpose table as text cells; every column but the first is a number. An outcome
    column (repaired, defaults, cached, budget) that is zero throughout is left out."""
    entries = summary["purposes"]
    shown = [h for h in USAGE_HEADERS if h not in OUTCOME_COLUMNS
             or any(e[OUTCOME_COLUMNS[h]] for e in entries.values())]
    rows = []
    for purpose, e in entries.items():
        cells = {"purpose": purpose, "calls": f"{e['calls']:.0f}",
                 "calls/agent-day": f"{e['calls_per_agent_day']:.1f}",
                 "prompt tok": f"{e['prompt_tokens']:.0f}",
                 "prompt/agent-day": f"{e['prompt_tokens_per_agent_day']:.0f}",
                 "completion tok": f"{e['completion_tokens']:.0f}",
                 **{h: f"{e[key]:.0f}" for h, key in OUTCOME_COLUMNS.items()}}
        rows.append([cells[h] for h in shown])
    return shown, rows


def usage_totals(summary: dict[str, Any]) -> list[str]:
    """The lines under the table: totals, cache, defaults, budget and price."""
    lines = [f"total: {_totals(summary)}; per agent per game day: "
             f"{summary['calls_per_agent_day']:.1f} calls, "
             f"{summary['prompt_tokens_per_agent_day']:.0f} prompt tokens "
             f"{_days_note(summary['agent_days'])}"]
    extras = [f"cache hits: {summary['cache_hits']:.0f}"]
    if summary.get("cached_tokens"):
        extras.append(f"prompt tokens the server had cached: {summary['cached_tokens']:.0f} "
                      f"({summary['cached_tokens'] / max(1, summary['prompt_tokens']):.0%})")
    if summary["embedding_tokens"]:
        extras.append(f"embedding tokens: {summary['embedding_tokens']:.0f}")
    if summary["fallbacks"] and summary["offline"]:
        extras.append(f"questions the offline model had no usable answer for (defaults used): "
                      f"{summary['fallbacks']}")
    elif summary["fallbacks"]:
        extras.append("answered by defaults after unusable replies or an unreachable server: "
                      f"{summary['fallbacks']}")
    if summary["budget_defaults"]:
        extras.append(f"answered by defaults under the budget: {summary['budget_defaults']:.0f}")
    lines.append("; ".join(extras))
    lines.append(_price_line(summary))
    if summary["fallbacks"] or not summary["offline"]:  # a model's share, even when none
        lines += share_lines(int(summary["fallbacks"]), int(summary["calls"]), summary["offline"])
    return lines


def _days_note(agent_days: float) -> str:
    """Over how many agent-days the per-day figures were measured, and that a shorter run's
    are its rates scaled up to a day (a morning asks more plans than a whole day averages)."""
    if 0 < agent_days < 1:
        return f"(scaled up from a run of {agent_days:.2f} agent-days)"
    return f"over {agent_days:.1f} agent-days"


def render_usage(summary: dict[str, Any], heading: str | None = None) -> str:
    """The usage summary as plain text: an optional heading, the table, the totals."""
    headers, rows = usage_table(summary)
    table = text_table(headers, rows, right=frozenset(range(1, len(headers))))
    return "\n".join([*([heading] if heading else []), table, *usage_totals(summary)])


def _totals(summary: dict[str, Any]) -> str:
    mark = " (estimated)" if summary["estimated"] else ""
    return (f"{plural(int(summary['calls']), 'call')}, {summary['prompt_tokens']:.0f} prompt and "
            f"{summary['completion_tokens']:.0f} completion tokens{mark}")


def town_line(summary: dict[str, Any]) -> str:
    """The town's totals over all its runs, in one line."""
    return (f"town totals (all runs): {_totals(summary)} over {summary['agent_days']:.1f} "
            f"agent-days; {_price_line(summary)}")


def model_notes(model: LanguageModel, day: int) -> dict[str, list[str]]:
    """What the status read-outs say of the model this session: the share of answers from
    defaults (with a warning above WARN_SHARE), and each budget cap's use and what is left."""
    report = model.report()
    # The offline model's few defaults are its design, not news (and not a model to judge).
    answers = [] if model.label == OFFLINE_LABEL else share_lines(*defaulted_share(report))
    budget = report.budget.caps_used(day) if report.budget is not None else []
    if report.budget is not None:
        budget.append(report.budget.status(day))
    return {"answers": answers, "budget": budget}
