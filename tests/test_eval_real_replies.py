"""`townbot eval`'s harness on real, flawed answers (issue 33 item 6): the town a recorded run of
Qwen2.5-Coder-0.5B made (tests/real_run.py, replayed), evaluated with that run's recorded
interview replies. The small model copies the prompt's example; the evaluation must count what
it refused, rate what is left, and write a report that says which model and judge it had."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from real_run import scripted_run

from townbot.eval.report import build_report, write_report
from townbot.eval.run import EvalOptions, evaluate
from townbot.eval.snapshot import read_town
from townbot.llm.local_embedding import MiniLMEmbedder
from townbot.llm.metering import CollectedUsage
from townbot.llm.offline import OfflineModel
from townbot.llm.recording import ReplayModel
from townbot.llm.settings import ModelSettings
from townbot.llm.stack import build_model_stack
from townbot.world.loading import load_world, select_residents

RECORDING = Path(__file__).parent / "real_replies" / "qwen-0.5b-hour.jsonl"
COPIED_EXAMPLE = "put out the Gullrock lamp"  # the answer prompt's example, about an invented keeper
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("real")
    embedder = MiniLMEmbedder()
    db = folder / "town.db"
    asyncio.run(scripted_run(build_model_stack(ReplayModel(RECORDING, embedder=embedder)), db))

    async def evaluate_it():
        world = select_residents(load_world(ROOT / "world.yaml", ROOT / "personas"), "4")
        snapshot = await read_town(db, world)
        usage = CollectedUsage()
        residents = ReplayModel(RECORDING, embedder=embedder, label="qwen-0.5b (recorded)")
        model = build_model_stack(residents, usage=usage)
        judge = build_model_stack(OfflineModel(), usage=usage)
        run = await evaluate(snapshot, model, judge, ModelSettings(),
                             EvalOptions(orders=5), usage)
        return run, residents

    run, residents = asyncio.run(evaluate_it())
    report = build_report([run], {"model": "qwen-0.5b (recorded replies)",
                                  "embedding_model": embedder.name, "judge": "offline model",
                                  "judge_kind": "offline rule", "conditions": ["full"],
                                  "seeds": [0], "max_calls": None, "retrieval_count": 10,
                                  "rankings": True, "orders": 5}, None, 1.0)
    return run, residents, write_report(report, folder / "report")


def test_the_recorded_answers_reach_the_evaluation_and_their_flaws_are_counted(evaluated):
    run, residents, _ = evaluated
    recorded = [r["raw"] for r in residents.records if r["purpose"] == "answer"]
    assert residents.replay.in_order + residents.replay.exact >= len(recorded) > 0
    answers = [i["answer"] for i in run["interviews"]]
    # The small model copied the prompt's example back; the check refused every copy.
    assert any(COPIED_EXAMPLE in raw for raw in recorded)
    assert not any(COPIED_EXAMPLE in a for a in answers)
    assert run["cost"]["fallbacks"] >= len(recorded)
    assert "answers were defaults" in evaluated[2].read_text()
    assert len(answers) == 4 * 25 * 4


def test_the_report_of_a_real_run_names_its_model_and_judge_and_counts(evaluated):
    run, _, path = evaluated
    markdown = path.read_text()
    assert markdown.splitlines()[2].startswith("**model: qwen-0.5b (recorded replies); judge: "
                                               "offline model (offline rule) - offline:")
    assert "the mean of 5 match orders" in markdown
    assert "yeses unbacked by a memory" in markdown and "pairs lost:" in markdown
    relationships = run["hallucination"]["relationships"]
    assert relationships["claims"] <= 2 * 4 * 3
    assert run["network"]["start"]["density"] >= 0
