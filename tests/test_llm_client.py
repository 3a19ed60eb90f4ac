"""The OpenAI-compatible client through the real openai package against a fake server.

The fake is the HTTP server (an httpx2.MockTransport, or a socket on 127.0.0.1 for the timeout);
the client, metering and parsing are the real code.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fake_server import FakeOpenAIServer, counted_tokens, prompt_of, purpose_of

from townbot.llm.checking import Checked
from townbot.llm.metering import Recorded
from townbot.llm.openai_client import Backoff, OpenAIModel
from townbot.llm.port import Ask, LanguageModel, ModelConfigError
from townbot.llm.purposes import Decomposition, ImportanceScores, PlaceChoice
from townbot.llm.settings import load_settings
from townbot.llm.stack import build_model_stack, find_layer
from townbot.town.usage import render_usage, summarise

FAST = Backoff(base=0.001, cap=0.002)
PLACES = ["Hobbs Cafe", "Oak Hill College", "The Rose and Crown Pub"]

def checked(model: LanguageModel) -> Checked:
    layer = find_layer(model, Checked)
    assert layer is not None
    return layer


def client(model: LanguageModel) -> OpenAIModel:
    layer = find_layer(model, OpenAIModel)
    assert layer is not None
    return layer


def settings_for(**env: str):
    base = {"TOWNBOT_CHAT_MODEL": "fake-chat", "TOWNBOT_BASE_URL": "http://fake.test/v1"}
    return load_settings({**base, **env}, Path("/nonexistent/townbot.toml"))


def metered(transport: httpx2.AsyncBaseTransport, **env: str) -> Recorded:
    client = httpx2.AsyncClient(transport=transport)
    return build_model_stack(OpenAIModel(settings_for(**env), http_client=client, backoff=FAST))


def place_ask() -> Ask[PlaceChoice]:
    return Ask(purpose="choose_sector", prompt="Where should Isabella go to open the cafe?\n"
               f"Places she knows: {'; '.join(PLACES)}", schema=PlaceChoice, agent="Isabella Rodriguez",
               check=lambda a: None if a.choice in PLACES else f"'{a.choice}' is not one of the places",
               default=lambda: PlaceChoice(choice="Hobbs Cafe"))


def importance_ask(texts: list[str], agent: str = "Klaus Mueller") -> Ask[ImportanceScores]:
    numbered = "\n".join(f"{i}. {t}" for i, t in enumerate(texts, 1))
    return Ask(purpose="importance", prompt=f"Rate each memory from 1 to 10.\n{numbered}",
               schema=ImportanceScores, agent=agent,
               check=lambda a: None if len(a.scores) == len(texts) else f"expected {len(texts)} scores",
               default=lambda: ImportanceScores(scores=[3] * len(texts)))


def replies(*contents: Any):
    """A responder that gives these replies in turn (the last one from then on)."""
    queue = list(contents)

    def answer(body: dict[str, Any]) -> Any:
        return queue.pop(0) if len(queue) > 1 else queue[0]
    return answer


def statuses_first(server: FakeOpenAIServer, statuses: list[int], message: str = "busy",
                   ) -> httpx2.MockTransport:
    """The server behind a front that first answers with these HTTP statuses, one per request."""
    queue = list(statuses)

    async def handle(request: httpx2.Request) -> httpx2.Response:
        if queue:
            return httpx2.Response(queue.pop(0), headers={"retry-after": "0"},
                                   json={"error": {"message": message, "type": "server_error"}})
        return await server.handle(request)
    return httpx2.MockTransport(handle)


async def test_json_schema_mode_sends_a_strict_portable_schema_and_records_server_tokens():
    server = FakeOpenAIServer(replies('{"choice": "Hobbs Cafe"}'))
    model = metered(server.transport())
    assert (await model.ask(place_ask())).choice == "Hobbs Cafe"
    sent = server.chat_requests[0]
    assert sent["model"] == "fake-chat"
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "choose_sector"
    assert sent["response_format"]["json_schema"]["strict"] is True
    [record] = model.usage.drain()
    assert record.prompt_tokens == counted_tokens(prompt_of(sent)), "the server's count, not ours"
    assert (record.estimated, record.outcome, record.model) == (False, "ok", "fake-chat")
    await model.close()


async def test_nested_schemas_are_inlined_with_every_field_required():
    server = FakeOpenAIServer(replies('{"steps": []}'))
    model = metered(server.transport())
    await model.ask(Ask(purpose="decompose", prompt="Break it down", schema=Decomposition,
                        default=lambda: Decomposition.model_validate(
                            {"steps": [{"minutes": 5, "action": "a", "object": "b",
                                        "object_state": "c", "emoji": "d"}]})))
    schema = server.chat_requests[0]["response_format"]["json_schema"]["schema"]
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text and "maxLength" not in text
    step = schema["properties"]["steps"]["items"]
    assert step["additionalProperties"] is False
    assert set(step["required"]) == {"minutes", "action", "object", "object_state", "emoji"}
    assert step["properties"]["minutes"]["enum"] == [5, 10, 15]
    await model.close()


async def test_json_object_mode_sends_the_schema_in_the_request_and_after_the_prompt():
    server = FakeOpenAIServer(replies('{"choice": "Oak Hill College"}'))
    model = metered(server.transport(), TOWNBOT_STRUCTURED_OUTPUT="json_object")
    assert (await model.ask(place_ask())).choice == "Oak Hill College"
    sent = server.chat_requests[0]
    assert sent["response_format"] == {"type": "json_object", "schema": {
        "type": "object", "properties": {"choice": {"type": "string"}}, "required": ["choice"],
        "additionalProperties": False}}, "a server with grammars (llama-cpp-python) enforces it"
    system, user = sent["messages"]
    assert system["role"] == "system" and "JSON schema" in system["content"]
    assert user["content"].startswith(place_ask().prompt), "the schema comes after the prompt"
    assert '"choice"' in user["content"] and '"choice"' not in system["content"]
    await model.close()


async def test_prompt_mode_reads_json_out_of_thinking_and_code_fences():
    reply = '<think>She opens the cafe at 8.</think>\n```json\n{"choice": "Hobbs Cafe"}\n```'
    server = FakeOpenAIServer(replies(reply))
    model = metered(server.transport(), TOWNBOT_STRUCTURED_OUTPUT="prompt")
    assert (await model.ask(place_ask())).choice == "Hobbs Cafe"
    assert "response_format" not in server.chat_requests[0]
    assert model.usage.drain()[0].outcome == "ok"
    await model.close()


async def test_a_server_without_usage_gets_estimates_marked_as_such():
    server = FakeOpenAIServer(replies('{"choice": "Hobbs Cafe"}'), report_usage=False)
    model = metered(server.transport())
    await model.ask(place_ask())
    [record] = model.usage.drain()
    assert record.estimated and record.prompt_tokens > 0
    rows = [record._asdict()]
    assert "(estimated)" in render_usage(summarise(rows))
    await model.close()


async def test_a_cut_off_reply_gets_one_repair_and_both_calls_are_paid_for():
    server = FakeOpenAIServer(replies(('{"scores": [7, ', "length"), '{"scores": [7, 2]}'))
    model = metered(server.transport())
    answer = await model.ask(importance_ask(["Isabella is planning a Valentine's party", "the bed is made"]))
    assert answer.scores == [7, 2]
    first, repair = server.chat_requests
    assert "cut off" in prompt_of(repair) and prompt_of(repair).startswith(prompt_of(first))
    [record] = model.usage.drain()
    assert record.outcome == "repaired"
    assert record.prompt_tokens == counted_tokens(prompt_of(first)) + counted_tokens(prompt_of(repair))
    assert checked(model).problems["cut_off"] == 1
    await model.close()


async def test_invalid_json_twice_gives_the_default_counted_as_a_fallback_of_its_purpose():
    server = FakeOpenAIServer(replies("I would rate the first one a 7 and the second a 2."))
    model = metered(server.transport())
    texts = ["Isabella is planning a Valentine's party", "the bed is made"]
    assert (await model.ask(importance_ask(texts))).scores == [3, 3], "the safe default"
    assert len(server.chat_requests) == 2, "one repair, no more"
    assert "not valid JSON" in prompt_of(server.chat_requests[1])
    assert model.fallbacks == {"importance": 1}
    summary = summarise([r._asdict() for r in model.usage.drain()])
    assert summary["purposes"]["importance"]["fallbacks"] == 1
    await model.close()


async def test_a_well_formed_but_unusable_answer_is_repaired_with_the_reason():
    server = FakeOpenAIServer(replies('{"choice": "the moon"}', '{"choice": "Hobbs Cafe"}'))
    model = metered(server.transport())
    assert (await model.ask(place_ask())).choice == "Hobbs Cafe"
    assert "'the moon' is not one of the places" in prompt_of(server.chat_requests[1])
    await model.close()


async def test_rate_limits_and_server_errors_are_retried():
    server = FakeOpenAIServer(replies('{"choice": "Hobbs Cafe"}'))
    model = metered(statuses_first(server, [429, 503]))
    assert (await model.ask(place_ask())).choice == "Hobbs Cafe"
    stats = client(model).stats
    assert (stats.requests, stats.retries) == (3, 2)
    assert stats.errors == {"429": 1, "5xx": 1}
    assert model.usage.drain()[0].outcome == "ok"
    await model.close()


async def test_a_server_that_stays_down_gives_the_default_instead_of_an_error():
    server = FakeOpenAIServer(replies('{"choice": "Oak Hill College"}'))
    model = metered(statuses_first(server, [503] * 10), TOWNBOT_MAX_RETRIES="2")
    assert (await model.ask(place_ask())).choice == "Hobbs Cafe", "the ask's default"
    assert client(model).stats.requests == 3 and not server.chat_requests
    [record] = model.usage.drain()
    assert record.outcome == "failed" and model.fallbacks == {"choose_sector": 1}
    assert "after 3 tries" in checked(model).last_failure
    await model.close()


@pytest.mark.parametrize(("status", "message", "named"), [
    (401, "Incorrect API key provided", "TOWNBOT_API_KEY"),
    (404, "model 'fake-chat' not found, try pulling it first", "TOWNBOT_CHAT_MODEL"),
    (400, "response_format json_schema is not supported", "TOWNBOT_STRUCTURED_OUTPUT=json_object"),
])
async def test_settings_that_cannot_work_stop_with_the_setting_to_change(status, message, named):
    server = FakeOpenAIServer(replies('{"choice": "Hobbs Cafe"}'))
    model = metered(statuses_first(server, [status], message))
    with pytest.raises(ModelConfigError, match=named):
        await model.ask(place_ask())
    assert client(model).stats.requests == 1, "no retries for what retrying cannot fix"
    await model.close()


async def test_small_purposes_go_to_the_small_model_and_are_metered_under_its_name():
    def answer(body: dict[str, Any]) -> str:
        return '{"scores": [5]}' if purpose_of(body) == "importance" else '{"choice": "Hobbs Cafe"}'

    server = FakeOpenAIServer(answer)
    model = metered(server.transport(), TOWNBOT_SMALL_MODEL="fake-small")
    await model.ask(importance_ask(["Klaus is writing his paper"]))
    await model.ask(place_ask())
    assert [r["model"] for r in server.chat_requests] == ["fake-small", "fake-chat"]
    assert [r.model for r in model.usage.drain()] == ["fake-small", "fake-chat"]
    await model.close()


async def test_the_concurrency_limit_holds_while_requests_still_overlap():
    in_flight, most = 0, 0

    async def slow_answer(body: dict[str, Any]) -> str:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return '{"choice": "Hobbs Cafe"}'

    server = FakeOpenAIServer(slow_answer)
    model = metered(server.transport(), TOWNBOT_CONCURRENCY="3")
    await asyncio.gather(*(model.ask(place_ask()) for _ in range(12)))
    assert most == 3
    await model.close()


async def test_a_request_that_times_out_on_a_real_socket_is_retried_then_defaulted():
    """A server on 127.0.0.1 that reads the request and never answers."""
    connections: list[asyncio.StreamWriter] = []

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)
        await reader.read(65536)
        await asyncio.sleep(3)  # bounded: the connection closes by itself even if the test stops
        writer.close()

    listener = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    settings = load_settings({"TOWNBOT_CHAT_MODEL": "slow", "TOWNBOT_BASE_URL": f"http://127.0.0.1:{port}/v1",
                              "TOWNBOT_TIMEOUT": "0.3", "TOWNBOT_MAX_RETRIES": "1",
                              # the retries alone: two timeouts of silence would count as down
                              "TOWNBOT_MAX_FAILURES": "0"},
                             Path("/nonexistent/townbot.toml"))
    inner = OpenAIModel(settings, http_client=httpx2.AsyncClient(trust_env=False), backoff=FAST)
    model = build_model_stack(inner)
    try:
        started = time.perf_counter()
        answer = await model.ask(place_ask())
        elapsed = time.perf_counter() - started
    finally:
        await model.close()
        listener.close()
        for writer in connections:
            writer.close()
        await listener.wait_closed()
    assert answer.choice == "Hobbs Cafe"
    assert inner.stats.errors == {"timeout": 2} and inner.stats.retries == 1
    assert 0.55 < elapsed < 2.5, f"two tries of 0.3 s each, took {elapsed:.2f} s"
    assert model.usage.drain()[0].outcome == "failed"
