"""The offline model's steps of an activity: 5-15 minute steps worded by the kind of activity
(mornings, meals, events, work with a pause), each at the object the activity's words point to,
with that object's state and an emoji."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from townbot.llm.embedding import keywords
from townbot.llm.offline.activities import any_starts, vocabulary, words_of
from townbot.llm.offline.words import alternatives, seeded_index
from townbot.wording import progressive


def pick_emoji(text: str) -> str:
    """The emoji of the first kind of activity the text names (one: a pair such as a pan and
    a sofa reads as nonsense)."""
    words = words_of(text)
    return next((emoji for prefixes, emoji in vocabulary().emoji if any_starts(words, prefixes)), "🙂")


def pick_object(activity: str, objects: Sequence[str], seed: int) -> str:
    """The object whose name or hint best matches the activity's words."""
    if not objects:
        return ""
    return _best_object(activity, tuple(objects), seed)


@lru_cache(maxsize=4096)  # the same steps meet the same rooms all day
def _best_object(activity: str, objects: tuple[str, ...], seed: int) -> str:
    stems = keywords(activity)
    # Each (stem, hint key) pair that matches adds 3 to every object named like one of its hints.
    hinted = [hints for stem_ in stems for key, hints in vocabulary().object_hints.items()
              if stem_.startswith(key)]
    # With nothing matching, any object but one that no activity is done at by default.
    odd = vocabulary().odd_defaults
    plain = [o for o in objects if not any(w in o.lower() for w in odd)] or list(objects)
    best, best_score = plain[seeded_index(seed, activity, modulo=len(plain))], 0
    for name in objects:
        lowered = name.lower()
        score = sum(2 for s in stems if s and s in lowered)
        score += sum(3 for hints in hinted if any(h in lowered for h in hints))
        if score > best_score:
            best, best_score = name, score
    return best


def object_state(obj: str, action: str) -> str:
    for name, state in vocabulary().object_states.items():
        if name in obj.lower():
            return state
    short = " ".join(action.split()[:4]).rstrip(".,")
    return f"in use ({short})"[:80]


MORNING_STEPS = ["waking up and stretching", "brushing teeth at the sink", "taking a shower",
                 "getting dressed"]


def chunks(total: int, seed: int, key: str) -> list[int]:
    """Split a block into 5, 10 or 15 minute steps adding up to it (rounded to 5 minutes)."""
    remaining = max(5, round(total / 5) * 5)
    chunks: list[int] = []
    while remaining > 0 and len(chunks) < 40:  # the schema allows 40 steps; the last stretches
        varied = (10, 15, 15, 10, 5)[seeded_index(seed, key, len(chunks), modulo=5)]
        long_block = remaining > (40 - len(chunks) - 1) * 10  # varied steps would run out
        size = min(remaining, 15 if long_block else varied)
        chunks.append(size)
        remaining -= size
    return chunks


def _meal_steps(activity: str) -> list[str]:
    meal = next((m for m in ("breakfast", "lunch", "dinner") if m in activity.lower()), "a meal")
    return [f"getting {meal} ready", f"eating {meal}", f"eating {meal}", "washing the dishes"]


def _work_steps(activity: str, resuming: bool, pause: str) -> list[str]:
    base = re.sub(r"^(continue to|finish off:) ", "", activity.rstrip("."))
    doing = progressive(base)
    plain = doing.removeprefix("still ")  # "keep writing" is "still writing": not "finishing up still"
    return [
        f"getting ready to {base}"
        if not activity.startswith(("continue", "finish off")) and not resuming
        else f"getting back to {plain}",
        doing,
        f"still {plain}",
        pause,
        doing,
        f"finishing up {plain}",
    ]


EVENT_ACTIVITY = re.compile(r"^([Hh]ost|[Aa]ttend)\b.*?\b((?:[A-Z][\w']*\s){0,3}(?:party|"
                            r"celebration|gathering|exhibition|concert|opening|reading))")


def _event_steps(activity: str, count: int, key: str, seed: int) -> list[str] | None:
    """A host's or a guest's steps at an event: the first and last in place (arriving,
    leaving), the middle drawn from the bank in a seeded order so a crowd does not move as one."""
    found = EVENT_ACTIVITY.match(activity)
    if not found:
        return None
    bank = alternatives("host_steps" if found.group(1).lower() == "host" else "guest_steps")
    event = found.group(2).strip()
    first, middle, last = bank[0], bank[1:-1], bank[-1]
    start = seeded_index(seed, key, modulo=len(middle))
    ordered = middle[start:] + middle[:start]
    steps = [first] + [ordered[i % len(ordered)] for i in range(max(0, count - 2))] + [last]
    return [step.format(event=event) for step in steps[:count]] if count > 1 else [first.format(
        event=event)]


def is_meal(activity: str) -> bool:
    lowered = activity.lower()
    words = vocabulary()
    return (lowered.startswith(words.meal_verbs) and any(w in lowered for w in words.meal_words)
            or lowered.startswith("eat"))


def steps_text(activity: str, count: int, resuming: bool = False, key: str = "",
                seed: int = 0) -> list[str]:
    filler = None
    event = _event_steps(activity, count, key, seed)
    if event is not None:
        return event
    if activity.lower().startswith(vocabulary().morning_starts):
        pattern = MORNING_STEPS
    elif is_meal(activity):
        pattern, filler = _meal_steps(activity), "taking it easy after the meal"
    else:
        active = any_starts(words_of(activity), vocabulary().active)
        pauses = alternatives("pause_active" if active else "pause_steps")
        pattern = _work_steps(activity, resuming,
                              pauses[seeded_index(seed, key, modulo=len(pauses))])
    if count <= 1:
        return [progressive(activity)]
    if count <= len(pattern):
        return pattern[: count - 1] + [pattern[-1]]
    if filler:
        return pattern + [filler] * (count - len(pattern))
    middle = [pattern[1 + (i % max(1, len(pattern) - 2))] for i in range(count - 2)]
    return [pattern[0], *middle, pattern[-1]]
