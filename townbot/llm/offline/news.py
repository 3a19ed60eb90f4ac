"""What the offline model counts as news in talk: what a line passes on (what follows a news
opener), what a memory holds as it would be told, and when two texts are the same news. The
speaker (talk.py) reads it to know what to tell; the listener's takeaways
(purposes/takeaways.py) are what the other passed on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING

from townbot.llm.offline.social import HEARD_FROM, PERSON, PLACE_WORDS, clip, is_news, third_person
from townbot.llm.offline.words import alternatives

if TYPE_CHECKING:  # the purposes import this module: the type is for reading only
    from townbot.llm.purposes.common import Recalled

Scorer = Callable[[str], int]


@cache
def opener_pattern() -> re.Pattern[str]:
    """What comes before {news} in every news line, as one pattern: the listener's takeaways
    are what follows it."""
    heads = []
    for bank in ("share_news", "share_own"):
        for template in alternatives(bank):
            head = template.split("{news}")[0]
            heads.append(re.escape(head).replace(re.escape("{partner}"), r"[A-Z][\w'-]*"))
    return re.compile("|".join(sorted(set(heads), key=len, reverse=True)))


def first_of(name: str) -> str:
    """'Maria Lopez' (or '"Maria Lopez"') -> 'Maria'."""
    return name.strip('"').split()[0]


def news_key(text: str, said_by: str = "") -> frozenset[str]:
    """What makes two texts the same news: the people it names (the one saying it, when it is
    said in the first person) and its event word."""
    names = {w.split()[0] for w in PERSON.findall(text) if not set(w.split()) & PLACE_WORDS}
    names |= set(re.findall(r"\b([A-Z][a-z]+)'s\b", text)) - {"Valentine"}
    if said_by and re.search(r"\b(I|I'm|I've|I'll|my)\b", text):
        names.add(first_of(said_by))
    events = {m.lower() for m in re.findall(r"\b(party|mayor|election|exhibition|concert)", text,
                                            re.IGNORECASE)}
    return frozenset(names | events)


NEWS_EVENTS = frozenset({"party", "mayor", "election", "exhibition", "concert"})


def same_news(a: frozenset[str], b: frozenset[str]) -> bool:
    """About the same event, and naming the same person where both name one ("I intend to run
    for mayor" said by Sam is Sam's candidacy)."""
    names_a, names_b = a - NEWS_EVENTS, b - NEWS_EVENTS
    return bool(a & b & NEWS_EVENTS) and (not names_a or not names_b or bool(names_a & names_b))


KNOWS_THAT = re.compile(r"^[A-Z][\w'-]+ [A-Z][\w'-]+ knows that ")


TRANSCRIPT = re.compile(r"^([A-Z][\w'-]+ [A-Z][\w'-]+) talked with ([A-Z][\w'-]+ [A-Z][\w'-]+) at ")


def news_of(memory: Recalled, score: Scorer) -> tuple[str, str] | None:
    """The news a memory holds as it would be told, and whom it came from ('' when not said):
    a fact heard or an intention; what a reflection says the speaker knows ('Arthur knows that
    Isabella intends to host...'); what the other passed on in a remembered talk."""
    text = memory.text
    talk = TRANSCRIPT.match(text)
    if talk:
        partner = talk.group(2)
        for segment in re.split(rf"(?=\b{re.escape(partner.split()[0])}: )", text)[1:]:
            # Their line only: up to the next speaker's label, so that news someone else
            # told in the same talk is never put in their mouth.
            own = re.split(r"(?<=[.!?…]) [A-Z][\w'-]+: ", segment.split(": ", 1)[-1])[0]
            told = news_in(own)
            if told:
                content = third_person(told, partner)
                if is_news(content, score):
                    return content, partner
        return None
    source = re.search(r"\(heard from ([^)]*)\)", text)
    if memory.kind == "reflection" and KNOWS_THAT.match(text):
        rest = KNOWS_THAT.sub("", text)
        text = rest[:1].upper() + rest[1:]
    elif memory.kind in ("plan", "reflection"):
        return None
    if not is_news(text, score):
        return None
    return HEARD_FROM.sub("", text), source.group(1) if source else ""


def news_in(text: str) -> str | None:
    """The news a line passes on (what follows its opener), or None."""
    match = opener_pattern().search(text)
    return text[match.end():].strip() if match else None


def news_only(piece: str) -> str:
    """The news at the start of what followed an opener, without a farewell after it."""
    piece = piece.strip()
    for bank in ("farewell_back_to", "farewell_party", "farewell_reply"):
        for template in alternatives(bank):
            head = template.split("{")[0]
            if len(head) > 6 and head in piece:
                piece = piece[:piece.index(head)].strip()
    return piece


def passed_on(lines: Iterable[tuple[str, str]], partner: str, pronoun: str,
              score: Scorer) -> list[str]:
    """Each piece of news `partner` passed on in the lines (speaker, text): what follows a
    news opener, up to the end of its sentence group (a farewell after it is not news), told
    of them as `pronoun`, with whom it was heard from."""
    facts: list[str] = []
    for speaker, text in lines:
        if speaker != partner:
            continue
        for piece in opener_pattern().split(text)[1:]:
            content = third_person(news_only(piece), partner, pronoun)
            fact = clip(f"{content} (heard from {partner})")
            if content and is_news(content, score) and fact not in facts:
                facts.append(fact)
    return facts
