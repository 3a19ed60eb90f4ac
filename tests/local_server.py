"""An OpenAI-compatible fake server behind a real socket on 127.0.0.1, for tests that need real
time (timeouts, silence) or run the `townbot` command itself.

`behaviour(body, path)` may answer a request itself (an httpx2.Response), sleep first, or return
None to let the fake server answer.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
from fake_server import FakeOpenAIServer, minimal_answer, schema_of

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
Behaviour = Callable[[dict, str], httpx2.Response | None]


def smallest_answers(body: dict) -> str:
    return json.dumps(minimal_answer(schema_of(body)))


def handler_for(fake: FakeOpenAIServer, behaviour: Behaviour | None) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            response = behaviour(json.loads(raw or b"{}"), self.path) if behaviour else None
            if response is None:
                request = httpx2.Request("POST", f"http://127.0.0.1{self.path}", content=raw)
                response = asyncio.run(fake.handle(request))
            self._send(response)

        def do_GET(self) -> None:  # noqa: N802
            self._send(httpx2.Response(200, json={"object": "list", "data": [
                {"id": "fake-chat", "object": "model", "created": 0, "owned_by": "test"}]}))

        def _send(self, response: httpx2.Response) -> None:
            try:
                self.send_response(response.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(response.content)))
                self.end_headers()
                self.wfile.write(response.content)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a timeout test)

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep test output clean

    return Handler


class QuietServer(ThreadingHTTPServer):
    """Says nothing of a client that went away mid-request (a run that stopped, under load),
    which socketserver would print as a traceback into the test's captured stderr."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # reset, broken pipe, closed socket
            super().handle_error(request, client_address)


@contextmanager
def serving(fake: FakeOpenAIServer | None = None,
            behaviour: Behaviour | None = None) -> Iterator[tuple[str, FakeOpenAIServer]]:
    fake = fake or FakeOpenAIServer(smallest_answers, embedding_dim=32)
    http = QuietServer(("127.0.0.1", 0), handler_for(fake, behaviour))
    http.daemon_threads = True
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{http.server_address[1]}/v1", fake
    finally:
        http.shutdown()
        http.server_close()
