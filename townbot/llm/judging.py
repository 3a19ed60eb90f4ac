"""Judging a model's reply the way a careful reader would, in one place for every purpose.

- `coerce` mends what is slightly off when the meaning is clear: a score of 11 on a 1-10
  scale becomes 10, "7" becomes 7, a sixth insight where five are allowed is dropped, a line a
  little too long is cut at a word.
- `judge` refuses what only looks like an answer: placeholders ("...", "<place>"), the
  example's own specifics copied back, a long run of the instructions echoed, anything but
  emoji where emoji belong, a resident speaking of themself in the third person. Words the
  filled-in prompt brings (the stove that is burning) are the resident's own to use.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import Any

import regex
from pydantic import BaseModel, ValidationError

from townbot.llm.port import Ask
from townbot.prompting import PROMPT_DIR, pieces, template

PLACEHOLDER_WORDS = frozenset({
    "string", "text", "str", "action", "activity", "object", "state", "emoji", "todo", "tbd",
    "n/a", "na", "placeholder", "example", "hh:mm", "xx:xx", "lorem ipsum", "your answer"})
ELLIPSIS = re.compile(r"\.\.\.|…")
SHORTCODE = re.compile(r":[a-z0-9_+-]+:?", re.IGNORECASE)
# Quoted strings, paired from the left: those not followed by a colon are example values (or
# quoted examples in the instructions' prose), the others JSON keys.
QUOTED = re.compile(r'"([^"]*)"(\s*:)?')
ECHO_WORDS = 8  # this many consecutive words of a template's instructions make an echo
# Words too common to mark a copy: an example's specifics are its other words.
COMMON_WORDS = frozenset("""
a an the and or but of to in on at by for with from up down out over into onto off about as is
are was were be been am it its it's this that these those there here then than so too very just
i me my we our you your he him his she her they them their one two some any all each no not
will would can could should may might must do does did done have has had get got go goes going
make makes made take takes now today tonight morning evening day time new good well back more
am pm why how what who where when which yet also still
""".split())
# Emoji: code points with the Unicode Emoji property (or the parts that join them), at least
# one of them a picture (a digit, '#' or '*' alone has the property, as a keycap's base).
EMOJI_ONLY = regex.compile(r"[\p{Emoji}\p{Emoji_Component}\u200d\ufe0f\u20e3\s]+")
PICTOGRAPH = regex.compile(r"\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3")
THIRD_PERSON_VERBS = ("is", "was", "has", "had", "would", "will", "thinks", "feels", "says",
                      "likes", "loves", "remembers", "knows", "does", "did", "can", "wants")
# Purposes whose `text` a resident speaks in their own voice (first person expected).
SPOKEN = frozenset({"answer", "utterance"})
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
    try:
        for part in location[:-1]:
            parent = parent[part]
        value = parent[location[-1]]
    except (KeyError, IndexError, TypeError):  # no such place (an empty location too)
        return None
    if not isinstance(parent, dict | list):
        return None
    fixed = _mended_value(problem, value)
    if fixed is None or fixed == value:
        return None
    parent[location[-1]] = fixed
    where = ".".join(str(p) for p in location)
    return f"{where}: {str(value)[:20]!r} -> {str(fixed)[:20]!r}"


def _mended_value(problem: dict, value: Any) -> Any:
    kind, context = problem["type"], problem.get("ctx") or {}
    if kind == "literal_error" and isinstance(value, str) and \
            str(context.get("expected", "")).startswith("''"):
        return ""  # a choice outside the list where none may be given (a place chosen later)
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
    echoes = template_phrases(request.purpose)
    specifics = example_specifics(request.purpose, situation_words(request))
    for path, value in _strings(answer.model_dump()):
        field = path.rsplit(".", 1)[-1]
        if field == "emoji":
            problem = _emoji_problem(value)
        elif not value.strip() and field in OPTIONAL_TEXT.get(request.purpose, ()):
            problem = None
        else:
            problem = _placeholder_problem(value, echoes) or _copy_problem(value, specifics)
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


def _placeholder_problem(value: str, echoes: frozenset[tuple[str, ...]]) -> str | None:
    text = value.strip()
    letters = re.sub(r"[^\w]", "", ELLIPSIS.sub("", text))
    if len(letters) < 2 or text.lower().strip(".…!? ") in PLACEHOLDER_WORDS:
        return f"is a placeholder ({value!r}), not a real answer; write it out"
    if ELLIPSIS.search(text) and len(text.split()) <= 3:
        return f"is a placeholder ({value!r}); write it out in full"
    if text.startswith("<") and text.endswith(">"):
        return f"is the template's placeholder ({value!r}); put the real value there"
    if not _runs(text).isdisjoint(echoes):
        return f"repeats the instructions ({value[:60]!r}) instead of answering them"
    return None


# Text fields that may be empty, by purpose (a reaction that does not react, a block whose
# place is chosen when it begins, a plan kept: the prompt's own example of it has no reason).
OPTIONAL_TEXT = {"react": ("action", "object_state"), "hourly_schedule": ("place",),
                 "revise_plan": ("reason",)}


def _emoji_problem(value: str) -> str | None:
    text = value.strip()
    if not text:
        return None  # an empty emoji field takes the default emoji
    if SHORTCODE.search(text) or re.search(r"[A-Za-z]", text):
        return f"must be emoji characters like ☕ or 🛏️, not words or :shortcodes: ({value!r})"
    if not EMOJI_ONLY.fullmatch(text) or PICTOGRAPH.search(text) is None:
        return f"must be emoji characters like ☕ or 🛏️, nothing else ({value!r})"
    return None


def _person_problem(request: Ask, answer: BaseModel) -> str | None:
    """A resident answering in their own voice must not speak of themself by name."""
    if request.purpose not in SPOKEN:
        return None
    # Who speaks: the answer question's `name`, the utterance question's `speaker`.
    name = getattr(request.context, "name", None) or getattr(request.context, "speaker", None) \
        or request.agent
    if not name:
        return None
    names = sorted({name, name.split()[0]}, key=len, reverse=True)
    pattern = re.compile(r"(?:^|[.!?]\s+)(?:" + "|".join(map(re.escape, names)) + r")(?:'s)?\s+(?:"
                         + "|".join(THIRD_PERSON_VERBS) + r")\b")
    if pattern.search(str(getattr(answer, "text", ""))):
        return (f"text speaks of {name.split()[0]} in the third person; answer as "
                f"{name.split()[0]} in the first person (\"I ...\")")
    return None


# --- what each template shows as its example ---------------------------------------------------


def _source(purpose: str) -> str:
    """A purpose's template as written ("" for a purpose without one, such as a test's)."""
    return template(purpose).template if (PROMPT_DIR / f"{purpose}.txt").exists() else ""


@cache
def _own_text(purpose: str) -> str:
    """A template's own text, its placeholders left out."""
    if not _source(purpose):
        return ""
    head, rest = pieces(purpose)
    return "\n".join([head, *(chunk for _, chunk in rest)])


@cache
def template_examples(purpose: str) -> tuple[str, ...]:
    """The example values a template shows (quoted strings that are not JSON keys), without
    those that hold a placeholder."""
    return tuple(dict.fromkeys(value for value, key in QUOTED.findall(_source(purpose))
                               if not key and value and "$" not in value))


def situation_words(request: Ask) -> frozenset[str]:
    """The words the filled-in values brought to a prompt: its words beyond the template's own
    (a repair request is judged by the prompt it repairs)."""
    prompt = request.prompt
    repair_head = pieces("repair")[1][0][1]  # the text after the repaired prompt
    if repair_head.strip() and repair_head in prompt:
        prompt = prompt[: prompt.rindex(repair_head)]
    return frozenset(Counter(_words(prompt)) - Counter(_words(_own_text(request.purpose))))


def example_specifics(purpose: str, situation: frozenset[str],
                      ) -> list[tuple[str, frozenset[str], frozenset[str]]]:
    """(example value, its specific words, its names) for each example value of a template.
    Its names are its capitalised words the situation does not bring (the invented people and
    places). Its specific words are its uncommon words, but none when the situation brings any
    of them: an example about the same thing as the situation (a stove, when the stove is
    burning) shows an answer that may be right here too."""
    found = []
    for value in template_examples(purpose):
        words = [word for word in re.findall(r"[A-Za-z][A-Za-z']+", value)
                 if word.lower() not in COMMON_WORDS]
        lowered = {word.lower() for word in words}
        names = {word.lower() for word in words if word[0].isupper()
                 and not word.lower().startswith("i'")} - situation
        specific = frozenset() if lowered & situation else frozenset(lowered)
        if specific or names:
            found.append((value, specific, frozenset(names)))
    prose = template_names(purpose) - situation  # the invented person introduced in prose
    if prose:
        found.append(("the example's invented names", frozenset(), prose))
    return found


@cache
def template_names(purpose: str) -> frozenset[str]:
    """Names a template's text gives inside a sentence (capitalised, not all capitals, not
    first in a line or sentence): the invented people and places of its example."""
    text = _own_text(purpose)
    names = set()
    for match in re.finditer(r"[A-Za-z][A-Za-z']+", text):
        word, before = match.group(), text[: match.start()].rstrip(" ")
        if word[0].isupper() and not word.isupper() and before and before[-1] not in '.!?:{["\n' \
                and word.lower() not in COMMON_WORDS and not word.lower().startswith("i'"):
            names.add(word.lower())
    return frozenset(names)


def _copy_problem(value: str, specifics: list[tuple[str, frozenset[str], frozenset[str]]],
                  ) -> str | None:
    """A reply copies an example when it names the example's invented people or places, or
    shares two thirds of an example value's specific words (at least two)."""
    words = set(_words(value))
    for example, specific, names in specifics:
        shared = words & specific
        if words & names or (len(shared) >= 2 and 3 * len(shared) >= 2 * len(specific)):
            return (f"copies the example from the instructions ({value[:60]!r} repeats "
                    f"{example[:60]!r}); answer for this case")
    return None


@cache
def template_phrases(purpose: str) -> frozenset[tuple[str, ...]]:
    """Runs of ECHO_WORDS words of a template's instructions (its fixed text, without the
    example values, which `_copy_problem` judges against the situation)."""
    text = QUOTED.sub(lambda m: " | " if not m.group(2) else m.group(), _source(purpose))
    return frozenset().union(*(_runs(chunk) for chunk in re.split(r"\$\{?\w+\}?|[|{}]", text)))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _runs(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i:i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)}
