"""The mind fed real replies: recorded runs against small local models on llama-cpp-python in
json_object mode (see tests/real_run.py), replayed through the whole model stack: an hour of a
4-resident town and a talk with Qwen2.5-Coder-0.5B-Instruct, and the Lin family's morning with
Qwen2.5-Coder-1.5B-Instruct (tests/real_replies/qwen-1.5b-morning.jsonl). The models copy
examples, write placeholders, words where emoji belong and talk about themselves in the third
person; what reaches the transcript must not."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
import regex
from real_run import MORNING_TICKS, scripted_morning, scripted_run

from townbot.llm.local_embedding import MiniLMEmbedder
from townbot.llm.recording import ReplayModel
from townbot.llm.stack import build_model_stack

RECORDING = Path(__file__).parent / "real_replies" / "qwen-0.5b-hour.jsonl"
SHORTCODE = re.compile(r":[a-z_]{2,}:?")
THIRD_PERSON = re.compile(r"^\s*(?P<name>[A-Z][a-z]+)(?: [A-Z][a-z]+)? (?:is|was|has|likes|loves|thinks)\b")


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    import asyncio

    replay = ReplayModel(RECORDING, embedder=MiniLMEmbedder())
    model = build_model_stack(replay)
    events, answers = asyncio.run(scripted_run(model, tmp_path_factory.mktemp("replay") / "t.db"))
    return replay, model, events, answers


def test_the_recording_holds_the_flaws_real_models_have():
    records = [json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]
    problems = Counter(r["problem"] for r in records)
    assert problems["placeholder"] > 0, "the small model copies examples and writes placeholders"
    assert len(records) >= 20


def test_a_replayed_real_run_reads_cleanly(replayed):
    _, _, events, answers = replayed
    text = "\n".join([e.line() for e in events] + [a for _, a in answers])
    assert "..." not in text and "…" not in text
    assert not SHORTCODE.search(text)
    for resident, answer in answers:
        spoken = THIRD_PERSON.match(answer)
        assert not (spoken and resident.startswith(spoken["name"])), answer


def test_the_replay_says_how_many_replies_were_repaired_or_defaulted(replayed):
    replay, model, _, _ = replayed
    outcomes = dict(model.report().outcomes)
    print(f"replayed outcomes: {outcomes}; replies found by prompt {replay.replay.exact}, "
          f"in order {replay.replay.in_order}, missing {replay.replay.missing}")
    assert outcomes == EXPECTED_OUTCOMES


# 37 calls against today's prompts, every reply found by its prompt: the importance ratings
# are right; most else copies the examples' lighthouse keeper (refused; repairs rarely help),
# so 18 calls are answered by defaults (benchmarks/real_model.py --hours 1: 49%).
EXPECTED_OUTCOMES = {"ok": 13, "repaired": 6, "fallback": 18}


TALK_RECORDING = Path(__file__).parent / "real_replies" / "qwen-0.5b-talk.jsonl"


@pytest.fixture(scope="module")
def talk_replayed():
    import asyncio

    from real_run import scripted_talk

    replay = ReplayModel(TALK_RECORDING, embedder=MiniLMEmbedder())
    model = build_model_stack(replay)
    remembered = asyncio.run(scripted_talk(model))
    return replay, model, remembered


def test_a_replayed_talk_and_reflection_remember_only_real_text(talk_replayed):
    """The takeaways of both participants come from one call, the insights of the three
    questions from one call; what the small model got wrong is repaired or defaulted, counted,
    and what reaches memory holds no placeholder."""
    replay, model, remembered = talk_replayed
    asked = [r["purpose"] for r in replay.records]
    assert asked.count("takeaways") <= 2 and asked.count("insights") <= 2, "one call each, and a repair"
    assert replay.replay.missing == 0
    for texts in remembered.values():
        assert any(" talked with " in t for t in texts)
        for text in texts:
            assert "..." not in text and "…" not in text and not SHORTCODE.search(text)
    outcomes = dict(model.report().outcomes)
    print(f"replayed outcomes: {outcomes}")
    assert outcomes == TALK_OUTCOMES


# 6 calls in the live run and the replay alike, recorded against today's prompts: the
# importance of the seed memories (2, ok), one takeaways call for both (accepted, though its
# one fact borrows the instructions' "not the ones you are asked about"), the importance of the
# talks (ok), the reflection's questions (the example copied back, and again in the repair:
# defaulted) and its one insights call (ok).
TALK_OUTCOMES = {"ok": 5, "fallback": 1}


MORNING = Path(__file__).parent / "real_replies" / "qwen-1.5b-morning.jsonl"
# The morning before trouble was noticed from every room: the stove burned unseen in the Lin
# kitchen, and Mei and Eddy talked (read by benchmarks/real_model.py, not replayed).
EARLIER_MORNING = MORNING.with_name("qwen-1.5b-morning-earlier.jsonl")
SMALL_MORNING = MORNING.with_name("qwen-0.5b-morning.jsonl")  # the 0.5B model's, read alike
MORNING_REPLAYED_TICKS = MORNING_TICKS  # the whole recorded morning, interviews included
# 30 calls live (27 ok, 2 repaired, 1 defaulted: benchmarks/real_model.py), 21 of their 33
# replies taken from the earlier morning for the very same prompts (tests/real_run.py --reuse);
# every reply is found by its prompt.
MORNING_OUTCOMES = {"ok": 27, "repaired": 2, "fallback": 1}
INVENTED = re.compile(r"Wren|Tallis|Gullrock|Odo Marsh|Skerry|Juniper")  # the examples' cast
CLOCK_IN_TEXT = re.compile(r"\d{1,2}:\d{2}\s*[ap]m|\b\d{1,2}\s*[ap]m\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def morning_replayed(tmp_path_factory):
    import asyncio

    replay = ReplayModel(MORNING, embedder=MiniLMEmbedder())
    model = build_model_stack(replay)
    events, answers = asyncio.run(scripted_morning(
        model, tmp_path_factory.mktemp("morning") / "t.db", ticks=MORNING_REPLAYED_TICKS,
        interviews=MORNING_REPLAYED_TICKS == MORNING_TICKS))
    return replay, model, events, answers


def test_a_replayed_1_5b_morning_finds_a_reply_for_every_call(morning_replayed):
    replay, model, _, _ = morning_replayed
    outcomes = dict(model.report().outcomes)
    print(f"replayed outcomes: {outcomes}; by prompt {replay.replay.exact}, in order "
          f"{replay.replay.in_order}, missing {replay.replay.missing}")
    assert replay.replay.missing == 0 and replay.replay.in_order == 0
    assert outcomes == MORNING_OUTCOMES


def test_what_the_1_5b_model_did_reads_as_its_own(morning_replayed):
    """No placeholder, shortcode, CJK text or copied name reaches the town, and no clock time
    the model wrote into an activity reaches the transcript (an interview may give times)."""
    _, _, events, answers = morning_replayed
    activities = "\n".join(e.line().split(" ", 1)[-1] for e in events)
    text = "\n".join([activities, *(a for _, a in answers)])
    assert events and "..." not in text and "…" not in text and not SHORTCODE.search(text)
    assert not regex.search(r"\p{Han}", text) and not INVENTED.search(text)
    assert not CLOCK_IN_TEXT.search(activities), activities


def test_the_family_deals_with_the_stove_set_burning(morning_replayed):
    """The stove set burning at 07:50 is seen from the other rooms of the house, and what the
    1.5B model answered (turn it off) is what a resident then does."""
    _, _, events, _ = morning_replayed
    fire = next(i for i, e in enumerate(events) if e.kind == "object" and "burning" in e.text)
    dealing = [e for e in events[fire + 1:] if e.kind == "action" and e.place == "kitchen: stove"]
    assert dealing and "stove" in dealing[0].text, [e.line() for e in events[fire:fire + 5]]


def test_the_recording_meets_the_goals_that_do_not_depend_on_its_length():
    """What benchmarks/real_model.py prints for the mornings (1.5B and 0.5B): no accepted reply
    names what it was not offered, no right answer to the burning stove is refused (and in the
    1.5B morning someone reacts to it), and every refusal says why."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        from real_model import alarm_reactions, read_calls, strangers
    finally:
        sys.path.pop(0)
    for recording in (MORNING, EARLIER_MORNING, SMALL_MORNING):
        calls = read_calls(recording)
        accepted = [r for c in calls for r in c.replies if r.get("problem") is None]
        assert [s for r in accepted for s in strangers(r)] == []
        assert not [r for r, right in alarm_reactions(calls) if right and r.get("problem")]
        assert all(r.get("why") for c in calls for r in c.replies if r.get("problem"))
    assert any(right for _, right in alarm_reactions(read_calls(MORNING))), "the fire is seen"
