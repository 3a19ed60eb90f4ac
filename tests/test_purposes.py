"""Every purpose's typed question, from one table: its prompt renders, and the offline model's
answer and the safe default both fit the question's schema, the offline answer passing the
question's own check (so the offline town never leans on defaults)."""

from __future__ import annotations

from datetime import datetime

import pytest

from townbot.llm.offline import OfflineModel
from townbot.llm.purposes.answer import AnswerQuestion
from townbot.llm.purposes.choose_place import PlaceQuestion
from townbot.llm.purposes.common import Question, Recalled
from townbot.llm.purposes.conversation import ConversationQuestion
from townbot.llm.purposes.day_plan import DayPlanQuestion
from townbot.llm.purposes.decompose import DecomposeQuestion
from townbot.llm.purposes.hourly_schedule import ScheduleQuestion
from townbot.llm.purposes.importance import ImportanceQuestion
from townbot.llm.purposes.insights import InsightsQuestion
from townbot.llm.purposes.label_answers import LabelItem, LabelQuestion
from townbot.llm.purposes.probe import ProbeQuestion
from townbot.llm.purposes.rank_answers import RankQuestion
from townbot.llm.purposes.react import ReactQuestion
from townbot.llm.purposes.reflection_questions import SalientQuestions
from townbot.llm.purposes.relationship import RelationshipQuestion
from townbot.llm.purposes.revise_plan import RevisionQuestion
from townbot.llm.purposes.summary import SummaryQuestion
from townbot.llm.purposes.takeaways import TakeawaysQuestion
from townbot.llm.purposes.utterance import UtteranceQuestion
from townbot.world.model import World

NOON = datetime(2023, 2, 13, 12, 0)
PARTY = "Isabella Rodriguez is hosting a Valentine's Day party at Hobbs Cafe on February 13, " \
        "from 5 pm to 7 pm (heard from Maria Lopez)"
MEMORIES = (PARTY, "Klaus Mueller talked with Maria Lopez at Oak Hill College: about her thesis",
            "Klaus Mueller is reading a book", "the stove is burning")
RECALLED = tuple(Recalled(text, 5, kind)
                 for text, kind in zip(MEMORIES, ("conversation", "conversation", "observation",
                                                  "observation"), strict=True))
MOMENT = "Monday February 13, 2023, 12:00 pm"
TALK = (("Maria Lopez", "Hi Klaus! How is the paper going?"),
        ("Klaus Mueller", f"Slowly, Maria. Have you heard? {PARTY.split(' (')[0]}."))


def questions(world: World) -> list[Question]:
    klaus = world.personas["Klaus Mueller"]
    known = {s: list(world.sectors[s].arenas) for s in ("Hobbs Cafe", "Oak Hill College")}
    cafe = tuple(world.arena("Hobbs Cafe", "cafe").objects)
    return [
        ImportanceQuestion(klaus.name, klaus.identity(), MEMORIES),
        SummaryQuestion(klaus.name, klaus.background, klaus.currently, MEMORIES, (), MEMORIES[:1]),
        DayPlanQuestion(klaus, "Klaus is a student.", NOON, "", MEMORIES),
        ScheduleQuestion(klaus, NOON, ("study", "eat"), MEMORIES, known),
        ScheduleQuestion(klaus, NOON, ("study",), (), known, start=NOON, directive="go to the party"),
        PlaceQuestion(klaus, "have coffee", NOON, known, ("Oak Hill College", "library"),
                      ("Hobbs Cafe", "cafe")),
        DecomposeQuestion(klaus, "have coffee and read", "Hobbs Cafe: cafe", NOON, 60, cafe),
        RevisionQuestion(klaus.name, "Klaus is a student.", NOON, "reading",
                         ((13 * 60, "study"),), (PARTY,), ("Hobbs Cafe",)),
        ReactQuestion(klaus.name, "Klaus is a student.", NOON, "reading", "the stove is burning",
                      "object", "Hobbs Cafe: cafe: stove", "burning", MEMORIES),
        ReactQuestion(klaus.name, "Klaus is a student.", NOON, "reading", "Maria is painting",
                      "agent", "Maria Lopez", "painting", MEMORIES, "They talked yesterday."),
        SalientQuestions(klaus.name, MEMORIES),
        InsightsQuestion(klaus.name, ("What news has Klaus heard lately?", "What matters?"),
                         MEMORIES, ("conversation", "conversation", "observation", "observation"),
                         ((1, 2), (2, 3, 4))),
        RelationshipQuestion(klaus.name, "Klaus is a student.", "Maria Lopez", MEMORIES),
        RankQuestion(klaus, MEMORIES, "What are you reading?", {"A": "A book.", "B": "I'm sorry"}),
        LabelQuestion("of the party", (LabelItem("Any plans?", "The party at 5 pm!", ("party",)),),
                      ("The party at 5 pm!",)),
        ProbeQuestion(),
        UtteranceQuestion(klaus.name, "Maria Lopez", "Klaus is a student.", "reading",
                          "painting", "Klaus knows Maria Lopez.", "Hobbs Cafe", MOMENT, RECALLED,
                          TALK[:1], plans=("5:00 pm: attend the party",)),
        ConversationQuestion(klaus.name, "Maria Lopez", "Klaus is a student.",
                             "Maria is a student.", "reading", "painting", place="Hobbs Cafe",
                             moment=MOMENT, memories_a=RECALLED, known_b=RECALLED[:1]),
        TakeawaysQuestion((klaus.name, "Maria Lopez"), TALK, {klaus.name: "he"}),
        AnswerQuestion(klaus.name, "What are you doing this evening?", NOON, "Maria Lopez",
                       "Klaus is a student.", "reading", ("5:00 pm to 7:00 pm: attend the party",),
                       MEMORIES, klaus.background, {"Maria Lopez": [MEMORIES[1]]},
                       check=lambda answer: None),
    ]


def test_every_question_kind_is_in_the_table(world: World) -> None:
    assert {type(q) for q in questions(world)} == set(Question.__subclasses__())


@pytest.mark.parametrize("index", range(20))
async def test_the_offline_answer_and_the_default_fit_the_question(world: World,
                                                                    index: int) -> None:
    question = questions(world)[index]
    ask = question.ask("Klaus Mueller")
    assert ask.prompt.strip() and "$" not in ask.prompt and ask.context is question
    model = OfflineModel(seed=3)
    answer = await model.ask(ask)
    assert isinstance(answer, ask.schema) and question.problem(answer) is None
    assert not model.invalid_answers, "the offline answer did not fit its schema"
    ask.schema.model_validate(question.default().model_dump())
