"""The layer that makes every answer usable: check, one repair try naming the problem, then the
ask's default (outcome `fallback`; `failed` when the server gave no answer). Nothing a model does
can crash a tick except settings that cannot work at all (`ModelConfigError` passes through).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

from townbot.llm.port import (
    AnswerT,
    Ask,
    CallContext,
    CallFailed,
    Embedded,
    LanguageModel,
    Layer,
    ModelReport,
    Reply,
    usable,
)
from townbot.prompting import render


class Checked(Layer):
    def __init__(self, inner: LanguageModel) -> None:
        super().__init__(inner)
        self.problems: Counter[str] = Counter()  # cut_off, invalid_json, unusable, ...
        self.last_failure: str | None = None

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        try:
            first = await self.inner.reply(request)
        except CallFailed as error:
            self.last_failure = str(error)
            return self._default(request, "failed")
        if (problem := self._problem(request, first)) is None:
            return first
        repair = dataclasses.replace(request, prompt=render("repair", prompt=request.prompt, problem=problem))
        try:
            second = await self.inner.reply(repair)
        except CallFailed as error:
            self.last_failure = str(error)
            return self._default(request, "fallback", first)
        spent = _cost(first, second)
        if self._problem(request, second) is None:
            return dataclasses.replace(second, outcome="repaired", **spent)
        return self._default(request, "fallback", first, second)

    def _default(self, request: Ask[AnswerT], outcome: str, *spent: Reply) -> Reply[AnswerT]:
        model = spent[0].model if spent else self.label
        return Reply(request.default(), model, outcome=outcome, **_cost(*spent))

    def _problem(self, request: Ask[AnswerT], reply: Reply[AnswerT]) -> str | None:
        """Why a reply cannot be used (counted by kind), or None when it can."""
        if reply.problem is None and reply.answer is not None:
            problem, kind = usable(request, reply.answer), "unusable"
        else:
            problem, kind = reply.problem or "there was no answer", reply.problem_kind or "empty"
        if problem is not None:
            self.problems[kind] += 1
        return problem

    async def embed_report(self, texts: Sequence[str],
                           call: CallContext | None = None) -> Embedded:
        embedded = await self.inner.embed_report(texts, call)
        if embedded.failed:
            self.last_failure = f"{embedded.failed} texts could not be embedded"
        return embedded

    def report(self) -> ModelReport:
        return dataclasses.replace(self.inner.report(), problems=self.problems,
                                   last_failure=self.last_failure)


def _cost(*replies: Reply) -> dict:
    """The tokens of all the replies one call needed, as keyword arguments of a Reply."""
    return {"prompt_tokens": sum(r.prompt_tokens for r in replies),
            "completion_tokens": sum(r.completion_tokens for r in replies),
            "estimated": any(r.estimated for r in replies),
            "cached_tokens": sum(r.cached_tokens for r in replies)}
