"""`townbot sim`, `usage` and `export` against an OpenAI-compatible server on 127.0.0.1.

The server is the fake one behind a real HTTP socket, so the whole path is exercised: settings
from the environment, the openai client, real token counts, the summary and the price.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest
from fake_server import FakeOpenAIServer, minimal_answer, schema_of

from townbot.cli import main

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def smallest_answers(body: dict) -> str:
    return json.dumps(minimal_answer(schema_of(body)))


def handler_for(fake: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            request = httpx2.Request("POST", f"http://127.0.0.1{self.path}", content=body)
            response = asyncio.run(fake.handle(request))
            self.send_response(response.status_code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(response.content)))
            self.end_headers()
            self.wfile.write(response.content)

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep test output clean

    return Handler


@pytest.fixture
def local_server() -> Iterator[tuple[str, FakeOpenAIServer]]:
    fake = FakeOpenAIServer(smallest_answers, embedding_dim=32)
    http = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(fake))
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{http.server_address[1]}/v1", fake
    http.shutdown()
    http.server_close()


def test_a_run_on_a_local_server_names_it_and_meters_what_it_reports(local_server, tmp_path: Path,
                                                                      monkeypatch, capsys):
    url, fake = local_server
    monkeypatch.chdir(tmp_path)
    for variable in PROXY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    for name, value in {"TOWNBOT_BASE_URL": url, "TOWNBOT_CHAT_MODEL": "fake-chat",
                        "TOWNBOT_SMALL_MODEL": "fake-small", "TOWNBOT_EMBEDDING_MODEL": "fake-embed",
                        "TOWNBOT_PRICE_PROMPT": "1", "TOWNBOT_PRICE_COMPLETION": "2",
                        "TOWNBOT_PRICE_EMBEDDING": "0.1"}.items():
        monkeypatch.setenv(name, value)
    db = str(tmp_path / "town.db")

    assert main(["sim", "--hours", "0.5", "--db", db, "--no-transcript"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first == (f"townbot: using fake-chat at {url}; fake-small for importance; "
                     "embeddings fake-embed; structured output json_schema")
    assert "(estimated)" not in out, "the server reported its tokens"
    assert "estimated price: $" in out and "server: " in out
    assert {r["model"] for r in fake.chat_requests} == {"fake-chat", "fake-small"}
    assert fake.embedding_requests, "memories were embedded by the server"

    assert main(["usage", "--db", db]) == 0
    usage = capsys.readouterr().out
    assert "embedding" in usage and "importance" in usage and "estimated price: $" in usage

    assert main(["export", "--db", db]) == 0
    town = json.loads(capsys.readouterr().out)["town"]
    assert (town["model"], town["embedding_model"], town["embedding_dim"]) == (
        f"fake-chat at {url}", "fake-embed", 32)


def test_an_unreachable_server_stops_with_the_settings_to_check(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for variable in PROXY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    with socket.socket() as probe:  # a port that was free a moment ago: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("TOWNBOT_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("TOWNBOT_CHAT_MODEL", "fake-chat")
    monkeypatch.setenv("TOWNBOT_EMBEDDING_MODEL", "fake-embed")
    monkeypatch.setenv("TOWNBOT_MAX_RETRIES", "0")
    assert main(["sim", "--hours", "0.5", "--db", str(tmp_path / "town.db")]) == 2
    err = capsys.readouterr().err
    assert f"cannot connect to http://127.0.0.1:{port}/v1" in err
    assert "set TOWNBOT_BASE_URL to the address it listens on" in err
