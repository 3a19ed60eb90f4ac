"""A model whose answers are unusable is noticed: `doctor` says so from the town's own
questions, a run stops (`sim`: one line, exit 2) or a hosted town pauses and tells #town-hall,
and the read-outs give the defaulted share with a warning; a server that stops answering in the
middle of a run is noticed after two timeouts' worth of silence, not after every waiting call
has waited out its retries. The real `townbot` command and openai client against a fake server
on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time

import httpx2
import pytest
from fake_server import FakeOpenAIServer
from local_server import serving

from townbot.cli import main
from townbot.llm.watching import WINDOW, AnswersUnusable, Watched, share_lines


def dots(body: dict) -> str:
    return "..."


def test_a_server_answering_dots_stops_sim_with_one_line_and_exit_2(clean_env, tmp_path, capsys):
    with serving(FakeOpenAIServer(dots, embedding_dim=32)) as (url, _):
        clean_env.setenv("TOWNBOT_BASE_URL", url)
        code = main(["sim", "--hours", "4", "--db", str(tmp_path / "t.db"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1, err
    assert err[0].startswith("error: ") and "of the last" in err[0]
    assert "came from defaults (" in err[0] and "not JSON" in err[0]
    assert "too weak to run a town" in err[0] and "TOWNBOT_MAX_UNUSABLE (now 0.7" in err[0]


def test_the_share_that_stops_a_run_is_a_setting(clean_env, tmp_path, capsys):
    """TOWNBOT_MAX_UNUSABLE=1 never stops: the run ends and says the share, with a warning."""
    with serving(FakeOpenAIServer(dots, embedding_dim=32)) as (url, _):
        clean_env.setenv("TOWNBOT_BASE_URL", url)
        clean_env.setenv("TOWNBOT_MAX_UNUSABLE", "1")
        code = main(["sim", "--hours", "0.5", "--db", str(tmp_path / "t.db"), "--quiet"])
        out = capsys.readouterr().out
        assert code == 0
        share = next(line for line in out.splitlines() if line.startswith("answers from defaults"))
        assert share.endswith(")") and "%" in share
        assert "warning: more than 20% of the answers came from defaults" in out
        assert main(["usage", "--db", str(tmp_path / "t.db")]) == 0
        assert "answers from defaults: " in capsys.readouterr().out


def test_doctor_asks_the_towns_questions_and_calls_a_dots_model_too_weak(clean_env, capsys):
    with serving(FakeOpenAIServer(dots, embedding_dim=32)) as (url, _):
        clean_env.setenv("TOWNBOT_BASE_URL", url)
        assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "the town's own questions (4 residents, one tick): 0 of" in out
    assert "  importance: 0 of" in out
    assert "unusable replies: " in out and "not JSON" in out
    assert "verdict: this model is too weak to run a town: 100% of its answers would come " \
           "from defaults" in out


def test_doctor_gives_a_model_that_answers_in_the_schema_its_verdict(clean_env, capsys):
    with serving() as (url, _):
        clean_env.setenv("TOWNBOT_BASE_URL", url)
        assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("the town's own questions"))
    good, total = (int(n) for n in line.split(": ")[1].split(" answers")[0].split(" of "))
    assert total >= 8 and good > 0.8 * total, line
    for purpose in ("importance", "day_plan", "hourly_schedule"):  # ratings, the day's
        assert f"  {purpose}: " in out  # plan and its schedule with the place of each block
    assert "verdict: usable answers; the model can run a town" in out


def test_a_server_that_hangs_mid_run_is_noticed_after_two_timeouts_of_silence(clean_env,
                                                                            tmp_path, capsys):
    """Every request after the first 40 hangs. At TOWNBOT_TIMEOUT=0.5 and the default retries
    and failures (3 and 10), waiting out each call's retries took 4 tries x 10 calls; two
    timeouts of silence, of any calls at once, are enough (the default 60 s: about 2 minutes)."""
    served = {"count": 0}

    def hangs_after_a_while(body: dict, path: str) -> httpx2.Response | None:
        served["count"] += 1
        if served["count"] > 40:
            time.sleep(5)
        return None

    with serving(behaviour=hangs_after_a_while) as (url, _):
        clean_env.setenv("TOWNBOT_BASE_URL", url)
        clean_env.setenv("TOWNBOT_TIMEOUT", "0.5")
        clean_env.setenv("TOWNBOT_CONCURRENCY", "2")
        code = main(["sim", "--hours", "4", "--db", str(tmp_path / "t.db"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and "has answered nothing for" in err[0], err
    assert "requests timed out" in err[0] and "TOWNBOT_TIMEOUT" in err[0]


class Outcomes:
    """A model whose replies come with the outcomes given, for the layer alone."""

    label = "scripted"

    def __init__(self, outcomes: list[str]) -> None:
        self.outcomes = iter(outcomes)

    async def reply(self, request):
        from townbot.llm.port import Reply
        return Reply(None, "scripted", 1, 1, True, outcome=next(self.outcomes))

    def report(self):
        from townbot.llm.port import ModelReport
        return ModelReport(problems={"placeholder": 3})


async def test_the_watch_judges_the_last_hundred_answers_once_fifty_are_in():
    from townbot.llm.port import Ask
    from townbot.llm.purposes import PlaceChoice

    ask = Ask("probe", "p", PlaceChoice, lambda: PlaceChoice(choice="x"))
    watch = Watched(Outcomes(["fallback"] * 50), 0.7)
    for _ in range(49):  # 49 of 49 is no verdict yet
        await watch.reply(ask)
    with pytest.raises(AnswersUnusable, match="50 of the last 50 answers"):
        await watch.reply(ask)
    watch = Watched(Outcomes(["ok"] * 60 + ["fallback"] * 71), 0.7)
    for _ in range(60 + 70):  # 70 of the last 100 is not more than 0.7
        await watch.reply(ask)
    assert sum(watch.recent) / len(watch.recent) == 0.7
    with pytest.raises(AnswersUnusable, match="71 of the last 100 answers of scripted came from "
                                              r"defaults \(3 placeholders or copied examples\)"):
        await watch.reply(ask)
    assert len(watch.recent) == 0 and WINDOW == 100


def test_the_share_lines_warn_above_a_fifth_and_not_for_the_offline_model():
    assert share_lines(1, 10) == ["answers from defaults: 10% (1 of 10)"]
    assert share_lines(3, 10)[1].startswith("warning: more than 20% of the answers")
    assert len(share_lines(3, 10, offline=True)) == 1
    assert share_lines(0, 0) == []


async def test_a_hosted_town_pauses_and_tells_the_town_hall(monkeypatch):
    from types import SimpleNamespace

    from townbot.platforms.discord import hosting

    notices, paused = [], []

    async def tick(**pacing: float) -> None:
        raise AnswersUnusable("71 of the last 100 answers of m came from defaults (...)")

    async def pause(person) -> None:
        paused.append(person.name)

    async def notify(text: str) -> bool:
        notices.append(text)
        return True
    town = SimpleNamespace(service=SimpleNamespace(tick=tick, pause=pause), notify=notify,
                           server_down=False, engine=SimpleNamespace(
                               town=SimpleNamespace(tick_seconds=10.0)))
    await hosting.tick_town(town)
    assert paused == ["townbot's model watch"]
    assert notices == ["The town is paused: 71 of the last 100 answers of m came from defaults "
                       "(...). A moderator resumes it with /mod resume once the model is changed."]
    await asyncio.sleep(0)
