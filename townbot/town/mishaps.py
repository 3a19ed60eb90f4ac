"""Household mishaps: an appliance in use now and then goes wrong (a stove starts burning, a
shower leaks), as in the paper's examples, so residents have objects to react to.

Whether a mishap happens is a seeded hash of the tick, the user and the object: the same seed
gives the same mishaps.
"""

from __future__ import annotations

import hashlib

MISHAPS: dict[str, str] = {
    "stove": "burning",
    "oven": "smoking",
    "toaster": "smoking",
    "shower": "leaking water",
    "kitchen sink": "overflowing",
    "coffee machine": "leaking",
}
MISHAP_RATE = 0.02  # chance per tick of use


def mishap(path: str, user: str, tick: int, seed: int) -> str | None:
    """The state an object in use falls into this tick, or None when all goes well."""
    state = MISHAPS.get(path.split(": ")[-1])
    if state is None:
        return None
    digest = hashlib.blake2b(f"{seed}|{tick}|{user}|{path}".encode(), digest_size=4).digest()
    return state if int.from_bytes(digest, "little") / 2**32 < MISHAP_RATE else None


ALARM_WORDS = ("burn", "fire", "smok", "leak", "flood", "overflow", "broken")


def is_alarming(state: str) -> bool:
    """A state that people react to (whoever caused it: a mishap or a user's /set)."""
    lowered = state.lower()
    return any(word in lowered for word in ALARM_WORDS)
