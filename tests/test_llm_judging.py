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


# --- copies judged against the situation (issue 34) --------------------------------------------


def react_ask(observation: str, subject: str) -> Ask:
    from townbot.prompting import render

    prompt = render("react", summary="Eddy Lin is a music student who lives with his parents.",
                    time="7:50 am", first_name="Eddy", action="eating breakfast",
                    observation=observation, context="- (nothing)",
                    guidance=render("react_guidance_object", subject=subject))
    return Ask(purpose="react", prompt=prompt, schema=Reaction, default=lambda: None,
               context={"name": "Eddy Lin"}, agent="Eddy Lin")


def reaction(action: str) -> str:
    return json.dumps({"react": True, "action": action, "minutes": 10, "emoji": "🔥"})


def test_the_right_action_for_a_burning_stove_is_accepted():
    stove = react_ask("The stove in the kitchen is burning", "stove")
    for action in ("turn off the stove and open a window", "put out the fire on the stove",
                   "wake up and have breakfast at 7:00 am"):
        answer, problem, _, _ = read_answer(stove, reaction(action))
        assert problem is None and answer.action == action


def test_a_reply_repeating_the_examples_invented_specifics_is_refused():
    stove = react_ask("The stove in the kitchen is burning", "stove")
    for action in ("climb the tower and relight the Gullrock lamp", "check on Wren Tallis"):
        answer, problem, kind, _ = read_answer(stove, reaction(action))
        assert answer is None and kind == "placeholder" and "copies the example" in problem


def test_an_example_about_the_same_thing_as_the_situation_may_be_answered_with():
    """The example's action, in a situation that is about what the example is about, is the
    resident's own answer (only the example's invented names stay refused)."""
    lamp = react_ask("The lamp at the top of the tower flickers out", "lamp")
    answer, problem, _, _ = read_answer(lamp, reaction("climb the tower and relight the lamp"))
    assert problem is None
    _, problem, _, _ = read_answer(lamp, reaction("climb the tower and relight the Gullrock lamp"))
    assert "copies the example" in problem


def test_a_copied_step_is_refused_but_common_words_are_not():
    from townbot.prompting import render

    prompt = render("decompose", identity="Mei Lin is a professor.", first_name="Mei",
                    time="7:45 am", place="Lin family's house: kitchen", minutes=30,
                    activity="eat breakfast with Eddy", objects="stove, fridge, kitchen table")
    decompose = Ask(purpose="decompose", prompt=prompt, schema=Decomposition,
                    default=lambda: None, agent="Mei Lin")
    copied = step(action="wind the lamp clockwork", object="stove")
    assert "copies the example" in read_answer(decompose, copied)[1]
    own = step(action="make tea and note the time of the lecture", object="stove")
    assert read_answer(decompose, own)[1] is None


@pytest.mark.parametrize("emoji, ok", [
    ("☕", True), ("🛏️", True), ("👨‍👩‍👧", True), ("🇺🇸", True), ("⚙️📓", True), ("🍳 🔥", True),
    ("鏡子里的人", False), ("!!", False), ("7", False), ("→", False), ("☕!", False)])
def test_an_emoji_field_holds_emoji_and_nothing_else(emoji: str, ok: bool):
    _, problem, _, _ = read_answer(ask("decompose", Decomposition), step(emoji=emoji))
    assert (problem is None) == ok, problem


def test_a_schedule_place_outside_the_known_ones_is_left_to_choose_later():
    from townbot.llm.purposes import schedule_among

    reply = json.dumps({"blocks": [
        {"start": "08:00", "minutes": 60, "activity": "have coffee", "place": "Hobbs Cafe: cafe"},
        {"start": "09:00", "minutes": 60, "activity": "read", "place": "the moon: crater"}]})
    answer, problem, _, mended = read_answer(
        ask("hourly_schedule", schedule_among(("Hobbs Cafe: cafe",))), reply)
    assert problem is None and [b.place for b in answer.blocks] == ["Hobbs Cafe: cafe", ""]
    assert mended


def test_a_plan_kept_may_give_no_reason_as_the_prompt_shows():
    from townbot.llm.purposes import PlanRevision

    answer, problem, _, _ = read_answer(ask("revise_plan", PlanRevision),
                                        '{"revise": false, "reason": ""}')
    assert problem is None and answer.revise is False
