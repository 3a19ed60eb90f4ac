"""`townbot eval` on a small town written straight into a database, with scripted answers:
known density (1/6 at the start, 3/6 at the end), a known diffusion path (Isabella -> Sam ->
Maria), one resident who came to the party, and one planted hallucination (Klaus claims to know
of the party with no memory of it). The evaluation must not change the town."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import io
import json
import random
import re
from datetime import date, datetime, timedelta

import pytest
from fake_server import FakeOpenAIServer, minimal_answer, prompt_of, purpose_of, schema_of
from local_server import PROXY_VARIABLES, serving
from scripted import ScriptedModel

from townbot.cli import main
from townbot.eval.interviews import CONDITIONS, load_questions
from townbot.eval.judging import Ranked, not_told_apart, rank_answers, rate
from townbot.eval.report import build_report, write_report
from townbot.eval.run import EvalOptions, evaluate
from townbot.eval.snapshot import read_town
from townbot.llm.embedding import HashingEmbedder
from townbot.llm.metering import CollectedUsage
from townbot.llm.settings import ModelSettings
from townbot.llm.stack import build_model_stack
from townbot.mind.memory import Memory
from townbot.mind.state import MindState, PlanState
from townbot.store.database import Store, TickChanges
from townbot.town import news
from townbot.town.body import Body
from townbot.world.clock import format_game_time
from townbot.world.events import TownEvent

START = datetime(2023, 2, 13, 7, 0)
SEEDS = {
    "Isabella Rodriguez": ["Isabella Rodriguez runs Hobbs Cafe and loves hosting."],
    "Sam Moore": ["Sam Moore knows Isabella Rodriguez from the cafe."],
    "Maria Lopez": ["Maria Lopez studies physics with Klaus Mueller."],
    "Klaus Mueller": ["Klaus Mueller is good friends with Maria Lopez."],
}
PARTY = ("Isabella Rodriguez wants to throw a Valentine's Day party at Hobbs Cafe on February 14, "
         "from 5 pm to 7 pm")
LATER = {  # (game time, kind, text) after the start
    "Isabella Rodriguez": [
        (START + timedelta(hours=3), "conversation",
         "Isabella Rodriguez talked with Sam Moore at Hobbs Cafe: cafe. Isabella: Have you heard? "
         "I am throwing a party. Sam: Lovely!")],
    "Sam Moore": [
        (START + timedelta(hours=3), "conversation",
         "Sam Moore talked with Isabella Rodriguez at Hobbs Cafe: cafe. Isabella: Have you heard? "
         "I am throwing a party. Sam: Lovely!"),
        (START + timedelta(hours=3), "conversation",
         "Isabella Rodriguez is throwing a Valentine's Day party at Hobbs Cafe on February 14 "
         "(heard from Isabella Rodriguez)"),
        (START + timedelta(hours=26), "conversation",
         "Sam Moore talked with Maria Lopez at Johnson Park: park. Sam: Come along!")],
    "Maria Lopez": [
        (START + timedelta(hours=26), "conversation",
         "Maria Lopez talked with Sam Moore at Johnson Park: park. Sam: Come along!"),
        (START + timedelta(hours=26), "conversation",
         "There is a Valentine's Day party at Hobbs Cafe tomorrow evening")],
    "Klaus Mueller": [(START + timedelta(hours=5), "observation", "Klaus Mueller is reading")],
}
PARTY_START = datetime(2023, 2, 14, 17, 0)


def scripted_answer(request) -> dict:
    """Yes when a retrieved memory backs it, except Klaus, who always claims the party."""
    question, name = request.context.question, request.context.name
    memories = " ".join(request.context.memories)
    if "Valentine" in question:
        if name == "Klaus Mueller" or "Valentine" in memories:
            return {"text": "Yes, there is a Valentine's Day party at Hobbs Cafe."}
        return {"text": "No, I don't know about any party."}
    asked = re.search(r"Do you know of (.+)\?", question)
    if asked:
        return {"text": f"Yes, I know {asked.group(1)}."}
    return {"text": "I'm not sure - nothing comes to mind."}


@pytest.fixture
def small_world(world):
    personas = {name: dataclasses.replace(world.personas[name], seed_memories=tuple(texts))
                for name, texts in SEEDS.items()}
    return dataclasses.replace(world, personas=personas)


@pytest.fixture
async def small_town(small_world, tmp_path):
    return await write_small_town(small_world, tmp_path / "small.db")


async def write_small_town(small_world, db, embedding_model: str = "offline-hashing-256",
                           dim: int = 256):
    """Four residents, their memories, and the events that put Sam at the party."""
    store = await Store.open(db)
    embedder = HashingEmbedder(dim)
    bodies = {n: Body(p.home_sector, p.home_arena).to_dict() for n, p in small_world.personas.items()}
    plan = [{"start": "2023-02-14 17:00", "end": "2023-02-14 19:00",
             "activity": "attend the Valentine's Day party at Hobbs Cafe", "sector": "Hobbs Cafe",
             "arena": "cafe", "steps": [], "resumed": False}]
    minds = {n: MindState(PlanState(day=date(2023, 2, 14))).to_dict() for n in bodies}
    minds["Maria Lopez"]["blocks"] = plan
    town = await store.create_town("Smallville", format_game_time(START), 10, 0, "test",
                                   embedding_model, dim,
                                   {n: (bodies[n], minds[n]) for n in bodies}, {})
    changes = TickChanges(town.id, next_tick=216)  # 2023-02-14 19:00
    for name in small_world.personas:
        items = [(START, "observation", t) for t in SEEDS[name]]
        if name == "Isabella Rodriguez":
            items.append((START, "thought", PARTY))
        items += LATER[name]
        vectors = embedder.embed([text for _, _, text in items])
        for seq, ((when, kind, text), vector) in enumerate(zip(items, vectors, strict=True)):
            changes.new_memories.append((name, Memory(seq, kind, text, when, when, 5), vector))
    cafe = small_world.sectors["Hobbs Cafe"].channel
    park = small_world.sectors["Johnson Park"].channel
    changes.events += [
        TownEvent("2023-02-14 16:50", park, "action", "Sam Moore", "is gardening"),
        TownEvent("2023-02-14 17:05", cafe, "action", "Sam Moore", "is enjoying the party"),
        TownEvent("2023-02-14 17:10", park, "action", "Maria Lopez", "is reading"),
        TownEvent("2023-02-14 17:00", cafe, "action", "Isabella Rodriguez", "is hosting")]
    await store.save_tick(changes)
    await store.close()
    return db


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def run_small_eval(db, small_world, **options):
    options.setdefault("orders", 5)
    snapshot = await read_town(db, small_world)
    usage = CollectedUsage()
    model = build_model_stack(ScriptedModel({"answer": scripted_answer}), usage=usage)
    judge = build_model_stack(ScriptedModel(), usage=usage)
    return await evaluate(snapshot, model, judge, ModelSettings(), EvalOptions(**options), usage)


async def test_density_diffusion_attendance_and_the_planted_hallucination(small_town, small_world):
    before = digest(small_town)
    result = await run_small_eval(small_town, small_world, rankings=False)
    assert digest(small_town) == before, "the town's database is untouched"
    assert result["network"]["start"]["density"] == pytest.approx(1 / 6, abs=1e-3)
    assert result["network"]["start"]["edges"] == [["Klaus Mueller", "Maria Lopez"]]
    assert result["network"]["end"]["density"] == pytest.approx(3 / 6, abs=1e-3)
    party = result["events"]["party"]
    path = [(h["teller"], h["resident"], h["how"]) for h in party["diffusion"]]
    assert path == [(None, "Isabella Rodriguez", "originator"),
                    ("Isabella Rodriguez", "Sam Moore", "conversation"),
                    ("Sam Moore", "Maria Lopez", "conversation")]
    assert party["start"]["residents"] == ["Isabella Rodriguez"]
    assert party["end"]["residents"] == ["Isabella Rodriguez", "Maria Lopez", "Sam Moore"]
    assert party["end"]["share"] == 0.75
    assert party["attendance"]["invited"] == ["Maria Lopez", "Sam Moore"]
    assert party["attendance"]["came"] == ["Sam Moore"]
    hallucinated = [(e["resident"], e["subject"]) for e in result["hallucination"]["examples"]
                    if e["subject"] == "party"]
    assert hallucinated == [("Klaus Mueller", "party"), ("Klaus Mueller", "party")]
    awareness = result["hallucination"]["awareness"]
    assert (awareness["hallucinated"], awareness["claims"], awareness["said_yes"]) == (2, 6, 6)
    # Asked unguarded, the script says "Yes, I know X" of everyone: 9 of the 12 answers at the
    # start and 6 of 12 at the end have no memory naming X. The town's guard would have
    # answered each of those "I don't know them" without asking.
    relationships = result["hallucination"]["relationships"]
    assert (relationships["hallucinated"], relationships["claims"]) == (15, 24)
    assert relationships["guarded"] == {"hallucinated": 0, "claims": 9, "share": 0.0}
    assert result["network"]["gained"] == [["Isabella Rodriguez", "Sam Moore"],
                                           ["Maria Lopez", "Sam Moore"]]
    assert result["network"]["lost"] == []


async def test_interviews_store_answers_with_retrieved_memory_ids(small_town, small_world):
    result = await run_small_eval(small_town, small_world)
    interviews = result["interviews"]
    assert len(interviews) == 4 * 25 * len(CONDITIONS)
    assert {q["category"] for q in interviews} == {"self_knowledge", "memory", "plans",
                                                  "reactions", "reflections"}
    full = [q for q in interviews if q["condition"] == "full"]
    assert full and all(q["memory_ids"] for q in full)
    blank = [q for q in interviews if q["condition"] == "no_memory"]
    assert blank and all(q["memory_ids"] == [] for q in blank)
    # The stranger is asked about unguarded, as in the paper; the town would have answered.
    stranger = [q for q in interviews if q["question_id"] == "memory.2"]
    assert all("I don't know them" not in q["answer"] and q["town_guard"] for q in stranger)
    assert len(result["rankings"]) == 4 * 25
    assert set(result["ratings"]) == set(CONDITIONS)
    assert result["cost"]["calls"] > 0 and "rank_answers" in result["cost"]["purposes"]


def test_questions_are_five_categories_of_five():
    questions = load_questions()
    assert len(questions) == 25
    assert len({q.category for q in questions}) == 5


def test_rankings_become_trueskill_in_the_judged_order():
    order = ("full", "no_reflection", "no_reflection_planning", "no_memory")
    rankings = [Ranked("A", f"q{i}", "memory", order, order) for i in range(40)]
    ratings = rate(rankings, order, seed=1, orders=3)
    mus = [ratings[c].mu for c in order]
    assert mus == sorted(mus, reverse=True) and mus[0] > 25 > mus[-1]
    assert all(ratings[c].sigma < 25 / 3 for c in order)
    assert ratings["full"].mean_rank == 1.0 and ratings["no_memory"].mean_rank == 4.0


async def test_the_judge_sees_shuffled_letters_and_they_map_back(world):
    answers = {"full": "the BEST answer", "no_reflection": "second", "no_memory": "third"}

    def judge_script(request) -> dict:
        lettered = request.context.answers
        best = next(k for k, v in lettered.items() if "BEST" in v)
        return {"order": [best] + [k for k in lettered if k != best]}

    judge = ScriptedModel({"rank_answers": judge_script})
    ranked = await rank_answers(judge, world.personas["Sam Moore"], ["Sam gardens"],
                                "Who are you?", answers, random.Random(3), "q", "memory")
    assert ranked.order[0] == "full"
    prompt = judge.requests[0].prompt
    assert "full" not in prompt and "no_memory" not in prompt, "blind to the conditions"


def test_event_status_from_memories_and_plans():
    event = news.tracked_events()["party"]
    memories = {
        "Isabella Rodriguez": [Memory(0, "thought", PARTY, START, START, 8)],
        "Sam Moore": [Memory(3, "conversation",
                             "Isabella Rodriguez is throwing a Valentine's Day party (heard from "
                             "Isabella Rodriguez)", START + timedelta(hours=2),
                             START, 6)],
        "Klaus Mueller": [Memory(0, "observation", "Klaus Mueller is reading", START, START, 2)]}
    plans = {"Sam Moore": ["attend the Valentine's Day party at Hobbs Cafe"], "Klaus Mueller": []}
    status = news.event_status(event, memories, plans)
    assert [(h.resident, h.teller, h.memory_id) for h in status.heard] == [
        ("Isabella Rodriguez", None, 0), ("Sam Moore", "Isabella Rodriguez", 3)]
    assert status.planning == ("Sam Moore",)
    text = news.describe_status(status)
    assert "2 know of it" in text and "heard from Isabella Rodriguez" in text


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_cli_writes_report_json_markdown_and_pictures(small_town, small_world, tmp_path,
                                                      monkeypatch):
    monkeypatch.delenv("TOWNBOT_CHAT_MODEL", raising=False)
    monkeypatch.delenv("TOWNBOT_JUDGE_MODEL", raising=False)
    monkeypatch.chdir(tmp_path)  # no townbot.toml here
    out = tmp_path / "report"
    # The small town's residents have personas in the shipped folder: the real world loads.
    code, stdout, stderr = run_cli("eval", "--db", str(small_town), "--out", str(out),
                                   "--end-to-end-only", "--seeds", "1,2")
    assert code == 0, stderr
    report = json.loads((out / "report.json").read_text())
    assert report["format"] == "townbot-eval/2"
    assert [r["seed"] for r in report["runs"]] == [1, 2]
    assert report["settings"]["judge_kind"] == "offline rule"
    markdown = (out / "report.md").read_text()
    assert "not a language model's judgement" in markdown and "29.89" in markdown
    for picture in report["pictures"].values():
        assert (out / picture).stat().st_size > 1000 and f"]({picture})" in markdown
    assert {"network_start", "network_end", "diffusion"} <= set(report["pictures"])
    code, stdout, _ = run_cli("eval", "compare", str(out), str(out / "report.json"))
    assert code == 0 and "network density at the end" in stdout


@pytest.mark.parametrize(("args", "message"), [
    (["eval", "--db", "missing.db"], "does not exist"),
    (["eval"], "--db TOWN.db"),
    (["eval", "compare", "nowhere", "nowhere"], "does not exist"),
])
def test_cli_refuses_bad_input_clearly(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOWNBOT_CHAT_MODEL", raising=False)
    code, _, stderr = run_cli(*args)
    assert code == 2 and message in stderr


def test_cli_names_the_conditions_on_a_typo(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--db", "x.db", "--conditions", "full,no_reflections"])
    assert "did you mean no_reflection?" in capsys.readouterr().err


def test_ratings_carry_an_interval_over_match_orders_and_say_what_they_cannot_tell_apart():
    """full and no_reflection take turns at the top (their order decides TrueSkill); no_memory
    is always last. 100 orders give each a mean with the interval holding 95% of them."""
    conditions = ("full", "no_reflection", "no_memory")
    rankings = [Ranked("A", f"q{i}", "memory",
                       ("full", "no_reflection", "no_memory") if i % 2 else
                       ("no_reflection", "full", "no_memory"), conditions) for i in range(30)]
    ratings = rate(rankings, conditions, seed=4, orders=100)
    full, second, last = (ratings[c] for c in conditions)
    assert full.orders == 100 and full.matches == 30
    assert full.low < full.mu < full.high, "the match order moves mu"
    assert full.overlaps(second) and not full.overlaps(last)
    apart = not_told_apart(ratings)
    assert apart["full"] == ["no_reflection"] and apart["no_memory"] == []


async def test_the_report_gives_intervals_identical_answers_and_counts(small_town, small_world,
                                                                       tmp_path):
    result = await run_small_eval(small_town, small_world, orders=20)
    report = build_report([result], {"model": "offline model", "embedding_model": "x",
                                     "judge": "offline model", "judge_kind": "offline rule",
                                     "conditions": list(CONDITIONS), "seeds": [0],
                                     "max_calls": None, "retrieval_count": 10,
                                     "rankings": True, "orders": 20}, None, 1.0)
    path = write_report(report, tmp_path / "report")
    markdown = path.read_text()
    assert markdown.splitlines()[2] == ("**model: offline model; judge: offline model (offline "
                                        "rule) - offline: measures the mechanics, not "
                                        "believability**")
    assert "the mean of 20 match orders" in markdown and "not told apart from" in markdown
    pairs = result["identical_answers"]
    assert len(pairs) == 6 and all(0 <= p["identical"] <= p["of"] == 100 for p in pairs)
    assert "| full architecture / no reflection | " in markdown
    assert "1 of 4 yeses unbacked" in markdown or "2 of 4 yeses unbacked" in markdown
    assert "pairs gained from start to end: 2" in markdown and "pairs lost: 0" in markdown


CLAIMS_MEETINGS = "Yes, I know {name} well - we talked at the cafe only yesterday."


def server_answers(claim: bool):
    """A server for `townbot eval`: every resident says it knows and has talked with whoever
    is asked about (claim), or that it does not know them; labels read the answers' first
    word; every other request gets the smallest answer its schema allows."""
    def answer(body: dict) -> str:
        purpose, prompt = purpose_of(body), prompt_of(body)
        if purpose == "answer":
            asked = re.search(r"asks \w+: \"Do you know of (.+?)\?\"", prompt)
            if asked:
                return json.dumps({"text": CLAIMS_MEETINGS.format(name=asked.group(1)) if claim
                                   else f"No, I don't know {asked.group(1)}."})
            return json.dumps({"text": "I am getting on with my day."})
        if purpose == "label_answers":
            answers = re.findall(r"Answer: \"(\w+)", prompt)
            return json.dumps({"labels": ["yes" if a == "Yes" else "no" for a in answers]})
        return json.dumps(minimal_answer(schema_of(body)))
    return answer


@pytest.mark.parametrize("claim", [True, False])
async def test_townbot_eval_measures_hallucination_from_the_models_own_words(
        claim, small_world, tmp_path, monkeypatch):
    """Through `townbot eval`, the real openai client and a server on 127.0.0.1: a model that
    claims to know and to have talked with everyone is caught on every claim no memory backs;
    one that never claims is at 0. The town's guards would have stopped every such claim."""
    fake = FakeOpenAIServer(server_answers(claim), embedding_dim=32)
    db = await write_small_town(small_world, tmp_path / "town.db", "fake-embed", 32)
    monkeypatch.chdir(tmp_path)
    for variable in PROXY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("TOWNBOT_JUDGE_MODEL", raising=False)
    with serving(fake) as (url, _):
        for name, value in {"TOWNBOT_BASE_URL": url, "TOWNBOT_CHAT_MODEL": "fake-chat",
                            "TOWNBOT_EMBEDDING_MODEL": "fake-embed"}.items():
            monkeypatch.setenv(name, value)
        code, stdout, stderr = await asyncio.to_thread(
            run_cli, "eval", "--db", str(db), "--out", str(tmp_path / "report"),
            "--end-to-end-only")
    assert code == 0, stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    relationships = report["runs"][0]["hallucination"]["relationships"]
    figure = report["figures"]["hallucinated.relationships"]
    if claim:
        # Each of the 24 answers claims a talk; the memories record one only between
        # Isabella and Sam and between Sam and Maria (4 of the 24 directed pairs), at the end.
        assert (relationships["hallucinated"], relationships["claims"]) == (20, 24)
        assert figure["mean"] == round(20 / 24, 4)
    else:
        assert relationships["claims"] == 0 and figure["mean"] == 0.0
    assert relationships["guarded"]["hallucinated"] == 0
    first = stdout.splitlines()[0]
    assert first.startswith(f"model: fake-chat at {url}; ")
    assert first.endswith("; judge: fake-chat (language model)"), "no offline caveat"
    assert "hallucinated share of relationship answers (unguarded)" in stdout
