"""Choices constrained by the schema, recordings that say why, cached tokens counted (issues 34
and 37): a question that picks from a list sends the list as an enum through the real openai
client, a reply naming something else is refused and repaired; a recording keeps the reason of
every refusal, the question's own check's included, and a failed call, which a replay fails
again; the prompt tokens a server reports cached reach the usage records and `usage`."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import httpx2

from townbot.llm.checking import Checked
from townbot.llm.fake_server import FakeOpenAIServer
from townbot.llm.openai_client import Backoff, OpenAIModel
from townbot.llm.port import AnswerT, Ask, LanguageModel, Reply
from townbot.llm.purposes import (
    Decomposition,
    PlaceAndArea,
    decomposition_among,
    place_and_area_among,
)
from townbot.llm.purposes.common import ENUM_LIMIT
from townbot.llm.recording import ReplayModel, ReplyRecorder
from townbot.llm.settings import load_settings
from townbot.llm.stack import build_model_stack, find_layer
from townbot.llm.structured import portable_schema
from townbot.mind.planning import decompose
from townbot.mind.plans import PlanBlock
from townbot.town.usage import render_usage, summarise

OBJECTS = ("stove", "fridge", "kitchen table")


def client(server: FakeOpenAIServer, **env: str) -> OpenAIModel:
    settings = load_settings({"TOWNBOT_CHAT_MODEL": "fake-chat",
                              "TOWNBOT_BASE_URL": "http://fake.test/v1", **env},
                             Path("/nonexistent/townbot.toml"))
    return OpenAIModel(settings, http_client=httpx2.AsyncClient(transport=server.transport()),
                       backoff=Backoff(base=0.001, cap=0.002))


def steps(obj: str) -> str:
    return json.dumps({"steps": [{"minutes": 15, "action": "fry an egg", "object": obj,
                                  "object_state": "heating up", "emoji": "🍳"}]})


class Spy(LanguageModel):
    """Keeps the ask and answers with its default."""

    label = embedding_model = "spy"
    embedding_dim = 2

    def __init__(self) -> None:
        self.asked: list[Ask] = []

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        self.asked.append(request)
        return request.default()

    async def embed(self, texts, call=None):
        raise AssertionError("not used")


async def test_a_step_may_name_only_an_object_in_the_room(world):
    spy = Spy()
    block = PlanBlock(datetime(2023, 2, 13, 7, 40), datetime(2023, 2, 13, 8, 0),
                      "eat breakfast", "Lin family's house", "kitchen")
    await decompose(spy, world.personas["Mei Lin"], block, list(OBJECTS), block.start)
    schema = portable_schema(spy.asked[0].schema)
    assert schema["properties"]["steps"]["items"]["properties"]["object"]["enum"] == list(OBJECTS)


async def test_a_server_is_sent_the_choices_and_a_reply_outside_them_is_repaired():
    server = FakeOpenAIServer(lambda body: steps("kettle") if len(server.chat_requests) == 1
                              else steps("stove"))
    model = build_model_stack(client(server, TOWNBOT_STRUCTURED_OUTPUT="json_object"))
    ask = Ask(purpose="decompose", prompt="Break down breakfast.", agent="Mei Lin",
              schema=decomposition_among(OBJECTS), default=lambda: None)
    answer = await model.ask(ask)
    assert answer.steps[0].object == "stove"
    sent = server.chat_requests[0]["response_format"]
    assert sent["type"] == "json_object", "llama-cpp-python enforces the schema as a grammar"
    assert sent["schema"]["properties"]["steps"]["items"]["properties"]["object"]["enum"] == \
        list(OBJECTS)
    repair = server.chat_requests[1]["messages"][-1]["content"]
    assert "kettle" in repair or "stove" in repair, "the repair names what was wrong"
    assert find_layer(model, Checked).problems["wrong_shape"] == 1
    await model.close()


def test_a_choice_of_one_is_an_enum_and_long_lists_keep_only_the_check():
    schema = portable_schema(place_and_area_among(("Hobbs Cafe",), ("cafe", "kitchen")))
    assert schema["properties"]["place"] == {"enum": ["Hobbs Cafe"], "type": "string"}
    many = tuple(f"box {index}" for index in range(ENUM_LIMIT + 1))
    assert decomposition_among(many) is Decomposition
    assert place_and_area_among(many, ("cafe",)) is PlaceAndArea


class Prepared(LanguageModel):
    """Gives one prepared raw reply, read as a client reads it."""

    label = embedding_model = "prepared"
    embedding_dim = 2

    def __init__(self, raw: str) -> None:
        self.raw = raw

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        answer = request.schema.model_validate_json(self.raw)
        return Reply(answer, "prepared", 10, 5, False, raw=self.raw)

    async def ask(self, request):
        raise AssertionError("not used")

    async def embed(self, texts, call=None):
        raise AssertionError("not used")


async def test_a_recording_says_why_the_questions_own_check_refused_a_reply(tmp_path):
    path = tmp_path / "run.jsonl"
    recorder = ReplyRecorder(Prepared(steps("kettle")), path)
    ask = Ask(purpose="decompose", prompt="Break down breakfast.", schema=Decomposition,
              default=lambda: None, agent="Mei Lin",
              check=lambda a: f"unknown objects {[s.object for s in a.steps]}")
    await recorder.reply(ask)
    await recorder.close()
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["problem"] == "unusable" and "kettle" in record["why"]
    assert record["seconds"] >= 0 and record["cached_tokens"] == 0


async def test_a_failed_call_is_recorded_and_fails_again_in_the_replay(tmp_path):
    path = tmp_path / "run.jsonl"
    server = FakeOpenAIServer(lambda body: ("", "stop"))
    failing = client(server)

    async def refuse(request):
        from townbot.llm.port import CallFailed
        raise CallFailed("the server stayed unavailable")

    failing.reply = refuse  # type: ignore[method-assign]
    model = build_model_stack(ReplyRecorder(failing, path))
    ask = Ask(purpose="decompose", prompt="Break down breakfast.", schema=Decomposition,
              default=lambda: Decomposition.model_validate_json(steps("stove")))
    assert (await model.ask(ask)).steps[0].object == "stove"
    await model.close()
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["problem"] == "failed" and "unavailable" in record["why"]
    replayed = build_model_stack(ReplayModel(path))
    assert (await replayed.ask(ask)).steps[0].object == "stove"
    assert replayed.report().outcomes == {"failed": 1}


async def test_cached_prompt_tokens_reach_the_usage_records_and_usage():
    server = FakeOpenAIServer(lambda body: '{"choice": "Hobbs Cafe"}', prefix_cache=True)
    from townbot.llm.purposes import PlaceChoice

    model = build_model_stack(client(server))
    stable = "Choose a place among these, writing its name exactly as listed. " * 5
    for question in ("Where does Isabella open the cafe?", "Where does Klaus study?"):
        await model.ask(Ask(purpose="choose_place", prompt=stable + question, schema=PlaceChoice,
                            default=lambda: PlaceChoice(choice="Hobbs Cafe")))
    first, second = model.usage.drain()
    assert first.cached_tokens == 0 and second.cached_tokens > 50
    summary = summarise([r._asdict() for r in (first, second)])
    assert summary["cached_tokens"] == second.cached_tokens
    assert f"prompt tokens the server had cached: {second.cached_tokens}" in render_usage(summary)
    await model.close()
