"""The start-up check, `townbot doctor`, and a run that stops when its server fails: the real
`townbot` command and openai client against a fake server on a real 127.0.0.1 socket."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import tomllib
from pathlib import Path

import httpx2
from local_server import PROXY_VARIABLES, serving

from townbot.cli import main
from townbot.llm.openai_client import OpenAIModel
from townbot.llm.port import Ask
from townbot.llm.purposes import PlaceChoice
from townbot.llm.settings import load_settings
from townbot.llm.stack import build_model_stack


def refuses_json_schema(body: dict, path: str) -> httpx2.Response | None:
    if (body.get("response_format") or {}).get("type") == "json_schema":
        return httpx2.Response(500, json={"error": {"message": "Internal Server Error"}})
    return None


def test_a_server_that_answers_json_schema_with_a_500_stops_the_run_at_once(clean_env, tmp_path, capsys):
    with serving(behaviour=refuses_json_schema) as (url, fake):
        clean_env.setenv("TOWNBOT_BASE_URL", url)
        started = time.monotonic()
        assert main(["sim", "--hours", "1", "--db", str(tmp_path / "t.db")]) == 2
        assert time.monotonic() - started < 20
    err = capsys.readouterr().err
    assert "refuses structured output 'json_schema'" in err
    assert "set TOWNBOT_STRUCTURED_OUTPUT=json_object" in err
    assert len(fake.chat_requests) <= 2, "only the check's requests reached the server"
    assert list(tmp_path.iterdir()) == [], "a setting that cannot work creates no database"


def test_auto_takes_the_best_mode_the_server_accepts_and_sends_its_schema(clean_env, tmp_path, capsys):
    with serving(behaviour=refuses_json_schema) as (url, fake):
        clean_env.setenv("TOWNBOT_BASE_URL", url)
        clean_env.setenv("TOWNBOT_STRUCTURED_OUTPUT", "auto")
        clean_env.setenv("TOWNBOT_CONCURRENCY", "2")
        assert main(["sim", "--hours", "0.2", "--db", str(tmp_path / "t.db"), "--no-transcript"]) == 0
    last = fake.chat_requests[-1]
    assert last["response_format"]["type"] == "json_object"
    assert "schema" in last["response_format"], "llama-cpp-python can enforce the schema it is sent"


def test_no_server_stops_within_seconds_naming_the_address_setting(clean_env, tmp_path, capsys):
    with socket.socket() as probe:  # a port that was free a moment ago: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    clean_env.setenv("TOWNBOT_BASE_URL", f"http://127.0.0.1:{port}/v1")
    started = time.monotonic()
    assert main(["sim", "--hours", "1", "--db", str(tmp_path / "t.db")]) == 2
    assert time.monotonic() - started < 15
    assert "set TOWNBOT_BASE_URL to the address it listens on" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [], "a setting that cannot work creates no database"


def test_a_server_that_falls_silent_stops_the_run_after_the_configured_failures(clean_env, tmp_path,
                                                                                capsys):
    answered = {"count": 0}

    def silent_after_the_check(body: dict, path: str) -> httpx2.Response | None:
        answered["count"] += 1
        if answered["count"] > 1:  # the check's one request is answered, then nothing
            time.sleep(1.5)
            return httpx2.Response(504, json={"error": {"message": "late"}})
        return None

    with serving(behaviour=silent_after_the_check) as (url, _):
        for name, value in {"TOWNBOT_BASE_URL": url, "TOWNBOT_TIMEOUT": "0.3",
                            "TOWNBOT_MAX_RETRIES": "0", "TOWNBOT_MAX_FAILURES": "3",
                            "TOWNBOT_CONCURRENCY": "1"}.items():
            clean_env.setenv(name, value)
        started = time.monotonic()
        assert main(["sim", "--hours", "2", "--db", str(tmp_path / "t.db")]) == 2
        assert time.monotonic() - started < 30
    err = capsys.readouterr().err
    # Timed-out requests of any calls count: two timeouts of silence stop it before the third
    # failed call (issue 31: a hung server was noticed only after every call's retries).
    assert "has answered nothing for" in err and "requests timed out" in err
    assert "TOWNBOT_TIMEOUT" in err and "TOWNBOT_MAX_FAILURES" in err


def test_an_unknown_model_names_one_the_server_serves(clean_env, tmp_path, capsys):
    def no_such_model(body: dict, path: str) -> httpx2.Response | None:
        if body.get("model") != "fake-chat":
            return httpx2.Response(404, json={"error": {"message": f"model {body.get('model')} not found"}})
        return None

    with serving(behaviour=no_such_model) as (url, _):
        clean_env.setenv("TOWNBOT_BASE_URL", url)
        clean_env.setenv("TOWNBOT_CHAT_MODEL", "qwen-typo")
        assert main(["sim", "--hours", "1", "--db", str(tmp_path / "t.db")]) == 2
    assert "set TOWNBOT_CHAT_MODEL=fake-chat" in capsys.readouterr().err


def test_embeddings_of_another_dimension_than_configured_stop_with_the_right_one(clean_env, tmp_path,
                                                                                 capsys):
    with serving() as (url, _):
        clean_env.setenv("TOWNBOT_BASE_URL", url)
        clean_env.setenv("TOWNBOT_EMBEDDING_MODEL", "fake-embed")
        clean_env.setenv("TOWNBOT_EMBEDDING_DIMENSIONS", "64")
        assert main(["sim", "--hours", "1", "--db", str(tmp_path / "t.db")]) == 2
    assert "set TOWNBOT_EMBEDDING_DIMENSIONS=32 or leave it unset" in capsys.readouterr().err


def one_at_a_time(seconds: float):
    """A server that serves one request at a time, each taking `seconds`."""
    lock = threading.Lock()

    def behaviour(body: dict, path: str) -> None:
        with lock:
            time.sleep(seconds)
        return None
    return behaviour


def test_doctor_reports_the_server_and_writes_settings_that_suit_it(clean_env, tmp_path, capsys):
    (tmp_path / "townbot.toml").write_text('[llm]\ntimeout = 90\n\n[llm.budget]\ncalls_per_day = 500\n')
    with serving(behaviour=one_at_a_time(0.5)) as (url, _):
        clean_env.setenv("TOWNBOT_BASE_URL", url)
        clean_env.setenv("TOWNBOT_EMBEDDING_MODEL", "fake-embed")
        assert main(["doctor", "--write"]) == 0
    out = capsys.readouterr().out
    assert "json_schema: answered in the schema" in out
    assert "requests served at once: 1" in out
    assert "embeddings: fake-embed, 32 dimensions" in out
    written = tomllib.loads((tmp_path / "townbot.toml").read_text())
    assert written["llm"]["concurrency"] == 1 and written["llm"]["structured_output"] == "json_schema"
    assert written["llm"]["base_url"] == url and written["llm"]["budget"] == {"calls_per_day": 500}


async def test_the_timeout_counts_from_sending_not_from_waiting_for_a_slot(monkeypatch):
    for variable in PROXY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    with serving(behaviour=one_at_a_time(0.4)) as (url, _):
        settings = load_settings({"TOWNBOT_CHAT_MODEL": "fake-chat", "TOWNBOT_BASE_URL": url,
                                  "TOWNBOT_TIMEOUT": "1.5", "TOWNBOT_CONCURRENCY": "1",
                                  "TOWNBOT_MAX_RETRIES": "0"}, Path("/nonexistent.toml"))
        client = OpenAIModel(settings)
        model = build_model_stack(client)
        ask = Ask(purpose="choose_sector", prompt="Where?", schema=PlaceChoice,
                  default=lambda: PlaceChoice(choice="home"))
        started = time.monotonic()
        await asyncio.gather(*(model.ask(ask) for _ in range(5)))
        waited = time.monotonic() - started
        await model.close()
    assert waited > 1.5, "the last request waited longer than the timeout for its slot"
    assert client.stats.errors == {} and model.outcomes["ok"] == 5, "and none timed out"


async def test_a_hosted_town_waits_for_a_failed_server_and_goes_on_when_it_answers(monkeypatch):
    """The Discord tick job: a tick that meets ServerUnavailable tells #town-hall and waits;
    each due tick asks the server first and the town goes on once it answers."""
    from types import SimpleNamespace

    from townbot.llm.openai_client import ServerUnavailable
    from townbot.llm.stack import build_model_stack
    from townbot.platforms.discord import hosting

    for variable in PROXY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    down = {"now": True}

    def failing_while_down(body: dict, path: str) -> httpx2.Response | None:
        return httpx2.Response(503, json={"error": {"message": "loading"}}) if down["now"] else None

    with serving(behaviour=failing_while_down) as (url, _):
        settings = load_settings({"TOWNBOT_CHAT_MODEL": "fake-chat", "TOWNBOT_BASE_URL": url},
                                 Path("/nonexistent.toml"))
        client = OpenAIModel(settings)
        notices: list[str] = []
        ticks = {"count": 0}

        async def tick(**pacing: float) -> None:
            if down["now"]:
                raise ServerUnavailable("http://127.0.0.1 failed 10 calls in a row")
            ticks["count"] += 1

        async def notify(text: str) -> bool:
            notices.append(text)
            return True

        async def no_arrivals(town) -> None:
            return None

        monkeypatch.setattr(hosting, "deliver_arrivals", no_arrivals)
        town = SimpleNamespace(service=SimpleNamespace(tick=tick), notify=notify, server_down=False,
                               engine=SimpleNamespace(model=build_model_stack(client),
                                                      town=SimpleNamespace(tick_seconds=10.0)),
                               publisher=SimpleNamespace(wake=lambda: None))
        await hosting.tick_town(town)
        await hosting.tick_town(town)  # still down: the server is asked, no tick
        assert town.server_down and ticks["count"] == 0 and len(notices) == 1
        assert "waiting for its language-model server" in notices[0]
        down["now"] = False
        await hosting.tick_town(town)
        assert not town.server_down and ticks["count"] == 1
        assert "answers again" in notices[-1]
        await client.close()
