"""Acting in the world (paper 4.3 / 5.1): choose where an action happens from the agent's own
known tree of places; the object comes with each planned step.

The paper descends the tree one level per prompt (sector, then arena). Here one prompt offers
every known place with its areas and the answer names both: the same choice from the same
tree for half the calls (docs/architecture.md, deviations). A choice the world cannot take (a
closed shop, an occupied one-person bathroom) is refused by the availability check and the
agent chooses again; after that the safe default is taken.
"""

from __future__ import annotations

from datetime import datetime

from townbot.llm.port import LanguageModel
from townbot.llm.purposes.choose_place import Availability, PlaceQuestion, Spot
from townbot.world.model import Persona


async def choose_place(model: LanguageModel, persona: Persona, activity: str, now: datetime,
                       known: dict[str, list[str]], current: Spot, hint: Spot,
                       norms: dict[str, str], availability: Availability) -> Spot:
    """Where an activity happens: a known place and one of its areas, in one call (none when
    only one area is known). `current` is where the agent is, `hint` its routine's place."""
    known = {sector: arenas for sector, arenas in known.items() if arenas}
    spots = [(sector, arena) for sector in sorted(known) for arena in known[sector]]
    if len(spots) == 1:
        return spots[0]
    question = PlaceQuestion(persona, activity, now, known, current, hint, norms, availability)
    answer = await model.ask(question.ask(persona.name))
    return answer.place, answer.area
