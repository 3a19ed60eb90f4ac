"""The offline model's conversations: each line from who the two are to each other, where they
are, what each is doing and what the speaker already knows, in words from phrases.yaml.

Strangers introduce themselves; friends greet by name and bring up something they share; at an
event they talk about the event, and its host hosts. News is passed on only to someone who has
not told it, is not at it and has not mentioned it; news one knew is met with where one heard
it, never with surprise; a party with a time is accepted, one without is asked about once. A
talk ends for a reason (back to what one was doing, off to the food), never right after the
greeting. What follows a news opener is the news whole, so that the listener's takeaways
(purposes/takeaways.py) are the remembered text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from townbot.llm.offline.news import first_of, news_in, news_key, news_of, same_news
from townbot.llm.offline.social import (
    DATED,
    HEARD_FROM,
    PERSON,
    PLACE_WORDS,
    TIME_RANGE,
    _minute,
    clip,
    first_person,
    is_news,
    owned,
    third_person,
)
from townbot.llm.offline.words import alternatives, banks, say
from townbot.wording import progressive

if TYPE_CHECKING:  # the purposes import this module: the type is for reading only
    from townbot.llm.purposes.common import Recalled

Scorer = Callable[[str], int]
Line = tuple[str, str]


class Spoken(NamedTuple):
    """One line of talk, and whether it ends the talk."""

    text: str
    end: bool


EVENT_WORDS = re.compile(r"\b(party|celebration|gathering|exhibition|concert|opening)\b",
                         re.IGNORECASE)
EVENT_NAME = re.compile(r"((?:[A-Z][\w']*\s){0,3}(?:party|celebration|exhibition|concert))")
HOSTING = re.compile(r"^([A-Z][a-z]+ [A-Z][a-z]+) (?:(?:intends|plans|is planning|will|hopes|"
                     r"is going) to (?:host|throw|hold|give)|is hosting|is throwing|hosts)\b")
EVENT_ACTIVITY = re.compile(r"^(?:host|attend)\b.*\b(?:party|celebration|exhibition|concert)",
                            re.IGNORECASE)
PLAN_TIME = re.compile(r"^\d{1,2}:\d\d [ap]m: ")
TALKED_AT = re.compile(r" talked with (?:[A-Z][\w'-]+ ?)+ at ([^:.]+)")
IDLE = re.compile(r"^(talking|chatting|sleeping|walking|in a conversation)|\bconversation\b")
ASK_GOING = re.compile(r"\b(?:going to|coming to|see you at|told you about) (my|the|[A-Z][\w-]*'s) "
                       r"([^?]*)\?")
CLOCK = re.compile(r"\b(\d{1,2}):(\d\d) ?([ap]m)\b", re.IGNORECASE)


def _clock_minute(face: str) -> int:
    """'7:20 pm' (or a text ending in one) -> 1160."""
    found = CLOCK.findall(face)[-1]
    return _minute(*found)


@dataclass(frozen=True)
class TalkView:
    """What the speaker of the next line has in mind, as the offline model reads it (from the
    utterance's question, or from each side of a whole conversation's)."""

    speaker: str
    partner: str
    history: list[Line] = field(default_factory=list)
    memories: list[Recalled] = field(default_factory=list)
    speaker_action: str = ""
    partner_action: str = ""
    relationship: str = ""
    place: str = ""
    moment: str = ""
    already_said: list[str] = field(default_factory=list)
    seed: int = 0
    plans: tuple[str, ...] = ()  # today's plan blocks, when the context has them
    known: tuple[Recalled, ...] = ()  # news it knows beside the memories retrieved

    @property
    def recalled(self) -> list[Recalled]:
        """Everything the speaker has in mind: the memories retrieved for this line, then the
        news it knows (what it was told, today's and tomorrow's events). What it knows is
        read from all of it; what it brings up, from the retrieved memories alone."""
        texts = {m.text for m in self.memories}
        return self.memories + [m for m in self.known if m.text not in texts]

    def planned_event(self) -> tuple[str, str]:
        """The event today's plan has the speaker attend or host later, and when it begins
        (two '' when none); a plan line reads '5:00 pm: attend the Valentine's Day party'."""
        now = self.minute
        for line in self.plans:
            when, _, activity = line.rpartition(": ") if PLAN_TIME.match(line) else ("", "", line)
            if EVENT_ACTIVITY.match(activity) and not (
                    now is not None and when and _clock_minute(when) <= now):
                return _event_of(activity), when
        return "", ""

    @property
    def minute(self) -> int | None:
        """The minute of the day the talk is at ('..., 7:20 pm' -> 1160), None if not said."""
        return _clock_minute(self.moment) if CLOCK.search(self.moment) else None

    def is_over(self, text: str) -> bool:
        """Whether a dated event ('on February 14, from 5 pm until 7 pm') has ended by now."""
        dated, timed, today = DATED.search(text), TIME_RANGE.search(text), DATED.search(self.moment)
        if not dated or not today or dated.group(1) != today.group(1):
            return False
        day, this_day = int(dated.group(0).split()[1]), int(today.group(0).split()[1])
        if day != this_day or not timed or self.minute is None:
            return day < this_day
        return _minute(timed.group(4), timed.group(5), timed.group(6)) <= self.minute

    def plans_event(self) -> str:
        return self.planned_event()[0]

    @property
    def me(self) -> str:
        return first_of(self.speaker)

    @property
    def you(self) -> str:
        return first_of(self.partner)

    @property
    def turn(self) -> int:
        return len(self.history)

    @property
    def knows_partner(self) -> bool:
        if "does not know" in self.relationship:
            return False
        return bool(self.relationship) or any(self.partner in m.text for m in self.memories)

    def say(self, bank: str, *more: object, **slots: str) -> str:
        """One alternative of a phrase bank, chosen by who says it to whom, when, at which turn."""
        return say(bank, self.seed, self.speaker, self.partner, self.moment, self.turn, *more,
                   **slots)


STEP_FRAMES = (re.compile(r"^(?:getting ready to|getting back to it:|getting back to|still|"
                          r"wrapping up|finishing up|"
                          r"finishing off:?|continuing to|continue to|finish off:)\s*\(?"),
               re.compile(r"\)$"))
PAUSES = re.compile(r"^(taking a|taking it easy|pausing|looking over|tidying up the work|jotting|"
                    r"checking messages|stepping back|washing the dishes|getting \w+ ready|catching a|"
                    r"stopping for|stretching for|wiping a brow)")


def core_activity(action: str) -> str:
    """What someone is at, without the step's frame: 'still painting' and 'getting ready to
    paint' are both 'painting'; '' for a pause, a talk or sleep."""
    action = action.strip().rstrip(".")
    for frame in (*STEP_FRAMES, *STEP_FRAMES):  # "finishing up (still writing)": both frames
        action = frame.sub("", action).strip()
    if not action or IDLE.search(action) or PAUSES.search(action):
        return ""
    return progressive(action)


def _doing(action: str) -> str:
    """One's own action as it reads after 'I'm': 'her poem' -> 'my poem'."""
    return owned(core_activity(action), "my")


def _your(action: str) -> str:
    """The listener's action as the speaker names it: 'painting at her easel' -> 'painting at
    your easel'."""
    return owned(core_activity(action), "your")


def _event_of(text: str) -> str:
    match = EVENT_NAME.search(text)
    return match.group(1).strip() if match else "party"


@dataclass(frozen=True)
class Event:
    """An event the speaker knows of: what, whose, and the memory that says so."""

    name: str
    host: str
    text: str
    timed: bool


def _events(view: TalkView, on_mind: bool = False) -> list[Event]:
    """The events the speaker knows of, timed first; `on_mind`: only those in the memories
    retrieved for this line (what it would bring up unasked)."""
    found = []
    for memory in view.memories if on_mind else view.recalled:
        text = HEARD_FROM.sub("", memory.text)
        host = HOSTING.match(text)
        if host and EVENT_WORDS.search(text):
            found.append(Event(_event_of(text), host.group(1), text,
                               bool(DATED.search(text) and TIME_RANGE.search(text))))
    return sorted(found, key=lambda e: not e.timed)


def _hosting(action: str) -> bool:
    """A host's step ('hosting the party', 'welcoming the first guests'), not a guest's
    ('greeting the host', 'thanking the host')."""
    return bool(re.search(r"\bhost(?:s|ing)?\b|\bwelcoming|\bthe guests\b|\bintroducing guests|"
                          r"\bsetting out the food", action)) \
        and not re.search(r"\bthe host\b", action)


def _at_event(action: str) -> bool:
    """Whether an action is a host's or a guest's at an event (not getting ready for one)."""
    return bool(re.search(r"\b(party|guests|celebration)\b", action, re.IGNORECASE)) \
        and not re.match(r"getting ready", action)


def _guest(view: TalkView) -> str:
    """Someone else the speaker remembers seeing lately (for 'did you see X is here?')."""
    for memory in view.memories:
        for name in PERSON.findall(memory.text):
            if name not in (view.speaker, view.partner) and not set(name.split()) & PLACE_WORDS:
                return first_of(name)
    return ""


def _knew(view: TalkView, news: str) -> tuple[bool, str]:
    """Whether the speaker had this news already, and from whom ('' when not remembered)."""
    key = news_key(news)
    for memory in view.recalled:
        if memory.kind == "plan" or not same_news(key, news_key(memory.text)):
            continue
        source = re.search(r"\(heard from ([^)]*)\)", memory.text)
        if source and source.group(1) != view.partner:
            return True, first_of(source.group(1))
        talked = re.match(r"[A-Z][\w'-]+ [A-Z][\w'-]+ talked with ([A-Z][\w'-]+ [A-Z][\w'-]+)",
                          memory.text)
        if talked and talked.group(1) != view.partner:
            return True, first_of(talked.group(1))
        return True, ""
    return False, ""


def _partner_knows(view: TalkView, content: str) -> bool:
    """The listener already has this news: told it, mentioned it, or is at the event."""
    key = news_key(content)
    if any(same_news(key, news_key(text, speaker)) for speaker, text in view.history
           if not (speaker == view.speaker and ASK_GOING.search(text))
           and not (text.rstrip().endswith("?") and not ASK_GOING.search(text))):
        return True  # told or mentioned in this talk, by either (a question is not telling)
    if any(same_news(key, news_key(text, view.speaker)) for text in view.already_said
           if not ASK_GOING.search(text)):
        return True
    if any(same_news(key, news_key(m.text)) for m in view.recalled
           if m.kind == "conversation" and f"talked with {view.partner}" in m.text):
        return True  # it came up when we last talked
    return "party" in key and _at_event(view.partner_action)


def _weightiest(memories: list[Recalled]) -> list[Recalled]:
    """The most important first; of equal importance, those with a date."""
    return sorted(memories, key=lambda m: (-m.importance, not DATED.search(m.text)))


def _shareable(view: TalkView, score: Scorer) -> str | None:
    """The most important news not yet told to this listener and not theirs: as a line."""
    from_partner = [news_key(m.text) for m in view.recalled
                    if f"(heard from {view.partner})" in m.text]
    for memory in _weightiest(view.memories):
        found = news_of(memory, score)
        if found is None or found[0].startswith(view.partner) or found[1] == view.partner:
            continue  # nobody is told their own news, or news they told us
        content = found[0]
        key = news_key(content)
        if any(same_news(key, heard) for heard in from_partner):
            continue
        if any(content[:40] in said or first_person(content, view.speaker)[:40] in said
               for said in view.already_said) or _partner_knows(view, content):
            continue
        told = _ask_or_share(view, _tell(view, content, content[:20]), content)
        if told:
            return told
    return None


def _react_to_news(view: TalkView, news: str, asked_when: bool) -> str:
    """Surprise at news one did not have; where one heard news one had; accept a party with a
    time, ask once about one without."""
    about = third_person(news, view.partner)
    host = HOSTING.match(about)
    knew, source = _knew(view, about)
    if re.search(r"\bparty\b", news, re.IGNORECASE):
        timed = bool(DATED.search(news) and TIME_RANGE.search(news))
        if view.plans_event() or knew and (timed or any(e.timed for e in _events(view))):
            return view.say("already_going", partner=view.you)
        if timed:
            return view.say("accept", partner=view.you,
                            host=first_of(host.group(1)) if host else view.you)
        if not asked_when:
            return view.say("ask_when", partner=view.you)
    if knew:
        return view.say("news_known", partner=view.you, source=source)
    return view.say("news_new", partner=view.you)


def _answer_when(view: TalkView) -> str | None:
    """The dated memory of the event asked about, passed on whole."""
    timed = [e for e in _events(view) if e.timed]
    if not timed:
        return None
    return _tell(view, timed[0].text)


def _tell(view: TalkView, news: str, *key: object) -> str:
    """A line passing on news; one's own in the first person."""
    if news.startswith(view.speaker):
        return view.say("share_own", *key, partner=view.you,
                        news=first_person(news, view.speaker))
    return view.say("share_news", *key, partner=view.you, news=news)


def _opening(view: TalkView) -> str:
    doing = _doing(view.speaker_action)
    you_doing = _your(view.partner_action)
    if _at_event(view.speaker_action) and _at_event(view.partner_action):
        return _party_line(view, opening=True)
    if not view.knows_partner:
        return view.say("greet_stranger", me=view.me, doing=doing)
    line = view.say("greet_friend", partner=view.you)
    shared = [TALKED_AT.search(m.text) for m in view.memories
              if m.kind == "conversation" and view.partner in m.text]
    places = [m.group(1) for m in shared if m]
    pick = len(line) % 3
    if places and pick == 0:
        return f"{line} {view.say('shared_memory', place=places[0])}"
    if you_doing and pick == 1:
        return f"{line} {view.say('ask_about_work', doing=you_doing)}"
    return line


def _party_line(view: TalkView, opening: bool = False) -> str:
    events = _events(view)
    hosting = _hosting(view.speaker_action) or bool(events and events[0].host == view.speaker)
    host = view.me if hosting else (first_of(events[0].host) if events else "")
    guest = _guest(view)
    if hosting and opening:
        return view.say("host_talk", partner=view.you, guest=guest)
    if opening and host and host == view.you:
        return view.say("thank_host", host=host)
    bank = "party_talk" if opening else _party_reply_bank(view)
    return view.say(bank, partner=view.you, host=host or "our host", guest=guest)


PARTY_TOPICS = (("first", r"first time"), ("welcome", r"good time|need anything|you made it|"
                                                   r"for coming|you're here|you came|welcome"),
                ("food", r"food|eat|tried|pastr|tarts|cake|snack"), ("drink", r"drinks?\b"),
                ("music", r"music|song|picked it"), ("dance", r"danc"),
                ("people", r"people came|saw \w+|is here|so many|everyone in one"),
                ("room", r"decorations|lights|looks"))


def _party_reply_bank(view: TalkView) -> str:
    """The reply bank for what the other just said at a party (its food, the music...)."""
    last = view.history[-1][1] if view.history and view.history[-1][0] == view.partner else ""
    for topic, words in PARTY_TOPICS:
        if re.search(rf"\b(?:{words})", last, re.IGNORECASE):
            return f"party_reply_{topic}"
    return "party_reply"


def _first_reply(view: TalkView, last: str) -> str:
    """The answer to an opener: an introduction to a stranger, how one is to a friend."""
    doing = _doing(view.speaker_action) or "getting on with my day"
    if not view.knows_partner or re.search(r"\bI'm [A-Z]|\bmeet you|introduced|we've met",
                                           last):
        return view.say("introduce_back", partner=view.you, me=view.me, doing=doing)
    if last.rstrip().endswith("?") and re.search(r"\b(going|busy|enjoying|next|new)\b.*\?$", last):
        answer = view.say("answer_work", partner=view.you)
    else:
        answer = view.say("how_i_am", partner=view.you, doing=doing)
    own = [e for e in _events(view, on_mind=True) if not view.is_over(e.text)]
    if own and not _at_event(view.partner_action):
        event = own[0]
        if event.host == view.speaker:
            answer += " " + view.say("mention_own_event", event=event.name)
        elif event.timed and event.host == view.partner:
            answer += " " + view.say("mention_to_host", partner=view.you, event=event.name)
        elif event.timed:
            answer += " " + view.say("mention_event", host=first_of(event.host), event=event.name,
                                     place="Hobbs Cafe" if "Hobbs Cafe" in event.text else "")
    elif view.plans_event() and not _at_event(view.partner_action) and not own:
        answer += " " + view.say("mention_event", event=view.plans_event())
    return answer


def _farewell(view: TalkView) -> str:
    if _at_event(view.speaker_action):
        events = _events(view)
        host = first_of(events[0].host) if events else ""
        return view.say("farewell_party", partner=view.you, guest=_guest(view),
                        host="" if host == view.me else host)
    doing = _doing(view.speaker_action)
    if not doing:
        return view.say("farewell_reply", partner=view.you)
    return view.say("farewell_back_to", partner=view.you, doing=doing)


@cache
def _interjections() -> frozenset[str]:
    """Words that open a line before a comma and are not anyone's name ("Mm, I'd heard"):
    the openers of every phrase bank, and a few more people say."""
    openers = {t.split(",")[0] for bank in banks() for t in alternatives(bank)
               if re.match(r"[A-Z][a-z]+,", t)}
    return frozenset(openers | {"No", "Yes", "Well", "Oh", "Hi", "Hey", "So", "Sure", "Right",
                                "Okay", "Mm", "Hmm", "Ah", "Wow", "Huh", "Thanks", "Sorry"})


@cache
def _not_heard() -> re.Pattern[str]:
    """How a line saying one has not heard (enough) of an event begins, from the banks."""
    heads = [re.escape(t.split("{")[0].rstrip())
             for bank in ("not_heard_of_it", "heard_vaguely") for t in alternatives(bank)]
    return re.compile("^(" + "|".join(sorted(set(heads), key=len, reverse=True)) + ")")


def _answer_going(view: TalkView, asked: re.Match[str]) -> str:
    """Whether one is going to the event one is asked about, from what one remembers of it."""
    whose = asked.group(1)
    host = view.you if whose == "my" else "" if whose == "the" else whose[:-2]
    known = [e for e in _events(view) if (not host or first_of(e.host) == host) and e.timed]
    event = re.sub(r",\s*[A-Z][\w'-]*$", "", asked.group(2).strip())  # "party, Giorgio"
    if known or view.plans_event():
        if host == view.you:
            return view.say("mention_to_host", partner=view.you, event=event)
        return view.say("already_going", partner=view.you)
    # Heard it named (a sight of it, a mention in a talk) but not when: not going yet.
    heard = any(host in m.text and re.search(r"\bparty\b", m.text, re.IGNORECASE)
                for m in view.recalled if m.kind != "plan")
    if heard or any(event.lower() in text.lower() for text in
                    [m.text for m in view.recalled] + [t for _, t in view.history[:-1]]):
        return view.say("heard_vaguely", partner=view.you, event=event)
    return view.say("not_heard_of_it", partner=view.you)


def _asked_about(view: TalkView) -> str:
    """For an event: what the listener said when asked whether they are going ('' when not yet
    asked), so that nobody is invited to what they already said they will attend."""
    mine = [i for i, (s, t) in enumerate(view.history) if s == view.speaker and ASK_GOING.search(t)]
    if not mine:
        return ""
    later = view.history[mine[-1] + 1:]
    return later[0][1] if later else ""


def _ask_or_share(view: TalkView, line: str, content: str) -> str | None:
    """A party is first asked about ('are you going?') and told only to someone who has not
    heard of it (never at the party itself); other news is told straight away."""
    if not re.search(r"\bparty\b", content, re.IGNORECASE):
        return line
    if _at_event(view.speaker_action):
        return None  # whoever is at the party with us knows of it
    reply = _asked_about(view)
    if reply == "":
        host = HOSTING.match(content)
        if content.startswith(view.speaker):
            return view.say("ask_going_own", partner=view.you, event=_event_of(content))
        return view.say("ask_going", partner=view.you, event=_event_of(content),
                        host=first_of(host.group(1)) if host else "")
    return line if _not_heard().search(reply) else None


SMALL_TALK = frozenset("what when where which who whom whose how about have your you going doing "
                       "today been keeping busy enjoying next things everything well with that this "
                       "there here they them were will would could should from into really".split())


def _answer_topic(view: TalkView, question: str) -> str | None:
    """A question about something ('Who is running for mayor?') answered from the memory that
    shares most of its words: news passed on whole, anything else said in one's own words."""
    sentence = re.split(r"(?<=[.!])\s+", question.strip())[-1]
    if not re.match(r"(who|what|when|where|which|why|is|are|do|does|did|has|have|can|will)\b",
                    sentence, re.IGNORECASE):
        return None  # "interesting, isn't it?" asks for nothing
    asked = {w for w in re.findall(r"[a-z]{4,}", sentence.lower()) if w not in SMALL_TALK}
    asked -= {w.lower() for w in (view.speaker + " " + view.partner).split()}
    if not asked:
        return None
    best, overlap = None, 0
    for memory in view.recalled:
        if memory.kind == "plan" or " talked with " in memory.text:
            continue
        words = set(re.findall(r"[a-z]{4,}", memory.text.lower()))
        shared = len({w for w in asked if any(x.startswith(w[:5]) for x in words)})
        if shared > overlap:
            best, overlap = memory, shared
    if best is None or not is_news(best.text, lambda text: 6 if EVENT_WORDS.search(text)
                                   or re.search(r"mayor|election", text) else 2):
        return None
    content = HEARD_FROM.sub("", best.text)
    if _partner_knows(view, content) or (_at_event(view.speaker_action)
                                         and re.search(r"\bparty\b", content)):
        return None
    return _tell(view, content)


WHATS_ON = re.compile(r"\b(what(?:'s| is) on|what's new|any news|what's happening|what is happening)",
                      re.IGNORECASE)


def _best_news(view: TalkView, score: Scorer) -> str | None:
    """The most important news one has, in one's own words, for someone who asked for it."""
    for memory in _weightiest(view.memories):
        found = news_of(memory, score)
        if found and found[1] != view.partner:
            content = found[0]
            return first_person(content, view.speaker) if content.startswith(view.speaker) \
                else content
    return None


def _mentions_unknown_event(view: TalkView, line: str) -> bool:
    """The listener named an event ('I'm off to the party later') the speaker knows nothing of."""
    named = EVENT_NAME.search(line)
    if not named or not re.search(r"\bparty\b", line, re.IGNORECASE) or ASK_GOING.search(line):
        return False
    event = named.group(1).strip().lower()
    return not (_events(view) or view.plans_event()
                or any(event in m.text.lower() for m in view.recalled))


def utterance(view: TalkView, score: Scorer) -> Spoken:
    """The next line: an opener fitting the two; then a reply to the last line, news of one's
    own, a question back; a farewell with its reason once nothing new is left."""
    if not view.history:
        return Spoken(clip(_opening(view), 400), False)
    last_speaker, last = view.history[-1]
    mine = [t for s, t in view.history if s == view.speaker]
    parts: list[str] = []
    heard = news_in(last) if last_speaker == view.partner else None
    asked_when = any(re.search(r"\bwhen is it|what time", t, re.IGNORECASE) for t in mine)
    asked_going = ASK_GOING.search(last) if last_speaker == view.partner else None
    asked_me = last_speaker == view.partner and last.rstrip().endswith("?")
    if heard:
        parts.append(_react_to_news(view, heard, asked_when))
    elif asked_going:
        parts.append(_answer_going(view, asked_going))
    elif re.search(r"\bwhen is it|what time does it start", last, re.IGNORECASE):
        event, when = view.planned_event()
        answer = _answer_when(view) or (view.say("plan_time", partner=view.you, event=event,
                                                 time=when) if when else None)
        parts.append(answer or view.say("dont_know", partner=view.you))
    elif _not_heard().search(last):
        asked_me = False  # what follows is the news itself, from all it knows of the event
        told = _answer_when(view) if _asked_about(view) else None
        if told and not any(news_in(told) in said for said in view.already_said):
            parts.append(told)
    elif last_speaker == view.partner and _mentions_unknown_event(view, last) and not asked_when:
        parts.append(view.say("ask_when", partner=view.you))
    elif asked_me and (topic := _answer_topic(view, last)):
        if view.turn == 1 and not view.knows_partner:
            parts.append(_first_reply(view, last))
        parts.append(topic)
    elif view.turn == 1:
        parts.append(_party_line(view) if _at_event(view.speaker_action)
                     and _at_event(view.partner_action) else _first_reply(view, last))
    elif asked_me and _at_event(view.speaker_action):
        parts.append(_party_line(view))
    elif asked_me:
        doing = _doing(view.speaker_action) or "getting on with my day"
        about_work = re.search(r"\b(enjoying|going with|keeping you busy|next for you|new with|"
                               r"been going)\b", last)
        about_me = re.search(r"\b(how are you|how have you been|how's everything|how are things|"
                             r"up to|about you|and you|busy day|keeping busy)\b", last,
                             re.IGNORECASE)
        # "Klaus, are you around?" or "Is Arthur up yet?": someone named who is not here.
        someone = re.match(r"(?:(?:Is|Where is|Have you seen) ([A-Z][a-z]+)\b|([A-Z][a-z]+), )",
                           last)
        named = (someone.group(1) or someone.group(2)) if someone else ""
        elsewhere = bool(named) and named not in (view.me, view.you, *_interjections())
        if about_work:
            parts.append(view.say("answer_work", partner=view.you))
        elif about_me:
            parts.append(view.say("how_i_am", partner=view.you, doing=doing))
        elif WHATS_ON.search(last) and (told := _best_news(view, score)):
            parts.append(view.say("whats_on", news=told))
        elif elsewhere:
            parts.append(view.say("not_here", who=named, partner=view.you))
        elif re.match(r"(?:\w+, )?(who|what|when|where|which|why|how)\b", last, re.IGNORECASE):
            parts.append(view.say("unsure", partner=view.you))
        else:
            parts.append(view.say("agree", partner=view.you))
    news = _shareable(view, score) if view.turn < 8 else None
    if news and ASK_GOING.search(news) and any(p.rstrip().endswith("?") for p in parts):
        news = None  # one question at a time
    if news and not any(news_in(news) == news_in(p) for p in parts if news_in(p)):
        parts.append(news)
    if not parts and view.turn < 3 and _at_event(view.speaker_action) \
            and _at_event(view.partner_action):
        return Spoken(_joined([_party_line(view, opening=True)]), False)
    if not parts and view.turn < 3 and not any(t.rstrip().endswith("?") for t in mine):
        you_doing = _your(view.partner_action)
        return Spoken(_joined([view.say("ask_about_work", doing=you_doing) if you_doing
                               else view.say("ask_back", partner=view.you)]), False)
    ends = not parts or (not news and heard is None and not asked_me and view.turn >= 3) \
        or view.turn >= 9
    if ends:
        parts.append(_farewell(view))
    return Spoken(_joined(parts), ends)


def _joined(parts: list[str]) -> str:
    """The parts of a line as one, each a finished sentence (news as remembered may end
    without a full stop)."""
    return clip(" ".join(p if p.rstrip().endswith((".", "!", "?", "…", "'", '"')) else f"{p}."
                         for p in parts), 400)


def exchange(first: TalkView, second: TalkView, score: Scorer) -> list[Line]:
    """A whole talk line by line as above, each side speaking from what it had in mind before
    it began (its `history` and `already_said` grow as the two speak)."""
    lines: list[Line] = []
    for turn in range(8):
        side = (first, second)[turn % 2]
        said = side.already_said + [t for s, t in lines if s == side.speaker]
        spoken = utterance(replace(side, history=list(lines), already_said=said), score)
        lines.append((side.speaker, spoken.text))
        if spoken.end and turn >= 1:
            break
    return lines
