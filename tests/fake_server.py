"""An OpenAI-compatible server in process, for tests and benchmarks: no network at all.

It serves /chat/completions (the reply content comes from a function of the request) and
/embeddings (hashed bag-of-words vectors, deliberately not unit length) through an
`httpx2.MockTransport`, and keeps every request it received so tests can read what was sent.
Usage is reported like a real server's unless `report_usage` is off.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2

from townbot.llm.embedding import HashingEmbedder

# The reply content for a decoded chat request (and the finish reason, when not "stop").
ChatResponder = Callable[[dict[str, Any]], str | tuple[str, str] | Awaitable[str]]


def prompt_of(body: dict[str, Any]) -> str:
    """The user's message of a chat request."""
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def purpose_of(body: dict[str, Any]) -> str | None:
    """The schema name of a json_schema request (the client names it after the purpose)."""
    response_format = body.get("response_format") or {}
    return (response_format.get("json_schema") or {}).get("name")


def schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The answer schema a chat request carries: in response_format, or written out at the end
    of the prompt (after "JSON schema of the answer: ")."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return response_format["json_schema"]["schema"]
    marker = "JSON schema of the answer: "
    prompt = prompt_of(body)
    return json.loads(prompt[prompt.rindex(marker) + len(marker):]) if marker in prompt else None


def minimal_answer(schema: dict[str, Any], name: str = "") -> Any:
    """The smallest value that fits a (portable) JSON schema: first enum value, minimum, one item;
    texts by field name (a time for `start`, an emoji for `emoji`), since patterns are not sent."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {key: minimal_answer(part, key) for key, part in schema.get("properties", {}).items()}
    if kind == "array":
        return [minimal_answer(schema["items"], name) for _ in range(max(1, schema.get("minItems", 1)))]
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return SAMPLE_TEXTS.get(name, "tidy the desk")  # words: a lone letter reads as a placeholder


SAMPLE_TEXTS = {"start": "08:00", "emoji": "🙂"}


def counted_tokens(text: str) -> int:
    """The fake server's token count: words, so tests can tell it from the client's estimate."""
    return len(text.split()) + 3


class FakeOpenAIServer:
    def __init__(self, answer: ChatResponder, *, embedding_dim: int = 32,
                 report_usage: bool = True, prefix_cache: bool = False) -> None:
        self.answer = answer
        self.report_usage = report_usage
        self.prefix_cache = prefix_cache  # report cached tokens as vLLM and OpenAI do
        self._prompts: list[list[str]] = []
        self.embedder = HashingEmbedder(embedding_dim)
        self.chat_requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=self.transport())

    async def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content or b"{}")
        if request.url.path.endswith("/chat/completions"):
            self.chat_requests.append(body)
            return await self._chat(body)
        if request.url.path.endswith("/embeddings"):
            self.embedding_requests.append(body)
            return self._embeddings(body)
        return httpx2.Response(404, json={"error": {"message": f"no route {request.url.path}"}})

    async def _chat(self, body: dict[str, Any]) -> httpx2.Response:
        result = self.answer(body)
        if isinstance(result, Awaitable):
            result = await result
        content, finish = result if isinstance(result, tuple) else (result, "stop")
        prompt = " ".join(m["content"] for m in body["messages"])
        completion: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.chat_requests)}", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content}}]}
        if self.report_usage:
            prompt_tokens, completion_tokens = counted_tokens(prompt), counted_tokens(content)
            completion["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                                   "total_tokens": prompt_tokens + completion_tokens}
            if self.prefix_cache:
                completion["usage"]["prompt_tokens_details"] = {"cached_tokens": self._cached(prompt)}
        return httpx2.Response(200, json=completion)

    def _cached(self, prompt: str) -> int:
        """The words of the longest prefix this prompt shares with an earlier one (a server's
        prefix cache, counted as this server counts tokens)."""
        words = prompt.split()
        shared = 0
        for earlier in self._prompts:
            same = next((i for i, (a, b) in enumerate(zip(words, earlier, strict=False))
                         if a != b),
                        min(len(words), len(earlier)))
            shared = max(shared, same)
        self._prompts.append(words)
        return shared

    def _embeddings(self, body: dict[str, Any]) -> httpx2.Response:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"object": "embedding", "index": index,
                 "embedding": (3.0 * self.embedder.vector(text)).tolist()}
                for index, text in enumerate(texts)]
        response: dict[str, Any] = {"object": "list", "model": body["model"], "data": data}
        if self.report_usage:
            tokens = sum(counted_tokens(t) for t in texts)
            response["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
        return httpx2.Response(200, json=response)
