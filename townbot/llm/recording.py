"""Real replies kept and given again: `ReplyRecorder` writes down what a server answered (JSON
lines, one per reply, raw text included), `ReplayModel` answers from such a file, so tests feed
the mind what real models say. The recorder sits right around the client, under the checking
layer, so repair requests are recorded too; a replay reads each reply through the same parsing
and judging as a live one, so it meets the same flaws and makes the same repairs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from townbot.llm.embedding import HashingEmbedder
from townbot.llm.local_embedding import MiniLMEmbedder
from townbot.llm.port import (
    AnswerT,
    Ask,
    CallContext,
    CallFailed,
    LanguageModel,
    Layer,
    Reply,
    answer_from_reply,
    usable,
)
from townbot.llm.structured import read_answer

RECORD_ENV = "TOWNBOT_RECORD"


class ReplyRecorder(Layer):
    """Passes every call on and appends each reply, raw text included, to a JSON-lines file."""

    def __init__(self, inner: LanguageModel, path: Path) -> None:
        super().__init__(inner)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("a", encoding="utf-8")

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        started = time.perf_counter()
        try:
            reply = await self.inner.reply(request)
        except CallFailed as error:
            self._write(request, {"raw": None, "model": self.label, "prompt_tokens": 0,
                                  "completion_tokens": 0, "problem": "failed", "why": str(error)},
                        started)
            raise
        kind, why = reply.problem_kind, reply.problem
        if reply.answer is not None and kind is None and (why := usable(request, reply.answer)):
            kind = "unusable"  # refused by the question's own check (the checking layer's kind)
        self._write(request, {"raw": reply.raw, "model": reply.model,
                              "prompt_tokens": reply.prompt_tokens,
                              "completion_tokens": reply.completion_tokens,
                              "cached_tokens": reply.cached_tokens, "problem": kind, "why": why},
                    started)
        return reply

    def _write(self, request: Ask, fields: dict[str, Any], started: float) -> None:
        line = {"purpose": request.purpose, "agent": request.agent, "prompt": request.prompt,
                "schema": request.schema.__name__, **fields,
                "seconds": round(time.perf_counter() - started, 2), "at": round(time.time(), 2)}
        self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._file.flush()  # a killed run keeps what it was answered

    async def close(self) -> None:
        self._file.close()
        await self.inner.close()


@dataclass
class ReplayStats:
    exact: int = 0  # replies found by purpose and the very same prompt
    in_order: int = 0  # the next unused reply of the purpose (the prompt had changed)
    missing: int = 0  # no reply left for the purpose: the call failed


class ReplayModel(LanguageModel):
    """Answers from a recording, reading each reply as a live one. Embeds with the embedder the
    recorded run used (a client's local MiniLM, or the hashing embedder)."""

    def __init__(self, path: Path, *, embedder: HashingEmbedder | MiniLMEmbedder | None = None,
                 label: str | None = None) -> None:
        self.records: list[dict[str, Any]] = [
            json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        self.label = label or f"replay of {path.name}"
        self._embedder = embedder or HashingEmbedder()
        self.embedding_model = getattr(self._embedder, "name", "offline-hashing-256")
        self.embedding_dim = self._embedder.dim
        self.replay = ReplayStats()
        self.unused = list(self.records)  # the replies not given yet, in the recorded order

    def _next(self, request: Ask) -> dict[str, Any] | None:
        """The first unused reply to the very same prompt, else the first of the purpose."""
        for kind, exact in (("exact", True), ("in_order", False)):
            index = next((i for i, record in enumerate(self.unused)
                          if record["purpose"] == request.purpose
                          and (not exact or record["prompt"] == request.prompt)), None)
            if index is not None:
                setattr(self.replay, kind, getattr(self.replay, kind) + 1)
                return self.unused.pop(index)
        self.replay.missing += 1
        return None

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        record = self._next(request)
        if record is None:
            raise CallFailed(f"the recording has no reply left for '{request.purpose}'")
        if record.get("problem") == "failed":
            raise CallFailed(record.get("why") or "the recorded call failed")
        raw = record.get("raw") or ""
        answer, problem, kind, _ = read_answer(request, raw) if raw.strip() else (
            None, "it was empty", "empty", [])
        return Reply(answer, record.get("model") or self.label, int(record.get("prompt_tokens") or 0),
                     int(record.get("completion_tokens") or 0), False, problem, kind, raw=raw,
                     cached_tokens=int(record.get("cached_tokens") or 0))

    async def ask(self, request: Ask[AnswerT]) -> AnswerT:
        return await answer_from_reply(self, request)

    async def embed(self, texts: Sequence[str], call: CallContext | None = None) -> np.ndarray:
        return self._embedder.embed(list(texts))
