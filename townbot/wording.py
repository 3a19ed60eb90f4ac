"""Plain-English helpers shared by the mind and the offline model."""

from __future__ import annotations

from collections.abc import Callable

from townbot.prompting import quoted

# One-syllable verbs that double their last letter before -ing ("get" -> "getting").
DOUBLED_FINAL = frozenset((
    "begin chat chop cut dig drop get grab hit hug jog jot let mop nap pat plan plug pop prep "
    "put run scan set shop sip sit skip spin stir stop swim tap trim wrap "
).split())
# Verbs that may open a later clause of a plan line ("open the cafe and serve coffee").
CLAUSE_VERBS = frozenset((
    "clear fix repair switch mop wipe put open turn remake finish "
    "add animate answer arrange attend bake brew bring brush buy call carry catch chat check "
    "chop clean close cook count do draw dress drink eat edit feed fill finish fix gather get "
    "go grab grade greet hang have head help hold host introduce join jump keep lead listen "
    "lock look make mark meet mop mount notate open pack paint perform photograph pick plan "
    "play pour practice practise prep prepare print prune read rehearse relax render reorganize "
    "research restock return review revise rework run say send serve set shave shoot shop "
    "shower sit sketch sort spend start stock stop stream stretch study sweep take talk teach "
    "tend test tidy tinker train try unlock unwind visit wake walk wash watch water weed wipe "
    "work write "
).split())


def gerund(verb: str) -> str:
    """'get' -> 'getting', 'serve' -> 'serving', 'tie' -> 'tying', 'read' -> 'reading'."""
    if verb in DOUBLED_FINAL:
        return verb + verb[-1] + "ing"
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")) and len(verb) > 2:
        return verb[:-1] + "ing"
    return verb + "ing"


def progressive(phrase: str) -> str:
    """Turn a plan's imperative ('open the cafe, then serve') into what follows 'X is ...'.

    A phrase that already starts with an -ing word is left as it is.
    """
    words = phrase.split()
    bare_words = [w.lower().rstrip(",.;:") for w in words]
    if not words or bare_words[0].endswith("ing") or any(  # "still watering"
            len(w) >= 5 and w.endswith("ing") for w in bare_words[1:3]):
        return phrase
    for index, word in enumerate(words):
        bare = word.rstrip(",.;")
        after_joint = index > 0 and (words[index - 1] in ("and", "then")
                                     or words[index - 1].endswith(","))
        if index == 0 or (after_joint and bare.lower() in CLAUSE_VERBS):
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
