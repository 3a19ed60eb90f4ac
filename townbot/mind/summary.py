"""The agent summary (paper, Appendix A): three retrievals summarised and cached.

Queries: core characteristics, current daily occupation, feeling about recent progress. The
summary is the name, age and traits followed by the three summaries; it opens most prompts.
"""

from __future__ import annotations

from datetime import datetime

from townbot.llm.port import LanguageModel
from townbot.llm.purposes.summary import SummaryQuestion
from townbot.mind.memory import MemoryStream
from townbot.mind.retrieval import recall
from townbot.world.clock import format_game_time, parse_game_time, span_of_hours
from townbot.world.model import Persona


def render_summary(persona: Persona, summary: dict[str, str] | None) -> str:
    head = f"Name: {persona.name} (age {persona.age}). Innate traits: {', '.join(persona.traits)}."
    if not summary:
        return f"{head} {persona.background} {persona.currently}"
    # The persona's background stays: a model's summary adds to it and never replaces the facts.
    return f"{head} {persona.background} {summary['core']} {summary['occupation']} {summary['feeling']}"


def is_stale(cached: dict | None, now: datetime, refresh_hours: float) -> bool:
    if not cached or "at" not in cached:
        return True
    return now - parse_game_time(cached["at"]) >= span_of_hours(refresh_hours)


async def summarise(model: LanguageModel, persona: Persona, stream: MemoryStream,
                    now: datetime, count: int = 30, *, tokens: int = 300,
                    kinds: tuple[str, ...] | None = None, touch: bool = True) -> dict[str, str]:
    """Run the three retrievals and ask for the three summaries in one call (from the given
    kinds of memory only, for an interview's ablation, which touches no access time)."""
    name = persona.name
    vectors = await model.embed([f"{name}'s core characteristics",
                                 f"{name}'s current daily occupation",
                                 f"{name}'s feeling about recent progress in life"])
    core, occupation, feeling = [
        tuple(m.text for m in recall(stream, vector, now, limit=count, token_budget=tokens,
                                     kinds=kinds, touch=touch)) for vector in vectors]
    question = SummaryQuestion(name, persona.background, persona.currently, core, occupation,
                               feeling)
    answer = await model.ask(question.ask(persona.name))
    return {**answer.model_dump(), "at": format_game_time(now)}
