"""Replies judged like a careful reader: placeholders, copied examples, echoed instructions,
shortcodes for emoji and the wrong person are refused; slightly-off values are mended."""

from __future__ import annotations

import json

import pytest

from townbot.llm.port import Ask
from townbot.llm.purposes import Answer, Decomposition, HourlySchedule, ImportanceScores, Insights, Reaction
from townbot.llm.structured import portable_schema, read_answer


def ask(purpose: str, schema, **context) -> Ask:
    return Ask(purpose=purpose, prompt="(prompt)", schema=schema, default=lambda: None,
               context=context, agent=context.get("name"))


def step(**fields) -> str:
    base = {"minutes": 10, "action": "pour the coffee", "object": "counter",
            "object_state": "busy", "emoji": "☕"}
    return json.dumps({"steps": [{**base, **fields}]})


@pytest.mark.parametrize("reply, complaint", [
    (step(action="..."), "placeholder"),
    (step(action="   "), "placeholder"),
    (step(action="Action"), "placeholder"),
    (step(object_state="<state of the object>"), "placeholder"),
    (step(emoji=":smiling_cat"), "emoji characters"),
    (step(emoji="coffee"), "emoji characters"),
    (step(action="Break this into steps of 5, 10 or 15 minutes"), "repeats the instructions"),
])
def test_placeholders_shortcodes_and_echoes_are_refused(reply: str, complaint: str):
    answer, problem, kind, _ = read_answer(ask("decompose", Decomposition), reply)
    assert answer is None and complaint in problem and kind == "placeholder"


def test_a_real_step_passes():
    answer, problem, _, _ = read_answer(ask("decompose", Decomposition), step())
    assert problem is None and answer.steps[0].action == "pour the coffee"


@pytest.mark.parametrize("text, refused", [
    ("Isabella is planning a party at the cafe.", True),
    ("I am planning a party. Isabella Rodriguez has invited everyone.", True),
    ("I'm Isabella, and I am planning a party at Hobbs Cafe on the 14th.", False),
    ("I told Maria that Isabella's party starts at five.", False),
])
def test_an_interview_answer_must_be_in_the_first_person(text: str, refused: bool):
    answer, problem, _, _ = read_answer(ask("answer", Answer, name="Isabella Rodriguez"),
                                        json.dumps({"text": text}))
    assert (answer is None) == refused, problem
    if refused:
        assert "first person" in problem


def test_a_reaction_that_does_not_react_may_leave_its_action_empty():
    reply = json.dumps({"react": False, "action": "", "minutes": 10, "emoji": ""})
    answer, problem, _, _ = read_answer(ask("react", Reaction), reply)
    assert problem is None and answer.react is False


def test_slightly_off_values_are_mended_when_the_meaning_is_clear():
    reply = json.dumps({"steps": [{"minutes": 20, "action": "wipe the tables", "object": "table",
                                   "object_state": "being wiped", "emoji": "🧽"}]})
    answer, problem, _, mended = read_answer(ask("decompose", Decomposition), reply)
    assert problem is None and answer.steps[0].minutes == 15 and mended
    scores, problem, _, _ = read_answer(ask("importance", ImportanceScores),
                                        '{"scores": [0, 11, "7", 4.6]}')
    assert problem is None and scores.scores == [1, 10, 7, 5]
    insights = {"insights": [{"text": f"insight number {i}", "evidence": [1]} for i in range(17)]}
    many, problem, _, _ = read_answer(ask("insights", Insights), json.dumps(insights))
    assert problem is None and len(many.insights) == 15


def test_values_far_off_are_still_refused():
    _, problem, kind, _ = read_answer(ask("importance", ImportanceScores), '{"scores": [70]}')
    assert kind == "wrong_shape" and "scores" in problem


def test_patterns_are_checked_here_not_sent_to_grammars_that_choke_on_them():
    schema = json.dumps(portable_schema(HourlySchedule))
    assert "pattern" not in schema and "maxLength" not in schema
    reply = '{"blocks": [{"start": "8am", "minutes": 60, "activity": "open the cafe"}]}'
    _, problem, kind, _ = read_answer(ask("hourly_schedule", HourlySchedule), reply)
    assert kind == "wrong_shape" and "pattern" in problem
