"""Structured answers over the OpenAI chat API: the request in each mode, the reply read back.
Every reply goes through the same reading (JSON extracted, then mended and judged), so a client
and a replay judge alike.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from pydantic import BaseModel

from townbot.llm.judging import coerce, judge
from townbot.llm.port import AnswerT, Ask
from townbot.prompting import render
from townbot.world.errors import format_location

# Keywords some servers' structured-output grammars reject (llama-cpp-python's crashes on a
# `pattern`); pydantic still enforces them locally.
UNPORTABLE_KEYWORDS = frozenset({"title", "description", "default", "minLength", "maxLength",
                                 "pattern", "format"})
THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)
FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@cache
def portable_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The schema in the subset every structured-output server accepts: references inlined,
    every property required, no extra properties, no lengths, patterns or titles."""
    raw = schema.model_json_schema()
    definitions = raw.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return walk(definitions[node["$ref"].rsplit("/", 1)[-1]])
        out = {key: walk(value) for key, value in node.items()
               if key not in UNPORTABLE_KEYWORDS and key not in ("properties", "const")}
        if "const" in node:  # a choice of one (a Literal of one value): an enum every grammar reads
            out["enum"] = [node["const"]]
        if "properties" in node:
            out["properties"] = {name: walk(value) for name, value in node["properties"].items()}
            out["required"] = list(node["properties"])
            out["additionalProperties"] = False
        return out

    return walk(raw)


def chat_messages(request: Ask, mode: str) -> list[dict[str, str]]:
    """The request's messages. Outside json_schema mode the schema is written out at the end
    of the prompt and a system message, the same for every request, says to follow it: a
    schema that names the question's choices (the objects in a room) differs from call to
    call, and a server's prefix cache reuses only what comes before the first difference."""
    if mode == "json_schema":
        return [{"role": "user", "content": request.prompt}]
    schema = json.dumps(portable_schema(request.schema), separators=(",", ":"))
    return [{"role": "system", "content": render("json_instruction")},
            {"role": "user", "content": request.prompt + "\n\n" + render("answer_schema",
                                                                           schema=schema)}]


def response_format(request: Ask, mode: str) -> dict[str, Any] | None:
    """What `response_format` carries in a mode (None: the field is left out)."""
    schema = portable_schema(request.schema)
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {
            "name": re.sub(r"[^A-Za-z0-9_-]", "_", request.purpose)[:64] or "answer",
            "schema": schema, "strict": True}}
    if mode == "json_object":
        # OpenAI ignores the extra key; llama-cpp-python enforces it as a grammar.
        return {"type": "json_object", "schema": schema}
    return None


# --- reading a reply back -------------------------------------------------------------------


def extract_json(content: str) -> str:
    """The JSON object in a reply: without a reasoning model's <think> block or code fences."""
    text = THINKING.sub("", content).strip()
    if fenced := FENCE.match(text):
        text = fenced.group(1)
    if not text.startswith("{") and "{" in text:
        text = text[text.index("{"): text.rindex("}") + 1] if "}" in text else text[text.index("{"):]
    return text


def read_answer(request: Ask[AnswerT], content: str,
                ) -> tuple[AnswerT | None, str | None, str | None, list[str]]:
    """A reply's content as the ask's answer, parsed, mended and judged: (answer, problem,
    problem kind, values mended), exactly one of answer and problem set."""
    try:
        data = json.loads(extract_json(content))
    except json.JSONDecodeError as error:
        return None, f"it was not valid JSON ({error.msg} at character {error.pos})", "invalid_json", []
    answer, mended, error = coerce(request.schema, data)
    if answer is None:
        assert error is not None
        details = "; ".join(f"{format_location(e['loc'])}: {e['msg']}" for e in error.errors()[:3])
        return None, f"it did not have the required format ({details})", "wrong_shape", mended
    if (complaint := judge(request, answer)) is not None:
        return None, complaint, "placeholder", mended
    return answer, None, None, mended  # type: ignore[return-value]
