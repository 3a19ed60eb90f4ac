"""What the offline model's conversations, interviews and reflections share: names and news in
memories, and turning a sentence about oneself into one's own words and back.

Like the rest of the offline model this is not a language model: it recombines the memories
in the structured context with fixed sentence patterns, deterministically for a given seed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from townbot.llm.offline.words import first_singular, third_singular

NEWS_THRESHOLD = 6
PERSON = re.compile(r"\b([A-Z][a-z]+ [A-Z][a-z]+)\b")
PLACE_WORDS = frozenset("Cafe Park College Market Pharmacy Store Pub Hill Crown Supply Oak Day "
                        "Street Lane Road Row Alley Willows Valentine".split())
HEARD_FROM = re.compile(r"\s*\(heard from [^)]*\)\s*$")
AI_QUESTION = re.compile(r"\b(ai|a bot|robot|computer|program|simulat|real person|human|agent)",
                         re.IGNORECASE)


# A verb joined to an earlier one about the same subject: "... and wonders who ...", "... and
# cares deeply", "... and has strong opinions".
JOINED_VERB = re.compile(r"\b(and|but|then|or) (has|is|does|\w+s(?= (?:who|what|whether|how|about|"
                         r"to|that|if|when|where|why|the|a|an|my|it|for|on|in|with|at|\w+ly|"
                         r"nothing|everything|everyone|people|more|most|all|some|this|these|"
                         r"those|them|him|her|his|their)\b)) ")


PLAIN_JOINED_VERB = re.compile(
    r"\b(and|but|or) (?!(?:then|also|just|still|now|so|not|they|their|I)\b)(have|do|\w{3,}[^s\W]"
    r"(?= (?:who|what|whether|how|about|to|that|if|when|where|why|the|a|an|it|for|on|in|with|"
    r"at|\w+ly|nothing|everything|everyone|people|more|most|all|some|this|these|those|them|"
    r"him|her|his|my)\b)) ")


def first_person(text: str, speaker: str) -> str:
    """'Sam Moore intends to run' said by Sam -> 'I intend to run'."""
    about_self = text.startswith(speaker)
    swaps = [(f"{speaker} is ", "I'm "), (f"{speaker} will ", "I'll "), (f"{speaker} has ", "I've "),
             (f"{speaker}'s ", "my ")]
    if about_self:  # the rest of a sentence about oneself is about oneself too
        swaps += [(" her ", " my "), (" his ", " my ")]
        text = re.sub(r"\b(?:she|he) (\w+)", lambda m: "I " + first_singular(m.group(1)), text)
        text = JOINED_VERB.sub(lambda m: f"{m.group(1)} {first_singular(m.group(2))} ", text)
    for old, new in swaps:
        text = text.replace(old, new)

    def singular(match: re.Match[str]) -> str:
        return "I " + (match.group(1) or "") + first_singular(match.group(2))

    # "Abigail Chen sometimes asks" -> "I sometimes ask": the verb after an adverb too.
    return re.sub(rf"\b{re.escape(speaker)} ((?:sometimes|often|always|usually|never|also|"
                  rf"rarely|really|still|just|\w+ly) )?(\w+)", singular, text)


def third_person(text: str, speaker: str, pronoun: str = "they") -> str:
    """The reverse, for remembering what someone said about themselves: the first mention
    becomes the speaker's name, later ones the speaker's pronoun ('she', 'he', 'they')."""
    named = False
    single = pronoun in ("she", "he")
    they, possessive = pronoun, {"she": "her", "he": "his"}.get(pronoun, "their")

    def who(match: re.Match[str]) -> str:
        nonlocal named
        word, rest = match.group(1), match.group(2) or ""
        first, named = not named, True
        opens = match.string[:match.start()].rstrip().endswith((".", "!", "?")) \
            or match.start() == 0  # a sentence: "She is..."
        pronoun, their = (said.capitalize() if opens else said for said in (they, possessive))
        if word in ("I'm", "I'll", "I've"):
            verb = {"I'm": "is" if first or single else "are", "I'll": "will",
                    "I've": "has" if first or single else "have"}[word]
            return f"{speaker if first else pronoun} {verb}{rest}"
        if word.lower() == "my":
            return f"{speaker}'s{rest}" if first else f"{their}{rest}"
        verb = rest.strip()
        if not verb:
            return speaker if first else pronoun
        if first or single:
            return f"{speaker if first else pronoun} {third_singular(verb)}"
        return f"{pronoun} {verb}"

    converted = re.sub(r"\b(I'm|I'll|I've|[Mm]y|I)\b( \w+)?", who, text)
    if re.match(r"(I'm|I'll|I've|I)\b", text):  # "... and wonder who" -> "... and wonders who"
        converted = PLAIN_JOINED_VERB.sub(lambda m: f"{m.group(1)} {third_singular(m.group(2))} ",
                                          converted)
    return converted


DOING = re.compile(r"^[A-Z][\w'-]+ [A-Z][\w'-]+ is (still )?\w+ing\b")
DATED = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|"
                   r"November|December) \d{1,2}\b")
INTENDING = re.compile(r" is (going|planning|hoping|about) to ")
FORWARD_LOOKING = re.compile(r"\b(intends?|plans? to|planning|will|going to|hopes?|invit\w*|"
                             r"run for|running for|announc\w*|party|coming up)\b", re.IGNORECASE)


def is_news(text: str, score: Callable[[str], int]) -> bool:
    """Worth passing on: important, and either heard from someone or about what is coming."""
    if any(marker in text for marker in (" talked with ", " is talking with ", " reacted to ",
                                         " said to ", " said: ", " asked ", "Announcement:",
                                         " knows that ", " taking in: ")):
        return False
    if DOING.match(text) and not INTENDING.search(text) and not DATED.search(text):
        return False  # "Ryan Park is reading tech news": a sight, not news (unless it has a date)
    return score(text) >= NEWS_THRESHOLD and ("(heard from" in text
                                               or FORWARD_LOOKING.search(text) is not None)


def owned(text: str, owner: str) -> str:
    """'her easel' (or his, their, my) as `owner`'s: 'my easel', 'your easel'."""
    return re.sub(r"\b(?:her|his|their|my)\b", owner, text)


def clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


ASKED_TIME = re.compile(r"\b(noon|midnight|(\d{1,2})(?::(\d{2}))?\s*(am|pm))\b", re.IGNORECASE)
PLAN_LINE = re.compile(r"^(\d{1,2}):(\d{2}) (am|pm) to (\d{1,2}):(\d{2}) (am|pm): (.+)$")


TIME_RANGE = re.compile(r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*(?:to|until|till|-)\s*"
                        r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)", re.IGNORECASE)


def _minute(hour: str, minute: str | None, meridian: str) -> int:
    value = int(hour) % 12 + (12 if meridian.lower() == "pm" else 0)
    return value * 60 + int(minute or 0)
