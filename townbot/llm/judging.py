"""Judging a model's reply the way a careful reader would, in one place for every purpose.

Two steps, both applied to every reply a real model gives:

- `coerce` mends what is slightly off when the meaning is clear: a score of 11 on a 1-10
  scale becomes 10, a 20-minute step where 5, 10 or 15 are allowed becomes 15, "7" becomes 7,
  a sixth insight where five are allowed is dropped, a line a little too long is cut at a word.
- `judge` refuses what only looks like an answer: placeholders ("...", empty text, "<place>"),
  the template's own example text copied back, the instruction echoed, words or :shortcodes:
  where emoji belong, and a resident speaking of themself in the third person.

A refused reply gets the usual repair try and then the ask's default (see metering).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from townbot.llm.port import Ask
from townbot.prompting import PROMPT_DIR, template

PLACEHOLDER_WORDS = frozenset({
    "string", "text", "str", "action", "activity", "object", "state", "emoji", "todo", "tbd",
    "n/a", "na", "placeholder", "example", "hh:mm", "xx:xx", "lorem ipsum", "your answer"})
ELLIPSIS = re.compile(r"\.\.\.|…")
ANGLE_PLACEHOLDER = re.compile(r"<[^<>]{2,80}>")
SHORTCODE = re.compile(r":[a-z0-9_+-]+:?", re.IGNORECASE)
TEMPLATE_FIELD = re.compile(r'"(\w+)":\s*"([^"$]{3,})"')
ECHO_WORDS = 6  # this many consecutive words of a template's own text make an echo
THIRD_PERSON_VERBS = ("is", "was", "has", "had", "would", "will", "thinks", "feels", "says",
                      "likes", "loves", "remembers", "knows", "does", "did", "can", "wants")
# Fields the whole reply is judged by when a resident speaks (first person expected).
SPOKEN = {"answer": ("text",), "utterance": ("text",)}
MAX_COERCE_ROUNDS = 4


# --- mending slightly-off values --------------------------------------------------------------


def coerce(schema: type[BaseModel], data: Any) -> tuple[BaseModel | None, list[str], ValidationError | None]:
    """(answer, what was mended, the remaining error): mends values that are slightly off."""
    mended: list[str] = []
    for _ in range(MAX_COERCE_ROUNDS):
        try:
            return schema.model_validate(data), mended, None
        except ValidationError as error:
            fixes = [fix for problem in error.errors() if (fix := _mend(data, problem))]
            if not fixes:
                return None, mended, error
            mended += fixes
    try:
        return schema.model_validate(data), mended, None
    except ValidationError as error:
        return None, mended, error


def _mend(data: Any, problem: dict) -> str | None:
    """Change the value at the problem's location in place; a note of the change, or None."""
    location = problem["loc"]
    parent = data
    for part in location[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return None
    key = location[-1] if location else None
    if key is None or not isinstance(parent, dict | list):
        return None
    try:
        value = parent[key]
    except (KeyError, IndexError, TypeError):
        return None
    fixed = _mended_value(problem, value)
    if fixed is None or fixed == value:
        return None
    parent[key] = fixed
    where = ".".join(str(p) for p in location)
    return f"{where}: {str(value)[:20]!r} -> {str(fixed)[:20]!r}"


def _mended_value(problem: dict, value: Any) -> Any:
    kind, context = problem["type"], problem.get("ctx") or {}
    number = _number(value)
    if kind == "literal_error" and number is not None:
        allowed = [int(a) for a in re.findall(r"-?\d+", str(context.get("expected", "")))]
        return _nearest(number, allowed)
    if kind in ("int_parsing", "int_from_float", "int_type") and number is not None:
        return round(number)
    if kind == "greater_than_equal" and number is not None:
        low = context["ge"]
        return low if number >= low / 2 else None
    if kind == "less_than_equal" and number is not None:
        high = context["le"]
        return high if number <= high * 2 else None
    if kind == "string_too_long" and isinstance(value, str):
        return _cut(value, context["max_length"])
    if kind == "too_long" and isinstance(value, list) and not any(_number(v) is not None for v in value):
        return value[: context["max_length"]]  # a sixth insight goes; a sixth score is a miscount
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", value):
        return float(value)
    return None


def _nearest(number: float, allowed: list[int]) -> int | None:
    """The closest allowed value, when the number is no further off than the range is wide."""
    if not allowed:
        return None
    low, high = min(allowed), max(allowed)
    if not (low - max(1, low) <= number <= 2 * high):
        return None
    return min(allowed, key=lambda a: (abs(a - number), -a))


def _cut(text: str, limit: int) -> str:
    cut = text[:limit]
    if " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-")


# --- refusing what only looks like an answer --------------------------------------------------


def judge(request: Ask, answer: BaseModel) -> str | None:
    """Why a well-formed answer is still not a real one, or None when it reads as one."""
    examples = template_examples(request.purpose)
    echoes = template_phrases(request.purpose)
    for path, value in _strings(answer.model_dump()):
        field = path.rsplit(".", 1)[-1]
        if field == "emoji":
            problem = _emoji_problem(value)
        elif not value.strip() and field in OPTIONAL_TEXT.get(request.purpose, ()):
            problem = None
        else:
            problem = _placeholder_problem(value, examples, echoes)
        if problem:
            return f"{path} {problem}"
    return _person_problem(request, answer)


def _strings(data: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _strings(value, f"{path}.{key}" if path else key)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _strings(value, f"{path}[{index}]")
    elif isinstance(data, str):
        yield path, data


def _placeholder_problem(value: str, examples: frozenset[str],
                         echoes: frozenset[tuple[str, ...]]) -> str | None:
    text = value.strip()
    letters = re.sub(r"[^\w]", "", ELLIPSIS.sub("", text))
    if len(letters) < 2 or text.lower().strip(".…!? ") in PLACEHOLDER_WORDS:
        return f"is a placeholder ({value!r}), not a real answer; write it out"
    if ELLIPSIS.search(text) and len(text.split()) <= 3:
        return f"is a placeholder ({value!r}); write it out in full"
    if ANGLE_PLACEHOLDER.fullmatch(text) or text.startswith("<") and text.endswith(">"):
        return f"is the template's placeholder ({value!r}); put the real value there"
    if len(text.split()) >= 3 and text.lower() in examples:
        return f"copies the example from the instructions ({value!r}); answer for this case"
    if _echoes(text, echoes):
        return f"repeats the instructions ({value[:60]!r}) instead of answering them"
    return None


# Text fields that may be empty, by purpose (a reaction that does not react).
OPTIONAL_TEXT = {"react": ("action", "object_state")}


def _emoji_problem(value: str) -> str | None:
    text = value.strip()
    if not text:
        return None  # an empty emoji field takes the default emoji
    if SHORTCODE.search(text) or re.search(r"[A-Za-z]", text):
        return f"must be emoji characters like ☕ or 🛏️, not words or :shortcodes: ({value!r})"
    if not any(ord(ch) > 0x2000 for ch in text):
        return f"must be emoji characters like ☕ or 🛏️ ({value!r})"
    return None


def _person_problem(request: Ask, answer: BaseModel) -> str | None:
    """A resident answering in their own voice must not speak of themself by name."""
    fields = SPOKEN.get(request.purpose)
    name = request.context.get("name") or request.context.get("speaker") or request.agent
    if not fields or not name:
        return None
    names = sorted({name, name.split()[0]}, key=len, reverse=True)
    pattern = re.compile(r"(?:^|[.!?]\s+)(?:" + "|".join(map(re.escape, names)) + r")(?:'s)?\s+(?:"
                         + "|".join(THIRD_PERSON_VERBS) + r")\b")
    for field in fields:
        text = str(getattr(answer, field, ""))
        if pattern.search(text):
            return (f"{field} speaks of {name.split()[0]} in the third person; answer as "
                    f"{name.split()[0]} in the first person (\"I ...\")")
    return None


# --- what each template shows as its example ---------------------------------------------------


@cache
def template_examples(purpose: str) -> frozenset[str]:
    """The example values in a template's answer line, lower-cased (a copy is not an answer)."""
    if not (PROMPT_DIR / f"{purpose}.txt").exists():
        return frozenset()
    text = template(purpose).template
    return frozenset(value.strip().lower() for _, value in TEMPLATE_FIELD.findall(text))


@cache
def template_phrases(purpose: str) -> frozenset[tuple[str, ...]]:
    """Runs of ECHO_WORDS words of a template's own instructions (its fixed text)."""
    if not (PROMPT_DIR / f"{purpose}.txt").exists():
        return frozenset()
    fixed = re.split(r"\$\{?\w+\}?", template(purpose).template)
    runs: set[tuple[str, ...]] = set()
    for chunk in fixed:
        words = _words(chunk)
        runs.update(tuple(words[i:i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1))
    return frozenset(runs)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _echoes(text: str, phrases: frozenset[tuple[str, ...]]) -> bool:
    words = _words(text)
    return any(tuple(words[i:i + ECHO_WORDS]) in phrases for i in range(len(words) - ECHO_WORDS + 1))
