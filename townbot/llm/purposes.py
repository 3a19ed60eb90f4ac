"""The answer schema of every purpose the mind asks a model for.

Small integer ranges are enums (Literal) because one structured-output grammar ignores
minimum/maximum. A question that picks from a list (an object in the room, a known place and
area, a participant of a conversation) gets a schema with the list as an enum (`*_among`), so
that a server enforcing schemas cannot name anything else; a list longer than ENUM_LIMIT keeps
the plain schema and the question's check alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

Score = Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
ChunkMinutes = Literal[5, 10, 15]
Line = Annotated[str, Field(min_length=1, max_length=300)]
ENUM_LIMIT = 80  # longer lists would swell every request's schema: the check refuses instead
SCHEMAS_KEPT = 2048  # schemas made for lists of choices (each list is a town's, so they recur)


class ImportanceScores(BaseModel):
    """purpose 'importance': one poignancy score per memory text, in order."""

    scores: list[Score]


@cache
def importance_scores(count: int) -> type[ImportanceScores]:
    """ImportanceScores for exactly `count` memories: a schema-following server cannot give
    another count, and the others are told the count by the schema as well as the prompt."""
    return create_model("ImportanceScores", __base__=ImportanceScores,
                        scores=(Annotated[list[Score], Field(min_length=count, max_length=count)], ...))


class DayPlan(BaseModel):
    """purpose 'day_plan': the day in broad strokes."""

    items: Annotated[list[Line], Field(min_length=3, max_length=10)]


class ScheduleBlock(BaseModel):
    start: str = Field(pattern=r"^\d{2}:\d{2}$")
    minutes: Annotated[int, Field(ge=5, le=720)]
    activity: Line
    place: Annotated[str, Field(max_length=200)] = ""  # "sector: arena"; "" to choose later


class HourlySchedule(BaseModel):
    """purpose 'hourly_schedule': the waking day as hour-level blocks, each with the known
    place and area it happens in (a place that is not known is chosen when the block begins)."""

    blocks: Annotated[list[ScheduleBlock], Field(min_length=1, max_length=40)]


class PlaceChoice(BaseModel):
    """One of the offered names (the simplest schema: the model layer's tests use it)."""

    choice: Line


class PlaceAndArea(BaseModel):
    """purpose 'choose_place': a known place and one of its areas."""

    place: Line
    area: Line


class Step(BaseModel):
    minutes: ChunkMinutes
    action: Line
    object: Line
    object_state: Annotated[str, Field(min_length=1, max_length=80)]
    emoji: Annotated[str, Field(min_length=1, max_length=16)]


class Decomposition(BaseModel):
    """purpose 'decompose': an hour-level block as 5-15 minute steps, each with its object."""

    steps: Annotated[list[Step], Field(min_length=1, max_length=40)]


class AgentSummary(BaseModel):
    """purpose 'summary': the paper's three summaries of an agent."""

    core: Line
    occupation: Line
    feeling: Line


class ReflectionQuestions(BaseModel):
    """purpose 'reflection_questions': the most salient high-level questions."""

    questions: Annotated[list[Line], Field(min_length=1, max_length=3)]


class Insight(BaseModel):
    question: int | None = None  # the number of the question it answers
    text: Line
    evidence: Annotated[list[int], Field(min_length=1, max_length=10)]
    importance: Score | None = None  # None: scored the usual way


class Insights(BaseModel):
    """purpose 'insights': up to five insights per question (three questions at most), citing
    numbered statements as evidence, each rated for importance as it is drawn (no importance
    call of its own)."""

    insights: Annotated[list[Insight], Field(min_length=1, max_length=15)]


class Reaction(BaseModel):
    """purpose 'react': continue the plan, or react (talk to a person, deal with an object);
    for a person, `wait` instead means waiting for them to finish before going on."""

    react: bool
    wait: bool = False
    action: Annotated[str, Field(max_length=200)] = ""
    minutes: Literal[5, 10, 15, 20, 30] = 10
    object_state: Annotated[str, Field(max_length=80)] = ""
    emoji: Annotated[str, Field(max_length=16)] = "❗"


class PlanRevision(BaseModel):
    """purpose 'revise_plan': whether news changes the rest of today's plan, and how."""

    revise: bool
    reason: Annotated[str, Field(max_length=300)] = ""


class Relationship(BaseModel):
    """purpose 'relationship': what the speaker's relationship with the listener is."""

    text: Annotated[str, Field(min_length=1, max_length=400)]


class Utterance(BaseModel):
    """purpose 'utterance': the next line of a conversation, and whether it ends it."""

    text: Annotated[str, Field(min_length=1, max_length=400)]
    end: bool


class Exchange(BaseModel):
    speaker: Line
    text: Annotated[str, Field(min_length=1, max_length=400)]


class WholeConversation(BaseModel):
    """purpose 'conversation': a whole exchange in one call (the cheaper setting)."""

    lines: Annotated[list[Exchange], Field(min_length=2, max_length=16)]


class PersonTakeaways(BaseModel):
    """What one participant learned, with the importance of each fact (`scores`, in order) and
    of the conversation itself, so that neither waits for an importance call. Missing or
    miscounted scores are asked for the usual way."""

    name: Line
    facts: Annotated[list[Line], Field(max_length=5)] = []
    scores: Annotated[list[Score], Field(max_length=5)] = []
    importance: Score | None = None


class Takeaways(BaseModel):
    """purpose 'takeaways': what each participant of a conversation learned from it (one call
    for both)."""

    learned: Annotated[list[PersonTakeaways], Field(min_length=1, max_length=2)]


class Answer(BaseModel):
    """purpose 'answer': a reply in the agent's own voice."""

    text: Annotated[str, Field(min_length=1, max_length=1200)]


class Ready(BaseModel):
    """purpose 'probe': the start-up check's tiny structured request."""

    status: Literal["ready"]
    count: Literal[1, 2, 3]


class Ranking(BaseModel):
    """purpose 'rank_answers': the letters of the answers, most believable first."""

    order: Annotated[list[Annotated[str, Field(pattern=r"^[A-Z]$")]], Field(min_length=2,
                                                                            max_length=8)]


class Labels(BaseModel):
    """purpose 'label_answers': one yes or no per numbered answer, in order."""

    labels: Annotated[list[Literal["yes", "no"]], Field(min_length=1, max_length=40)]


# --- schemas whose choices are the question's own list -----------------------------------------


def choice_of(options: Iterable[str]) -> Any:
    """A Literal of the options (in their order, once each), or None when there are none or
    too many to send as an enum."""
    unique = tuple(dict.fromkeys(options))
    if not unique or len(unique) > ENUM_LIMIT:
        return None
    return Literal[unique]  # type: ignore[valid-type]


def _items_choosing(outer: type[BaseModel], items: str, inner: type[BaseModel], field: str,
                    choice: Any, bounds: tuple[int, int], default: Any = ...) -> Any:
    """`outer` whose list `items` holds `inner`s with `field` one of `choice`."""
    item = create_model(inner.__name__, __base__=inner, **{field: (choice, default)})
    low, high = bounds
    return create_model(outer.__name__, __base__=outer, **{
        items: (Annotated[list[item], Field(min_length=low, max_length=high)], ...)})


@lru_cache(maxsize=SCHEMAS_KEPT)
def decomposition_among(objects: tuple[str, ...]) -> type[Decomposition]:
    """Decomposition whose steps name one of `objects`."""
    choice = choice_of(objects)
    if choice is None:
        return Decomposition
    return _items_choosing(Decomposition, "steps", Step, "object", choice, (1, 40))


@lru_cache(maxsize=SCHEMAS_KEPT)
def place_and_area_among(places: tuple[str, ...], areas: tuple[str, ...]) -> type[PlaceAndArea]:
    """PlaceAndArea naming one of `places` and one of `areas` (which area belongs to which
    place is still the question's check)."""
    place, area = choice_of(places), choice_of(areas)
    if place is None or area is None:
        return PlaceAndArea
    return create_model("PlaceAndArea", __base__=PlaceAndArea, place=(place, ...), area=(area, ...))


@lru_cache(maxsize=SCHEMAS_KEPT)
def schedule_among(spots: tuple[str, ...]) -> type[HourlySchedule]:
    """HourlySchedule whose blocks name one of `spots` ("place: area"), or "" to choose later."""
    choice = choice_of(("", *spots))
    if choice is None or not spots:
        return HourlySchedule
    return _items_choosing(HourlySchedule, "blocks", ScheduleBlock, "place", choice, (1, 40), "")


@lru_cache(maxsize=SCHEMAS_KEPT)
def conversation_among(names: tuple[str, ...]) -> type[WholeConversation]:
    """WholeConversation whose speakers are the participants."""
    choice = choice_of(names)
    if choice is None:
        return WholeConversation
    return _items_choosing(WholeConversation, "lines", Exchange, "speaker", choice, (2, 16))


@lru_cache(maxsize=SCHEMAS_KEPT)
def takeaways_among(names: tuple[str, ...]) -> type[Takeaways]:
    """Takeaways with one entry per participant, each named as one of them."""
    choice = choice_of(names)
    if choice is None:
        return Takeaways
    return _items_choosing(Takeaways, "learned", PersonTakeaways, "name", choice, (1, 2))
