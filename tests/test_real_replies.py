"""The mind fed real replies: a recorded run of a 4-resident town against a small local model
(Qwen2.5-Coder-0.5B-Instruct on llama-cpp-python, json_object mode; see tests/real_run.py),
replayed through the whole model stack. The model copies examples, writes placeholders and
talks about itself in the third person; what reaches the transcript must not."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from real_run import scripted_run

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


# 39 calls. This recording was made with the prompts before they were reordered for prefix
# caching (issue 37), so none of its replies is found by its prompt: they are given in order of
# purpose, and 4 calls find none left (failed). Judged by the fairer echo rule (issue 34), most
# of what the 0.5B model said is now usable.
EXPECTED_OUTCOMES = {"ok": 24, "fallback": 11, "failed": 4}


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


# 8 calls in the live run and the replay alike: the importance of the seed memories (2, ok),
# one takeaways call for both (the example's facts copied back: refused, repaired, defaulted),
# the importance of the talks (2, ok), the reflection's questions and its one insights call
# (examples copied back: defaulted), the default insight's importance (ok).
TALK_OUTCOMES = {"ok": 5}  # replies to the prompts before they were reordered (see above)
