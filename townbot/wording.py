"""Plain-English helpers shared by the mind and the offline model."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from townbot.prompting import quoted

# Verbs that may open a later clause of a plan line ("open the cafe and serve coffee").
CLAUSE_VERBS = frozenset((
    "clear fix repair switch mop wipe put open turn remake finish "
    "add animate answer arrange attend bake brew bring brush buy call carry catch chat check "
    "chop clean close cook count do draw dress drink eat edit feed fill finish fix gather get "
    "go grab grade greet hang have head help hold host introduce join jump keep lead listen "
    "lock look make mark meet mingle mop mount notate open pack paint perform photograph pick plan "
    "play pour practice practise prep prepare print prune read rehearse relax render reorganize "
    "research restock return review revise rework run rush say send serve set shave shoot shop "
    "shower sit sketch sort spend start stock stop stream stretch study sweep take talk teach "
    "tend test tidy tinker train try unlock unwind visit wake walk wash watch water weed wipe "
    "work write "
).split())


@cache
def inflected(lemma: str, tag: str) -> str | None:
    """The form of a verb the lemminflect table gives for a Penn tag ('VBG': 'fix' -> 'fixing',
    'VBZ': 'watch' -> 'watches'), or None for a word it does not know as a verb."""
    from lemminflect import getInflection  # its table loads on first use (see warm_up)

    forms = getInflection(lemma, tag=tag, inflect_oov=False)
    return forms[0] if forms else None


def warm_up() -> None:
    """Load the inflection table now (a one-off fifth of a second) rather than mid-tick."""
    inflected("be", "VBG")


def gerund(verb: str) -> str:
    """'get' -> 'getting', 'serve' -> 'serving', 'tie' -> 'tying', 'host' -> 'hosting': the
    inflection table's form; a word it does not know keeps the plain rule."""
    lowered = verb.lower()
    found = inflected(lowered, "VBG")
    if found:
        return verb[:1] + found[1:] if verb[:1].isupper() else found
    if lowered.endswith("e") and not lowered.endswith(("ee", "ye", "oe")) and len(lowered) > 2:
        return verb[:-1] + "ing"
    return verb + "ing"


ALREADY_GOING = frozenset("still just also now busy".split())  # "still watering the plants"


def _is_progressive(words: list[str]) -> bool:
    """Whether a phrase already says what someone is doing: it opens with an -ing form of a
    verb, or with 'still'/'just' and one."""
    rest = list(words)
    while len(rest) > 1 and rest[0] in ALREADY_GOING:
        rest = rest[1:]
    return rest[0].endswith("ing") and inflected(rest[0], "VBG") is None  # "bring" is a verb


OBJECT_OPENERS = frozenset("the a an my his her their some up down out".split())


def _opens_clause(word: str, following: list[str]) -> bool:
    """A verb after 'and' or a comma: a known clause verb, or any word the inflection table
    knows as a verb when an object follows it ('weed and plant the beds')."""
    if word in CLAUSE_VERBS:
        return True
    return bool(following) and following[0].lower() in OBJECT_OPENERS \
        and inflected(word, "VBG") is not None


def progressive(phrase: str) -> str:
    """Turn a plan's imperative ('open the cafe, then serve') into what follows 'X is ...'.

    The verb opening each clause takes its -ing form from the inflection table; a phrase that
    already starts with one ('still watering') is left as it is. 'teach the morning lecture'
    becomes 'teaching the morning lecture' (a later -ing word is no sign it was done already).
    """
    words = phrase.split()
    bare_words = [w.lower().rstrip(",.;:") for w in words]
    if not words or _is_progressive(bare_words):
        return phrase
    if bare_words[0] in ("keep", "continue") and len(words) > 1 and _is_progressive(bare_words[1:]):
        return " ".join(["still", *words[1:]])  # "keep writing" -> "still writing"
    for index, word in enumerate(words):
        bare = word.rstrip(",.;:")
        after_joint = index > 0 and (words[index - 1] in ("and", "then")
                                     or words[index - 1].endswith(","))
        if index == 0 or (after_joint and _opens_clause(bare.lower(), words[index + 1:index + 2])):
            words[index] = gerund(bare) + word[len(bare):]
    return " ".join(words)


INNER_VOICE_LIMIT = 400  # a 300-character whisper grows a little when "you" becomes a name


def inner_voice(text: str, name: str) -> str:
    """What a resident's inner voice says, as the resident's own thought in the third person,
    and quoted, since a person wrote it: every prompt that shows the memory shows it quoted and
    bounded. "You are going to run for mayor" -> 'John Lin thinks: "John Lin is going to run
    for mayor"'."""
    first = name.split()[0]
    swaps = [("You are ", f"{name} is "), ("You're ", f"{name} is "), ("you are ", f"{first} is "),
             ("you're ", f"{first} is "), ("You will ", f"{name} will "), ("Your ", f"{first}'s "),
             (" your ", f" {first}'s "), (" yourself", " himself or herself"), ("You ", f"{name} "),
             (" you ", f" {first} ")]
    thought = " ".join(text.split())
    for old, new in swaps:
        thought = thought.replace(old, new)
    # "You want to bake" became "Isabella Rodriguez want to bake": the verb agrees with the name.
    thought = re.sub(rf"^({re.escape(name)}) ([a-z]+)\b",
                     lambda m: f"{m.group(1)} {inflected(m.group(2), 'VBZ') or m.group(2)}"
                     if not m.group(2).endswith("s") else m.group(0), thought)
    return f"{name} thinks: {quoted(thought, INNER_VOICE_LIMIT)}"


def plural(count: int, noun: str, many: str | None = None) -> str:
    """'1 person', '2 people' (with many='people'), '3 residents'."""
    return f"{count:g} {noun if count == 1 else many or noun + 's'}"


def text_table(headers: list[str], rows: list[list[str]], right: frozenset[int] = frozenset(),
               measure: Callable[[str], int] = len) -> str:
    """Columns padded to their widest cell (as `measure` counts a cell's width on screen); the
    columns in `right` (by index) aligned right; no header line when `headers` is empty."""
    table = [headers, *rows] if headers else rows
    widths = [max(measure(str(cell)) for cell in column) for column in zip(*table, strict=True)]

    def line(cells: list[str]) -> str:
        pads = [" " * (w - measure(str(c))) for c, w in zip(cells, widths, strict=True)]
        padded = [pad + str(c) if i in right else str(c) + pad
                  for i, (c, pad) in enumerate(zip(cells, pads, strict=True))]
        return "  ".join(padded).rstrip()

    return "\n".join(line(cells) for cells in table)
