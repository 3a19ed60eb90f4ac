"""Acting in the world (paper 4.3 / 5.1): choose where an action happens by descending the
agent's own known tree (sector, then arena); the object comes with each planned step.

A choice the world cannot take (a closed shop, an occupied one-person bathroom) is refused by
the availability check and the agent chooses again; after that the safe default is taken.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from townbot.llm.port import Ask, LanguageModel
from townbot.llm.purposes import PlaceChoice
from townbot.prompting import render
from townbot.world.clock import clock_face
from townbot.world.model import Persona

# (sector, arena or None) -> why it cannot be entered now, or None when it can.
Availability = Callable[[str, str | None], str | None]


def _problem(choice: str, options: list[str], available: Callable[[str], str | None]) -> str | None:
    if choice not in options:
        return f"'{choice}' is not one of: {', '.join(options)}"
    return available(choice)


def _fallback(preferred: list[str | None], options: list[str],
              available: Callable[[str], str | None]) -> PlaceChoice:
    for name in [*preferred, *options]:
        if name in options and available(name) is None:
            return PlaceChoice(choice=name)
    return PlaceChoice(choice=next(n for n in preferred if n in options) if any(
        n in options for n in preferred) else options[0])


async def _choose(model: LanguageModel, persona: Persona, purpose: str, prompt: str,
                  options: list[str], available: Callable[[str], str | None],
                  preferred: list[str | None], context: dict) -> str:
    """Ask for one of `options`; an unavailable or unknown answer is refused (one repair try,
    then the first preferred option that is available)."""
    answer = await model.ask(Ask(
        purpose=purpose, prompt=prompt, schema=PlaceChoice, agent=persona.name,
        context={**context, "options": options},
        check=lambda a: _problem(a.choice, options, available),
        default=lambda: _fallback(preferred, options, available)))
    return answer.choice


async def choose_sector(model: LanguageModel, persona: Persona, activity: str, now: datetime,
                        known: dict[str, list[str]], current: str, hint: str | None,
                        norms: dict[str, str], availability: Availability) -> str:
    options = sorted(known)
    if len(options) == 1:
        return options[0]
    prompt = render("choose_sector", time=clock_face(now.hour * 60 + now.minute),
                    first_name=persona.first_name, activity=activity, current=current,
                    home=persona.home_sector, options_text="; ".join(options),
                    norms=" ".join(norms.get(o, "") for o in options if norms.get(o)) or "none")
    return await _choose(model, persona, "choose_sector", prompt, options,
                         lambda sector: availability(sector, None),
                         [hint, current, persona.home_sector],
                         {"activity": activity, "hint": hint, "current": current})


async def choose_arena(model: LanguageModel, persona: Persona, activity: str, now: datetime,
                       sector: str, arenas: list[str], hint: str | None, current: str | None,
                       norms: str, availability: Availability) -> str:
    if len(arenas) == 1:
        return arenas[0]
    prompt = render("choose_arena", time=clock_face(now.hour * 60 + now.minute),
                    first_name=persona.first_name, sector=sector, activity=activity,
                    options_text="; ".join(arenas), norms=norms or "none")
    return await _choose(model, persona, "choose_arena", prompt, arenas,
                         lambda arena: availability(sector, arena), [hint, current],
                         {"activity": activity, "hint": hint, "current": current})
