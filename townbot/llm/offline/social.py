"""The offline model's answers for the social and reflective purposes: summaries, reflection,
reactions, conversations, takeaways and interview answers, plus appointments in plans.

Like the rest of the offline model this is not a language model: it recombines the memories
in the structured context with fixed sentence patterns, deterministically for a given seed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from townbot.llm.offline.words import first_singular, third_singular
from townbot.llm.purposes import (
    AgentSummary,
    Insight,
    Insights,
    PlanRevision,
    Reaction,
    ReflectionQuestions,
    Relationship,
)
from townbot.world.clock import clock_face

NEWS_THRESHOLD = 6
PERSON = re.compile(r"\b([A-Z][a-z]+ [A-Z][a-z]+)\b")
PLACE_WORDS = frozenset("Cafe Park College Market Pharmacy Store Pub Hill Crown Supply Oak Day "
                        "Street Lane Road Row Alley Willows Valentine".split())
HEARD_FROM = re.compile(r"\s*\(heard from [^)]*\)\s*$")
ALARMS: list[tuple[tuple[str, ...], str, str, str]] = [
    (("burning", "fire", "smok", "on fire"), "turn off the {obj} and clear away what was burning",
     "being put out", "🧯"),
    (("overflow", "flood"), "turn off the tap and mop up around the {obj}", "being mopped up",
     "🧽"),
    (("leak", "dripping"), "fix the leaking {obj}", "being repaired", "🔧"),
    (("broken", "jammed", "stuck", "not working"), "repair the {obj}", "being repaired", "🔧"),
    (("left on", "running with no one"), "switch off the {obj}", "being switched off", "✋"),
]
EAGER = re.compile(r"\b(party|invit\w*|campaign\w*|running for|run for)\b", re.IGNORECASE)
AI_QUESTION = re.compile(r"\b(ai|a bot|robot|computer|program|simulat|real person|human|agent)",
                         re.IGNORECASE)


def people_in(texts: list[str], exclude: str) -> Counter[str]:
    found: Counter[str] = Counter()
    for text in texts:
        for name in PERSON.findall(text):
            if name != exclude and not set(name.split()) & PLACE_WORDS:
                found[name] += 1
    return found


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


def is_news(text: str, score) -> bool:  # noqa: ANN001 - the importance scorer
    """Worth passing on: important, and either heard from someone or about what is coming."""
    if any(marker in text for marker in (" talked with ", " is talking with ", " reacted to ",
                                         " said to ", " said: ", " asked ", "Announcement:",
                                         " knows that ", " taking in: ")):
        return False
    if DOING.match(text) and not INTENDING.search(text) and not DATED.search(text):
        return False  # "Ryan Park is reading tech news": a sight, not news (unless it has a date)
    return score(text) >= NEWS_THRESHOLD and ("(heard from" in text
                                               or FORWARD_LOOKING.search(text) is not None)


def clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summary(context: Mapping[str, Any]) -> AgentSummary:
    name = context["name"]
    first = name.split()[0]
    reflections = [t for t in context.get("feeling", []) if "(because" not in t]
    feeling = (f"Lately {first} has been thinking that {reflections[0][0].lower()}"
               f"{reflections[0][1:]}" if reflections and reflections[0].startswith(name) is False
               else f"{first} feels things are moving along steadily.")
    return AgentSummary(core=context["background"].split(". ")[0].rstrip(".") + ".",
                        occupation=context["currently"], feeling=feeling[:300])


def reflection_questions(context: Mapping[str, Any]) -> ReflectionQuestions:
    name, texts = context["name"], list(context["texts"])
    questions = []
    people = people_in(texts, name).most_common(1)
    if people:
        questions.append(f"What is {name}'s relationship with {people[0][0]}?")
    questions.append(f"What is {name} most focused on these days?")
    questions.append(f"What news has {name} heard lately?")
    return ReflectionQuestions(questions=questions[:3])


REFLECTION_MARKERS = (" knows that ", " has been taking in: ", " has been talking with ",
                      " spends a lot of time ",
                      " keeps running into ", " and is getting to know them")


def lower_first(text: str) -> str:
    """Lower-case the start of a sentence that continues another, but never a name."""
    if PERSON.match(text) or text.startswith(("I ", "I'")):
        return text
    return text[:1].lower() + text[1:]


def insights(context: Mapping[str, Any], score) -> Insights:  # noqa: ANN001
    name, question, texts = context["name"], context["question"], list(context["texts"])
    kinds = list(context.get("kinds") or ["observation"] * len(texts))
    # Insights rest on what happened; earlier insights are not restated inside new ones.
    lived = [i for i, (t, k) in enumerate(zip(texts, kinds, strict=True), 1)
             if k != "reflection" and not any(marker in t for marker in REFLECTION_MARKERS)]
    found: list[Insight] = []
    person = re.search(r"relationship with (.+)\?$", question)
    if person:
        other = person.group(1)
        cited = [i for i, t in enumerate(texts, 1) if other in t]
        if cited:
            talked = [i for i in cited if "talked with" in texts[i - 1]]
            relation = "has been talking with" if talked else "keeps running into"
            found.append(Insight(text=f"{name} {relation} {other} and is getting to know them",
                                 evidence=cited[:5]))
    news = [i for i in lived if is_news(texts[i - 1], score)
            and not HEARD_FROM.sub("", texts[i - 1]).startswith(name)]  # not one's own news
    if "news" in question and news:
        for index in news[:3]:
            content = HEARD_FROM.sub("", texts[index - 1])
            found.append(Insight(text=clip(f"{name} knows that {lower_first(content)}"),
                                 evidence=[index]))
    own = Counter(texts[i - 1][len(name) + 4:] for i in lived
                  if texts[i - 1].startswith(f"{name} is "))
    if own and not found:
        activity, _ = own.most_common(1)[0]
        cited = [i for i in lived if texts[i - 1] == f"{name} is {activity}"]
        found.append(Insight(text=clip(f"{name} spends a lot of time {activity}"),
                             evidence=cited[:5]))
    if not found and lived:
        first = texts[lived[0] - 1]
        talk = re.match(r"^[A-Z][\w'-]+ [A-Z][\w'-]+ talked with (.+?) at ([^:.]+)", first)
        # A remembered talk is summarised, never its lines kept inside the insight.
        seen = f"{name} has been talking with {talk.group(1)} at {talk.group(2)}" if talk \
            else f"{name} has been taking in: {first}"
        found.append(Insight(text=clip(seen), evidence=[lived[0]]))
    if not found:
        found.append(Insight(text=f"{name} has been thinking things over", evidence=[1]))
    return Insights(insights=[i.model_copy(update={"importance": score(i.text)})
                              for i in found[:5]])


def insights_for_questions(context: Mapping[str, Any], score) -> Insights:  # noqa: ANN001
    """The insights of each question from its own statements, numbered as in the prompt."""
    texts, kinds = list(context["texts"]), list(context.get("kinds") or [])
    found: list[Insight] = []
    for index, (question, numbers) in enumerate(zip(context["questions"], context["groups"],
                                                    strict=True), 1):
        own = {"name": context["name"], "question": question,
               "texts": [texts[n - 1] for n in numbers],
               "kinds": [kinds[n - 1] for n in numbers] if kinds else None}
        for insight in insights(own, score).insights:
            found.append(insight.model_copy(update={
                "question": index, "evidence": [numbers[n - 1] for n in insight.evidence]}))
    return Insights(insights=found[:15])


def react(context: Mapping[str, Any], chance: int) -> Reaction:
    status = context["status"].lower()
    if context["kind"] == "object":
        obj = context["subject"].split(": ")[-1]
        for words, action, state, emoji in ALARMS:
            if any(word in status for word in words):
                return Reaction(react=True, action=action.format(obj=obj), minutes=15,
                                object_state=state, emoji=emoji)
        return Reaction(react=False)
    if "sleeping" in status or "talking with" in status or "sleeping" in context["action"]:
        return Reaction(react=False)
    knows = any(context["subject"] in text for text in context["memories"])
    # Someone with an event or a campaign on their mind seeks people out, as Isabella does.
    eager = EAGER.search(context.get("summary", "")) is not None
    if chance < (35 if knows else 12) + (25 if eager else 0):
        return Reaction(react=True, action=f"chat with {context['subject']}", minutes=10,
                        emoji="💬")
    return Reaction(react=False)


def relationship(context: Mapping[str, Any]) -> Relationship:
    """What the speaker knows of the listener: how often they talked, and one fact."""
    name, partner = context["name"], context["partner"]
    first = name.split()[0]
    about = [t for t in context["memories"] if partner in t]
    talks = sum(1 for t in about if f"talked with {partner}" in t)
    facts = [HEARD_FROM.sub("", t) for t in about
             if "talked with" not in t and not any(m in t for m in REFLECTION_MARKERS)]
    known = f"{first} knows {partner}" + (f": {facts[0].rstrip('.')}." if facts else ".")
    if talks:
        known += f" They have talked {talks} time{'s' if talks > 1 else ''} lately."
    return Relationship(text=clip(known, 400))


ASKED_TIME = re.compile(r"\b(noon|midnight|(\d{1,2})(?::(\d{2}))?\s*(am|pm))\b", re.IGNORECASE)
PLAN_LINE = re.compile(r"^(\d{1,2}):(\d{2}) (am|pm) to (\d{1,2}):(\d{2}) (am|pm): (.+)$")


MONTHS = ("January February March April May June July August September October November "
          "December").split()
TIME_RANGE = re.compile(r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*(?:to|until|till|-)\s*"
                        r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)", re.IGNORECASE)
EVENT = re.compile(r"((?:[A-Z][\w']*\s){0,3}(?:party|meeting|exhibition|show|rally|debate|"
                   r"opening|concert|reading))")


def _minute(hour: str, minute: str | None, meridian: str) -> int:
    value = int(hour) % 12 + (12 if meridian.lower() == "pm" else 0)
    return value * 60 + int(minute or 0)


def appointments(intentions: list[str], date_iso: str, name: str,
                 places: list[str]) -> list[dict[str, Any]]:
    """Dated, timed events in the agent's memories that fall on this date."""
    year, month, day = (int(part) for part in date_iso.split("-"))
    month_name = MONTHS[month - 1]
    labels = (f"{month_name} {day}", f"{month_name[:3]} {day}", f"{day} {month_name}")
    found = []
    for text in intentions:
        when = TIME_RANGE.search(text)
        if not when or not any(label in text for label in labels) or " talked with " in text:
            continue
        start = _minute(when.group(1), when.group(2), when.group(3) or when.group(6))
        end = _minute(when.group(4), when.group(5), when.group(6))
        if end <= start:
            continue
        event = EVENT.search(text)
        what = event.group(1).strip() if event else "event"
        place = next((p for p in places if p in text), None)
        hosting = re.match(rf"{re.escape(name)} (?:intends|plans|is planning|will|hopes) to "
                           r"(?:host|throw|hold|organi[sz]e|give)", text)
        verb = "host" if hosting else "attend"
        activity = f"{verb} the {what}" + (f" at {place}" if place else "")
        found.append({"start": start, "end": end, "activity": activity})
    return found


def plan_revision(context: Mapping[str, Any]) -> PlanRevision:
    """Revise when the news holds an appointment later today that the plan does not have."""
    planned = " ".join(block["activity"].lower() for block in context["schedule"])
    for event in appointments(list(context["news"]), context["date"], context["name"],
                              list(context["places"])):
        if event["end"] > context["minute"] and event["activity"].lower() not in planned:
            return PlanRevision(revise=True, reason=f"{event['activity']} from "
                                f"{clock_face(event['start'])} to {clock_face(event['end'])}")
    return PlanRevision(revise=False)
