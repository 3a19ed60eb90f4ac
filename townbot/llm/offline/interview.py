"""The offline model's interview answers (paper 6.1, Appendix B): each question answered by its
kind from the part of the context that backs it, and "I don't know" when nothing does.

- self-knowledge (who I am, my work, what I'm into, who lives with me, a normal day): the
  persona's background and summary, today's plan;
- memory (who someone is, news of the town): memories naming them, summarised, never
  replayed as a transcript;
- plans (what I'll be doing at a time): today's plan at that time;
- reactions (a fire, a busy bathroom...): what a sensible person does, from the phrase banks;
- reflections (inspiration, a gift or a compliment for a friend, whom to spend time with):
  the summary, and the friend's doings as remembered.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from townbot.llm.offline.social import (
    AI_QUESTION,
    ASKED_TIME,
    PERSON,
    PLACE_WORDS,
    PLAN_LINE,
    _minute,
    clip,
    first_person,
    owned,
)
from townbot.llm.offline.words import say
from townbot.wording import progressive
from townbot.world.clock import clock_face

TALKED = re.compile(r"^[A-Z][\w'-]+ [A-Z][\w'-]+ talked with ([A-Z][\w'-]+ [A-Z][\w'-]+) at "
                    r"([^:.]+)")
DOING = re.compile(r"^([A-Z][\w'-]+ [A-Z][\w'-]+) is (?:still |just )?(\w+ing\b[^.(]*)")
EVENT_WORDS = re.compile(r"\b(party|guests?|celebration)\b", re.IGNORECASE)
STEP_NOISE = re.compile(r"^(getting ready to|getting back to|finishing up|still) ")
LIVES = re.compile(r"[^.]*\b(lives? with|shares? [^.]* with|live together|housemates?|roommates?|"
                   r"married to|husband|wife|family|lives? next door)\b[^.]*\.?",
                   re.IGNORECASE)
LIVES_IN = re.compile(r"[^.]*\b(lives? in|lives? at|living in|lives? above)\b[^.]*\.?",
                      re.IGNORECASE)
SENTENCE_START = re.compile(r"(?:^|(?<=[.?!] ))[a-z]")  # "A normal weekday? waking up" -> "Waking"
KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("ai", AI_QUESTION),
    ("plan", ASKED_TIME),
    ("work", re.compile(r"\b(do for (work|a living)|your job|occupation|work as)\b", re.I)),
    ("about", re.compile(r"\b(about yourself|who are you|describe yourself)\b", re.I)),
    ("today", re.compile(r"\b(doing today|doing now|doing right now|up to today|plans? for today|"
                         r"on today|your day today)\b", re.I)),
    ("feeling", re.compile(r"\b(how are you|how do you feel|how have you been)\b", re.I)),
    ("into", re.compile(r"\b(into these days|interested in|working on|passionate|studying|"
                        r"study)\b", re.I)),
    ("home", re.compile(r"\b(lives? with you|live with|your home|housemates?|roommates?)\b",
                        re.I)),
    ("weekday", re.compile(r"\b(weekday|typical day|normal day|usual day|routine)\b", re.I)),
    ("fire", re.compile(r"\b(breakfast|kitchen|stove|pan)\b.*\b(fire|burning|smok)", re.I)),
    ("flames", re.compile(r"\b(flames|fire)\b", re.I)),
    ("bathroom", re.compile(r"\bbathroom\b", re.I)),
    ("fridge", re.compile(r"\b(fridge|refrigerator|no food)\b", re.I)),
    ("friend", re.compile(r"\bfriend\b.*\b(walking|passing|past)\b", re.I)),
    ("book", re.compile(r"\bbook\b", re.I)),
    ("present", re.compile(r"\b(present|gift)\b", re.I)),
    ("compliment", re.compile(r"\bcompliment\b", re.I)),
    ("spend", re.compile(r"\bspend time\b|\bmost like to\b", re.I)),
    ("inspiration", re.compile(r"\binspir", re.I)),
    ("election", re.compile(r"\b(election|mayor|candidate|running for)\b", re.I)),
    ("event", re.compile(r"\b(party|event|celebration|exhibition|concert)\b", re.I)),
    ("person", re.compile(r"\b(who is|who's|tell me about|know about|think of)\b", re.I)),
]


@dataclass(frozen=True)
class InterviewView:
    """The answer's question as the offline model reads it (purposes/answer.py), with "(heard
    from ...)" taken off what it remembers."""

    name: str
    question: str
    memories: list[str]
    plan: list[str]
    summary: str
    background: str
    seed: int
    known: tuple[str, ...] = ()  # news it knows beside the memories retrieved
    about: Mapping[str, list[str]] = field(default_factory=dict)  # person asked about -> memories
    home: str = ""  # where it lives ("Dorm for Oak Hill College")
    met_at_home: tuple[str, ...] = ()  # people it talked with there, most often first
    living: tuple[str, ...] = ()  # memories of where and with whom it lives

    @property
    def recalled(self) -> list[str]:
        """The memories retrieved for the question, then the news it knows besides."""
        return list(dict.fromkeys([*self.memories, *self.known]))

    def on(self, person: str) -> list[str]:
        """Everything it has in mind that may name `person`."""
        return list(dict.fromkeys([*self.recalled, *self.about.get(person, [])]))

    def say(self, bank: str, **slots: str) -> str:
        return say(bank, self.seed, self.name, self.question, **slots)

    @property
    def first(self) -> str:
        return self.name.split()[0]

    def mine(self, text: str) -> str:
        """A sentence about oneself in the first person, pronouns and all ("She is getting
        ready ... and wants to invite as many as she can" -> "I'm getting ready ... and want
        to invite as many as I can")."""
        text = re.sub(r"^(?:She|He|They) ", f"{self.name} ", text.strip())
        text = re.sub(rf"^{re.escape(self.first)} (?!{re.escape(self.name.split()[-1])})",
                      f"{self.name} ", text)
        said = first_person(text, self.name)
        said = re.sub(r"\bthey(?= [^.]*\beach other\b)", "we", said)  # "... and I: we"
        return owned(said, "my")


def kind_of(question: str) -> str:
    return next((kind for kind, pattern in KINDS if pattern.search(question)), "other")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def _traits(view: InterviewView) -> list[str]:
    found = re.search(r"Innate traits: ([^.]*)\.", view.summary)
    return [t.strip() for t in found.group(1).split(",")] if found else []


def _people(view: InterviewView) -> Counter[str]:
    found: Counter[str] = Counter()
    for text in view.recalled + [t for texts in view.about.values() for t in texts]:
        for name in PERSON.findall(text):
            if name != view.name and not set(name.split()) & PLACE_WORDS:
                found[name] += 1
    return found


def _about_person(view: InterviewView, person: str) -> str | None:
    """What one remembers of someone, summarised: a fact, what they were doing, where one last
    talked with them."""
    facts, doings, places = [], [], []
    for text in view.on(person):
        if person not in text:
            continue
        talked = TALKED.match(text)
        doing = DOING.match(text)
        if talked and talked.group(1) == person:
            places.append(talked.group(2).strip())
        elif doing and doing.group(1) == person:
            doings.append(STEP_NOISE.sub("", doing.group(2).strip()))
        elif doing:
            continue  # someone else's doings ("Giorgio is talking with Arthur") say little
        elif " talked with " not in text and " knows that " not in text:
            facts.append(first_person(text, view.name))
    parts = []
    if facts:
        parts.append(facts[0].rstrip(".") + ".")
    if doings:
        parts.append(view.say("seen_doing", who=person.split()[0], doing=doings[0]))
    if places:
        parts.append(view.say("last_talked", place=places[0]))
    return " ".join(parts) or None


JOINING = frozenset("with from into at in on for and to over of by around near".split())
SMALL_WORDS = frozenset("the a an her his their my some what is so".split())
PARTS = frozenset("chapter cup piece bit draft page pages few couple lot".split())  # of what
READING = frozenset("book books novel novels magazine paper".split())  # read, not a subject
# What anyone does, or says in passing ("I'm getting the hang of it"): not what they love.
NOT_AN_INTEREST = re.compile(r"(sleeping|eating|talking (?!about)|chatting|walking|taking|pausing|"
                             r"getting|looking|waiting|washing|fixing|reacting|heading|having|jotting|"
                             r"checking|stepping|stretching|tidying|"
                             r"going|leaving|arriving|finishing|wrapping)")


def _interest(view: InterviewView, person: str) -> tuple[str, str] | None:
    """What someone seems to love doing (the activity one saw them at most) and its subject."""
    doings: Counter[str] = Counter()
    remembered = view.on(person)
    for text in remembered:
        match = DOING.match(text)
        if match and match.group(1) == person:
            doing = STEP_NOISE.sub("", match.group(2).strip())
            if not re.match(NOT_AN_INTEREST, doing) and not EVENT_WORDS.search(doing):
                doings[doing] += 1
    first = person.split()[0]
    for text in remembered:  # what they said they were doing, when talking with us
        for said in re.findall(rf"\b{first}: [^:]*?\b(?:I'm|I've been|caught me|just|as ever -|"
                               rf"know me, \w+ -) (?:still |just )?(\w+ing\b[^.!?:]*)", text):
            if not re.match(NOT_AN_INTEREST, said) and not EVENT_WORDS.search(said):
                doings[said.strip()] += 1
    if not doings:
        return None
    doing = doings.most_common(1)[0][0]
    topic = re.search(r"\babout (.+)", doing)
    tail = topic.group(1).split() if topic else doing.split()[1:]
    if not topic and (not tail or tail[0] in JOINING):
        return owned(doing, "their"), doing.split()[0]  # "writing over a cup of tea": the writing
    words: list[str] = []
    for word in tail:
        if word in JOINING:
            if words:
                break
            continue
        if len(word) > 2 and word not in SMALL_WORDS and word not in PARTS:
            words.append(word.rstrip(",;"))
            if word.endswith((",", ";")):
                break
    if not words or words[0] in READING:  # "reading a novel": the reading
        return owned(doing, "their"), doing.split()[0]
    return owned(doing, "their"), " ".join(words[:2])


def _blocks(plan: list[str]) -> list[tuple[int, int, str, str]]:
    """Plan lines ('9:00 am to 11:00 am: paint (at the easel)') as their start and end minutes,
    the activity without its place, and the start as written."""
    found = []
    for line in plan:
        if match := PLAN_LINE.match(line):
            found.append((_minute(*match.group(1, 2, 3)), _minute(*match.group(4, 5, 6)),
                          re.sub(r"\s*\([^)]*\)$", "", match.group(7)),
                          f"{match.group(1)}:{match.group(2)} {match.group(3)}"))
    return found


def _plan_at(view: InterviewView, asked: re.Match[str]) -> str:
    word = asked.group(1).lower()
    minute = 720 if word == "noon" else 0 if word == "midnight" else \
        _minute(asked.group(2), asked.group(3), asked.group(4))
    blocks = _blocks(view.plan)
    if not blocks:
        return view.say("no_plan")
    time = asked.group(1)
    finished = re.search(r"\b(just finished|have finished|be done with)\b", view.question, re.I)
    if finished:
        done = [b for b in blocks if b[1] <= minute]
        if done:
            return view.say("plan_done", time=time, doing=view.mine(progressive(done[-1][2])))
    for start, end, activity, _ in blocks:
        if start <= minute < end:
            return view.say("plan_at", time=time, doing=view.mine(progressive(activity)))
    if minute < blocks[0][0]:
        return view.say("plan_asleep", time=time, start=clock_face(blocks[0][0]))
    return view.say("plan_after", time=time, end=clock_face(blocks[-1][1]))


ABOUT_SOMEONE = re.compile(r"\b(intends?|plans?|hopes?|will|is going) to (run|host|throw|hold)\b|"
                           r"\brunning for\b")


def _news(view: InterviewView, words: re.Pattern[str]) -> str:
    """The news on a topic: who intends what first, a sight of it last."""
    found = [m for m in view.recalled if words.search(m) and " talked with " not in m
             and not m.startswith(f"{view.name} is ")]
    found.sort(key=lambda m: (ABOUT_SOMEONE.search(m) is None, " knows that " in m,
                              " is " in m[:40]))
    if not found:
        return view.say("news_none")
    fact = re.sub(r"^[A-Z][\w'-]+ [A-Z][\w'-]+ knows that ", "", found[0])
    return view.say("news_answer", fact=view.mine(fact[:1].upper() + fact[1:]))


def _weekday(view: InterviewView) -> str:
    steps = [f"{view.mine(progressive(activity))} from {start}"
             for _, _, activity, start in _blocks(view.plan[:6])]
    if not steps:
        return view.say("unknown_answer")
    return view.say("weekday", fact="; then ".join(steps[:4]) + ".")


def _today(view: InterviewView) -> str:
    """What today's plan holds (the offline answers read the plan, not the moment's action)."""
    steps = [activity for _, _, activity, _ in _blocks(view.plan)]
    if not steps:
        return view.say("no_plan")
    picked = steps[:: max(1, len(steps) // 3)][:3]
    return view.say("today_plan", fact=", ".join(view.mine(progressive(s)) for s in picked))


def _feeling(view: InterviewView) -> str:
    lately = [s for s in _sentences(view.summary) if s.startswith(("Lately", view.first + " feels"))]
    return view.say("feeling", feeling=view.mine(lately[-1]) if lately else "I'm well, thank you.",
                    doing="getting on with my day")


def _self(view: InterviewView, kind: str) -> str:
    background = _sentences(view.background)
    if kind == "about":
        traits = _traits(view) or ["easygoing"]
        fact = view.mine(background[0]) if background else ""
        return view.say("about_me", me=view.name, fact=fact, trait=traits[0])
    if kind == "work":
        return view.say("my_work", fact=view.mine(background[0])) if background \
            else view.say("unknown_answer")
    if kind == "into":
        currently = [s for s in _sentences(view.summary) if s not in view.background
                     and not s.startswith(("Name:", "Innate traits", "Lately", view.first))]
        fact = view.mine(currently[0] if currently else background[-1] if background else "")
        return view.say("into_now", fact=fact) if fact else view.say("unknown_answer")
    if kind == "home":
        return _home(view)
    return _weekday(view)


def _home(view: InterviewView) -> str:
    """Who one lives with: what the persona and memory say of it; else the home itself (one's
    own apartment, a family's house) and the people one has talked with there."""
    texts = [t for t in [view.background, *view.living, *view.memories]
             if " talked with " not in t]
    lives = [m.group(0).strip() for pattern in (LIVES, LIVES_IN) for text in texts
             for m in [pattern.search(text)] if m]
    fact = view.mine(lives[0]) if lives else ""
    mates = [p.split()[0] for p in view.met_at_home if p.split()[0] not in fact][:3]
    if mates and view.home:
        seen = view.say("home_mates", home=view.home, who=" and ".join(
            [", ".join(mates[:-1]), mates[-1]] if len(mates) > 1 else mates))
        fact = f"{fact} {seen}".strip()
    if fact:
        return view.say("live_with", fact=fact)
    if view.home.startswith(f"{view.name}'s "):  # "Isabella Rodriguez's apartment"
        return view.say("live_alone", home=view.home.split("'s ", 1)[1])
    return view.say("no_housemates")


def _friend_answer(view: InterviewView, kind: str) -> str:
    named = [p for p in _people(view) if p in view.question] or \
        [p for p in _people(view) if p.split()[0] in view.question]
    if not named:
        return view.say("unknown_answer")
    person = named[0]
    bank = {"book": "gift_book", "present": "gift_present", "compliment": "compliment"}[kind]
    role = _role(view, person)
    if role:
        return view.say(f"{bank}_role", who=person.split()[0], role=role)
    interest = _interest(view, person)
    if interest is None:
        return view.say(f"{kind}_unknown", who=person.split()[0])
    doing, subject = interest
    return view.say(bank, who=person.split()[0], interest=subject, doing=doing)


NOT_A_ROLE = re.compile(r"\b(neighbou?r|friend|regular|customer|fan|guest|resident|person)\b")


def _role(view: InterviewView, person: str) -> str:
    """What someone is, as a memory describes them ('Jennifer Moore, a watercolour painter';
    'Adam Smith is a philosopher who...'), '' when none does."""
    name = re.escape(person)
    phrase = r"an? ([a-z][a-z-]*(?: [a-z][a-z-]*){0,2}?)"
    for text in view.on(person):
        found = re.search(rf"\b{name}, {phrase}(?=[,.;]| for\b| who\b| and\b|$)", text) or \
            re.search(rf"\b{name} is {phrase}(?= who\b| at\b| in\b| living\b|[,.;]|$)", text)
        if found and not NOT_A_ROLE.search(found.group(1)):
            return found.group(1)
    return ""


def answer(view: InterviewView) -> str:
    """An interview answer by the question's kind (see the module's docstring)."""
    kind = kind_of(view.question)
    if kind == "ai":
        return (f"I'm {view.name}, a simulated resident of Smallville: a character in a "
                "computer program, not a real person.")
    if kind == "plan":
        text = _plan_at(view, ASKED_TIME.search(view.question))  # type: ignore[arg-type]
    elif kind == "today":
        text = _today(view)
    elif kind == "feeling":
        text = _feeling(view)
    elif kind in ("about", "work", "into", "home", "weekday"):
        text = _self(view, kind)
    elif kind in ("fire", "flames", "bathroom", "fridge"):
        traits = _traits(view) or ["calm"]
        text = view.say(f"react_{kind}", trait=traits[-1])
        if traits[-1] not in text:
            text += " " + view.say("trait_tail", trait=traits[0])
    elif kind == "friend":
        people = _people(view)
        who = people.most_common(1)[0][0].split()[0] if people else "them"
        text = view.say("react_friend", who=who, trait=(_traits(view) or ["friendly"])[0])
    elif kind in ("book", "present", "compliment"):
        text = _friend_answer(view, kind)
    elif kind == "spend":
        people = _people(view)
        if not people:
            text = view.say("unknown_answer")
        else:
            person = people.most_common(1)[0][0]
            fact = _about_person(view, person) or "We've talked a lot lately."
            text = view.say("spend_time", who=person.split()[0], fact=fact)
    elif kind == "inspiration":
        text = _self(view, "into").replace("These days?", "Lately:")
        text = view.say("inspiration", fact=text) if "don't know" not in text else text
    elif kind == "election":
        text = _news(view, re.compile(r"\b(mayor|election|candida)", re.I))
    elif kind == "event":
        text = _news(view, re.compile(r"\b(party|celebration|exhibition|concert)\b", re.I))
    else:
        text = _person_or_topic(view)
    return clip(SENTENCE_START.sub(lambda m: m.group(0).upper(), text), 1200)


def _person_or_topic(view: InterviewView) -> str:
    people = [p for p in _people(view) if p in view.question]
    if people:
        about = _about_person(view, people[0])
        return view.say("who_is", who=people[0], fact=about) if about \
            else view.say("unknown_answer")
    asked = set(re.findall(r"[a-z]{5,}", view.question.lower())) - {
        "about", "would", "there", "where", "which", "think"}
    backed = [m for m in view.memories if " talked with " not in m
              and asked & set(re.findall(r"[a-z]{5,}", m.lower()))]
    if not backed:
        return view.say("unknown_answer")
    return view.mine(backed[0])
