"""The deterministic offline model: no network, no key, plausible answers from context.

It is the default when no model is configured. It reads the structured context that each
prompt was rendered from (a routine becomes a day plan, keywords become importance, the
offered options become a choice) and varies its wording with a seeded hash, so a fixed seed
always gives the same town.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from pydantic import BaseModel

from townbot.llm.embedding import HashingEmbedder, keywords
from townbot.llm.offline import interview, judge, social, talk
from townbot.llm.offline.words import alternatives, banks, seeded_index
from townbot.llm.port import AnswerT, Ask, CallContext, LanguageModel, Reply
from townbot.llm.purposes import (
    DayPlan,
    Decomposition,
    HourlySchedule,
    ImportanceScores,
    PlaceAndArea,
    ScheduleBlock,
    Step,
)
from townbot.wording import progressive, warm_up
from townbot.world.clock import clock_face, parse_clock

LOG = logging.getLogger(__name__)
OFFLINE_LABEL = "offline model (deterministic, no network; not a language model)"

# Poignancy by keyword, most poignant first; everyday activity scores 1 or 2.
IMPORTANCE_WORDS: list[tuple[int, tuple[str, ...]]] = [
    (9, tuple("fire burning emergency leak injur hospital propos engag".split())),
    (8, tuple("party valentine election mayor candida exhibition crush love married breakup".split())),
    (6, tuple("news thesis deadline interview announce invit solo".split())),
    (4, tuple("conversation talk chat plan perform".split())),
    (2, tuple("eat breakfast lunch dinner coffee read walk brush shower dress wash snack tea".split())),
    (1, tuple("sleep idle empty made off clean closed stocked tidy".split())),
]

OBJECT_HINTS: dict[str, tuple[str, ...]] = {
    "sleep": ("bed",),
    "nap": ("bed",),
    "bed": ("bed",),
    "wake": ("bed",),
    "shower": ("shower",),
    "wash": ("bathroom sink", "kitchen sink"),
    "brush": ("bathroom sink",),
    "teeth": ("bathroom sink",),
    "toilet": ("toilet",),
    "dress": ("closet",),
    "breakfast": ("stove", "toaster", "kitchen table", "dining table"),
    "cook": ("stove", "cooking area", "oven"),
    "dinner": ("stove", "dining table"),
    "lunch": ("kitchen table", "dining table", "refrigerator"),
    "eat": ("kitchen table",),
    "snack": ("refrigerator",),
    "coffee": ("coffee machine",),
    "dish": ("kitchen sink",),
    "serv": ("cafe counter", "bar counter", "counter"),
    "customer": ("counter",),
    "pharmac": ("pharmacy counter",),
    "medic": ("pharmacy shelf", "pharmacy counter"),
    "grocer": ("grocery store counter", "grocery store shelf"),
    "stock": ("shelf",),
    "suppl": ("supply store counter", "supply store product shelf"),
    "pub": ("bar counter",),
    "drink": ("bar counter", "pub tables"),
    "bar": ("bar counter",),
    "read": ("bookshelf", "shelf", "library table", "sofa"),
    "book": ("bookshelf", "shelf"),
    "study": ("library table", "desk"),
    "research": ("desk", "library table"),
    "writ": ("desk",),
    "essay": ("desk",),
    "thesis": ("library table", "desk"),
    "lectur": ("podium", "blackboard"),
    "teach": ("podium", "blackboard"),
    "class": ("student seating",),
    "music": ("piano",),
    "compos": ("piano",),
    "piano": ("piano",),
    "paint": ("easel",),
    "sketch": ("easel", "desk"),
    "photo": ("desk",),
    "anima": ("desk",),
    "garden": ("garden bed", "watering can"),
    "plant": ("garden bed",),
    "water": ("watering can",),
    "walk": ("path", "bench"),
    "relax": ("sofa", "bench"),
    "tv": ("tv", "television"),
    "rehears": ("stage",),
    "comedy": ("stage",),
    "code": ("desk", "computer"),
    "app": ("desk", "computer"),
    "stream": ("desk", "computer"),
    "exercis": ("track", "bench"),
    "run": ("track", "path"),
    "train": ("track", "path"),
    "food": ("counter", "table", "kitchen"),
    "guest": ("seating", "table", "counter"),
    "mingl": ("seating", "table"),
    "danc": ("seating", "floor", "stage"),
    "listen": ("piano", "stage", "seating"),
    "drinks": ("counter", "bar"),
    "welcom": ("counter", "door"),
    "host": ("counter", "seating"),
}

ODD_DEFAULTS = ("trash", "bin", "toilet", "shower", "bed", "sink", "closet")

OBJECT_STATES: dict[str, str] = {
    "bed": "occupied",
    "stove": "cooking",
    "oven": "baking",
    "shower": "running",
    "coffee machine": "brewing coffee",
    "piano": "being played",
    "easel": "holding a painting",
    "kitchen sink": "full of dishes being washed",
    "bathroom sink": "running",
    "toilet": "occupied",
    "closet": "open",
    "refrigerator": "open",
    "tv": "on",
    "television": "on",
    "computer": "on",
    "watering can": "in use",
    "blackboard": "covered in notes",
}

EMOJI: list[tuple[tuple[str, ...], str]] = [
    (("sleep", "bed", "nap"), "😴"),
    (("dish",), "🧽"),
    (("shower", "wash", "brush", "bath"), "🚿"),
    (("dress",), "👕"),
    (("breakfast", "lunch", "dinner", "eat", "meal", "snack", "cook"), "🍳"),
    (("coffee",), "☕"),
    (("serv", "customer", "counter", "shop", "stock", "suppl"), "🛒"),
    (("pharmac", "medic"), "💊"),
    (("drink", "pub", "bar"), "🍺"),
    (("read", "book", "library", "thesis", "study", "research"), "📚"),
    (("writ", "essay", "poem", "poet", "note"), "✍️"),
    (("lectur", "teach", "class"), "🎓"),
    (("music", "compos", "piano", "song"), "🎵"),
    (("paint", "sketch", "draw"), "🎨"),
    (("photo", "camera"), "📷"),
    (("anima",), "🎞️"),
    (("garden", "plant", "water"), "🌱"),
    (("run", "train", "exercis", "jog", "stretch"), "🏃"),
    (("walk", "stroll"), "🚶"),
    (("talk", "chat", "convers", "meet", "call", "mingl", "guest", "welcom"), "💬"),
    (("danc", "party"), "🎉"),
    (("code", "app", "program"), "💻"),
    (("stream",), "🎥"),
    (("comedy", "rehears", "perform", "act"), "🎭"),
    (("relax", "tv", "rest", "break"), "🛋️"),
    (("clean", "tidy", "dish"), "🧽"),
]

ACTIVE = ("run", "jog", "sprint", "train", "exercis", "garden", "water", "weed", "walk", "hike",
          "swim", "prune", "mow")
MEAL_WORDS = ("breakfast", "lunch", "dinner", "meal", "snack", "supper")
MEAL_VERBS = ("eat", "have", "cook", "grab", "make", "prepare", "fix")
MORNING_VERBS = ("wake", "wash", "shower", "brush", "get dressed", "freshen")
BEDTIME_STARTS = ("go to bed", "go to sleep", "sleep", "head to bed", "turn in", "bedtime")


# Words that start like a keyword but mean something else ("shower" is not a "show").
FALSE_FRIENDS: dict[str, frozenset[str]] = {
    "show": frozenset({"shower", "showers", "showering"}),
    "plan": frozenset({"plant", "plants", "planted", "planting", "planet"}),
    "off": frozenset({"office", "offices", "offer", "offers", "offered", "offering"}),
    "read": frozenset({"ready", "readying", "already"}),
    "tea": frozenset({"teach", "teaching", "teacher", "team", "tear", "tears"}),
    "act": frozenset({"actual", "actually"}),
    "bar": frozenset({"barely"}),
    "eat": frozenset(),
}


WORD = re.compile(r"[a-z]+")


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def _any_starts(words: list[str], prefixes: tuple[str, ...]) -> bool:
    """Whether a word starts with one of `prefixes` without being that prefix's false friend."""
    for word in words:
        # str.startswith tries every prefix at C speed: most words start with none of them.
        if word.startswith(prefixes) and any(
                word.startswith(prefix) and word not in FALSE_FRIENDS.get(prefix, ())
                for prefix in prefixes):
            return True
    return False


def score_importance(text: str) -> int:
    words = _words(text)
    for score, prefixes in IMPORTANCE_WORDS:
        if _any_starts(words, prefixes):
            return score
    return 2


def pick_emoji(text: str) -> str:
    """The emoji of the first kind of activity the text names (one: a pair such as a pan and
    a sofa reads as nonsense)."""
    words = _words(text)
    return next((emoji for prefixes, emoji in EMOJI if _any_starts(words, prefixes)), "🙂")


def pick_object(activity: str, objects: Sequence[str], seed: int) -> str:
    """The object whose name or hint best matches the activity's words."""
    if not objects:
        return ""
    return _best_object(activity, tuple(objects), seed)


@lru_cache(maxsize=4096)  # the same steps meet the same rooms all day
def _best_object(activity: str, objects: tuple[str, ...], seed: int) -> str:
    stems = keywords(activity)
    # Each (stem, hint key) pair that matches adds 3 to every object named like one of its hints.
    hinted = [hints for stem_ in stems for key, hints in OBJECT_HINTS.items()
              if stem_.startswith(key)]
    # With nothing matching, any object but one that no activity is done at by default.
    plain = [o for o in objects if not any(w in o.lower() for w in ODD_DEFAULTS)] or list(objects)
    best, best_score = plain[seeded_index(seed, activity, modulo=len(plain))], 0
    for name in objects:
        lowered = name.lower()
        score = sum(2 for s in stems if s and s in lowered)
        score += sum(3 for hints in hinted if any(h in lowered for h in hints))
        if score > best_score:
            best, best_score = name, score
    return best


def object_state(obj: str, action: str) -> str:
    for name, state in OBJECT_STATES.items():
        if name in obj.lower():
            return state
    short = " ".join(action.split()[:4]).rstrip(".,")
    return f"in use ({short})"[:80]


def _chunks(total: int, seed: int, key: str) -> list[int]:
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


def _morning_steps() -> list[str]:
    return ["waking up and stretching", "brushing teeth at the sink", "taking a shower", "getting dressed"]


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
    return (
        lowered.startswith(MEAL_VERBS) and any(w in lowered for w in MEAL_WORDS) or lowered.startswith("eat")
    )


def _steps_text(activity: str, count: int, resuming: bool = False, key: str = "",
                seed: int = 0) -> list[str]:
    filler = None
    event = _event_steps(activity, count, key, seed)
    if event is not None:
        return event
    if activity.lower().startswith(MORNING_VERBS):
        pattern = _morning_steps()
    elif is_meal(activity):
        pattern, filler = _meal_steps(activity), "taking it easy after the meal"
    else:
        active = _any_starts(_words(activity), ACTIVE)
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


def _pick(options: list[str], activity: str, preferred: list[str | None]) -> str:
    """An option the activity names ("go to the party at Hobbs Cafe"), else the first
    preferred one offered, else the one sharing most of the activity's words."""
    named = [o for o in options if len(o) > 4 and o.lower() in activity.lower()]
    if named:
        return max(named, key=len)
    for choice in preferred:
        if choice in options:
            return choice
    stems = keywords(activity)
    return sorted(options, key=lambda o: -sum(s in o.lower() for s in stems))[0]


class OfflineModel(LanguageModel):
    """Answers every purpose from its structured context; embeds with feature hashing."""

    label = OFFLINE_LABEL
    embedding_model = "offline-hashing-256"

    def __init__(self, seed: int = 0, embedding_dim: int = 256) -> None:
        self.seed = seed
        self.embedding_dim = embedding_dim
        self._embedder = HashingEmbedder(embedding_dim)
        self.invalid_answers: Counter[str] = Counter()  # by purpose: answers from defaults
        self.last_error = ""
        warm_up()  # the inflection table and the phrase banks, loaded here rather than in a tick
        banks()
        self._responders: dict[str, Callable[[Mapping[str, Any]], BaseModel]] = {
            "importance": self._importance,
            "day_plan": self._day_plan,
            "hourly_schedule": self._hourly_schedule,
            "choose_place": self._choose_place,
            "decompose": self._decompose,
            "summary": social.summary,
            "reflection_questions": social.reflection_questions,
            "insights": lambda c: social.insights_for_questions(c, score_importance),
            "react": self._react,
            "relationship": social.relationship,
            "revise_plan": social.plan_revision,
            "utterance": lambda c: talk.utterance(c, score_importance, self.seed),
            "conversation": lambda c: talk.whole_conversation(c, score_importance, self.seed),
            "takeaways": lambda c: talk.joint_takeaways(c, score_importance),
            "answer": lambda c: interview.answer(c, self.seed),
            "rank_answers": judge.rank,
            "label_answers": judge.label,
        }

    def register(self, purpose: str, responder: Callable[[Mapping[str, Any]], BaseModel]) -> None:
        """Let later parts of the mind teach the offline model a new purpose."""
        self._responders[purpose] = responder

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        responder = self._responders.get(request.purpose)
        if responder is None:
            return request.default()
        try:
            answer = responder(request.context)
            return request.schema.model_validate(answer.model_dump())
        except Exception as error:  # noqa: BLE001 - a rule's mistake costs one answer, not the tick
            # A pattern the schema refuses, or a context a rule misread: the safe answer,
            # counted and logged (`reply` hands it on as a fallback).
            self.invalid_answers[request.purpose] += 1
            self.last_error = f"the offline rules for {request.purpose} failed: {error!r}"
            LOG.warning("%s (%s); its default answer was used", self.last_error,
                        request.agent or "the town")
            return request.default()

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        """As `ask`, but an answer from the default comes back as a problem, so that the
        stack counts it as a fallback."""
        failures = sum(self.invalid_answers.values())
        reply = await super().reply(request)
        if sum(self.invalid_answers.values()) == failures:
            return reply
        return dataclasses.replace(reply, answer=None, problem=self.last_error,
                                   problem_kind="offline_error")

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        return self._embedder.embed(list(texts))

    def _importance(self, context: Mapping[str, Any]) -> ImportanceScores:
        return ImportanceScores(scores=[score_importance(t) for t in context["texts"]])

    def _react(self, context: Mapping[str, Any]) -> BaseModel:
        chance = seeded_index(self.seed, context["name"], context["subject"], context["day"],
                              context["status"], modulo=100)
        return social.react(context, chance)

    @staticmethod
    def _with_appointments(context: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The routine with today's appointments from memory cut in."""
        routine = [dict(step) for step in context["routine"]]
        if not context.get("date"):
            return routine
        found = social.appointments(list(context.get("intentions", [])), context.get("date", ""),
                                    context.get("name", ""), list(context.get("places", [])))
        if not found or not context.get("date"):
            return routine
        for event in found:
            steps = [s for s in routine
                     if not event["start"] <= parse_clock(s["at"]) < event["end"]]
            before = [s for s in steps if parse_clock(s["at"]) < event["start"]]
            resume = dict(before[-1]) if before else None
            steps.append({"at": f"{event['start'] // 60:02d}:{event['start'] % 60:02d}",
                          "do": event["activity"], "where": ""})
            if resume and all(parse_clock(s["at"]) != event["end"] for s in steps):
                resume["at"] = f"{event['end'] // 60:02d}:{event['end'] % 60:02d}"
                steps.append(resume)
            routine = sorted(steps, key=lambda s: parse_clock(s["at"]))
        return routine

    @staticmethod
    def _from_now(routine: list[dict[str, Any]], context: Mapping[str, Any]) -> list[dict[str, Any]]:
        """When replanning: the rest of the day, opening with the new decision if there is one."""
        begins = context.get("from")
        if begins is None:
            return routine
        earlier = [s for s in routine if parse_clock(s["at"]) <= begins]
        later = [s for s in routine if parse_clock(s["at"]) > begins]
        at = f"{begins // 60:02d}:{begins % 60:02d}"
        rest = ([{**earlier[-1], "at": at}] if earlier else []) + later
        directive = context.get("directive")
        if directive and rest:
            resume = begins + 30
            rest = [{"at": at, "do": f"think over a new decision ({directive})", "where": ""}] + [
                {**s, "at": f"{max(resume, parse_clock(s['at'])) // 60:02d}:"
                           f"{max(resume, parse_clock(s['at'])) % 60:02d}"} for s in rest[:1]] \
                + [s for s in rest[1:] if parse_clock(s["at"]) > resume]
        return rest

    def _day_plan(self, context: Mapping[str, Any]) -> DayPlan:
        routine = self._with_appointments(context)
        while len(routine) > 8:
            gaps = [
                parse_clock(b["at"]) - parse_clock(a["at"])
                for a, b in zip(routine, routine[1:], strict=False)
            ]
            merge = min(range(1, len(gaps)), key=lambda i: gaps[i]) if len(gaps) > 1 else 0
            first, second = routine[merge], routine[merge + 1]
            routine[merge] = {**first, "do": f"{first['do']}, then {second['do']}"}
            del routine[merge + 1]
        items = [f"{step['do']} at {clock_face(parse_clock(step['at']))}" for step in routine]
        while len(items) < 3:
            items.append("get on with whatever the day brings")
        return DayPlan(items=items)

    def _hourly_schedule(self, context: Mapping[str, Any]) -> HourlySchedule:
        """The routine, with today's appointments cut in, in blocks of one to two hours; each
        routine block at its routine place when that is known (an appointment's is chosen when
        it begins)."""
        routine = self._from_now(self._with_appointments(context), context)
        known = context.get("known") or {}

        def place(step: Mapping[str, Any]) -> str:
            sector, _, arena = str(step.get("where", "")).rpartition(": ")
            return f"{sector}: {arena}" if arena in known.get(sector, ()) else ""
        blocks: list[ScheduleBlock] = []
        carried: int | None = None  # start of a too-short first step, folded into the next
        for step, following in zip(routine, routine[1:], strict=False):
            start, end = parse_clock(step["at"]), parse_clock(following["at"])
            if carried is not None:
                start, carried = carried, None
            if end - start < 5:  # too short for a block of its own: fold it into a neighbour
                if blocks:
                    blocks[-1] = blocks[-1].model_copy(
                        update={"minutes": blocks[-1].minutes + end - start})
                else:
                    carried = start
                continue
            # a long stretch of one activity becomes blocks of one and a half to two hours
            hours = max(2, round((end - start) / 110)) if end - start > 150 else 1
            edges = [start + (end - start) * i // hours for i in range(hours + 1)]
            for index in range(hours):
                activity = (
                    step["do"]
                    if index == 0
                    else (
                        f"finish off: {step['do']}"
                        if index == hours - 1 and hours > 2
                        else f"continue to {step['do']}"
                    )
                )
                blocks.append(
                    ScheduleBlock(
                        start=f"{edges[index] // 60:02d}:{edges[index] % 60:02d}",
                        minutes=edges[index + 1] - edges[index],
                        activity=activity,
                        place=place(step),
                    )
                )
        return HourlySchedule(blocks=blocks)

    def _choose_place(self, context: Mapping[str, Any]) -> PlaceAndArea:
        """The place the activity names, else the routine's, else where the agent is, else
        the one whose name shares the activity's words; then the area the same way."""
        places: dict[str, list[str]] = {k: list(v) for k, v in context["places"].items()}
        activity = str(context.get("activity", ""))
        hint, current = (list(context.get(key) or [None, None]) for key in ("hint", "current"))
        sector = _pick(sorted(places), activity, [hint[0], current[0]])
        area = _pick(places[sector], activity, [hint[1] if hint[0] == sector else None,
                                                current[1] if current[0] == sector else None])
        return PlaceAndArea(place=sector, area=area)

    def _decompose(self, context: Mapping[str, Any]) -> Decomposition:
        activity = str(context["activity"])
        objects: list[str] = list(context["objects"])
        key = f"{context.get('agent')}|{context.get('start')}|{activity}"
        if activity.lower().startswith(BEDTIME_STARTS):
            bed = pick_object("sleep bed", objects, self.seed)
            return Decomposition(
                steps=[
                    Step(
                        minutes=15,
                        action="sleeping",
                        object=bed,
                        object_state=object_state(bed, "sleeping"),
                        emoji="😴",
                    )
                ]
            )
        minutes = int(context["minutes"])
        sizes = _chunks(minutes, self.seed, key)
        texts = _steps_text(activity, len(sizes), bool(context.get("resuming")), key, self.seed)
        steps = []
        for size, text in zip(sizes, texts, strict=True):
            obj = pick_object(f"{text} {activity}", objects, self.seed)
            steps.append(
                Step(
                    minutes=size,
                    action=re.sub(r"\s+", " ", text)[:300],
                    object=obj,
                    object_state=object_state(obj, text),
                    emoji=pick_emoji(text),
                )
            )
        return Decomposition(steps=steps)
