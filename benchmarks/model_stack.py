"""CPU the model stack's layers add to each call, the offline model's own work left out.

A town of --residents runs --hours game hours on the offline model while every call the engine
makes (asks and embeddings, with the context it stamps on them) is kept. The kept calls are then
made again, in rounds that take turns: straight to the offline model, and through a fresh
`build_model_stack(...)` around it behind the engine's `WithContext` (the whole path). The
offline model remembers its replies after the first round, so its own work shrinks to a look-up
in both; the layers' cost per call is the difference of the two over the calls made, the median
of --rounds pairs printed with each round's figures beside it.

Usage: python benchmarks/model_stack.py [--residents N] [--hours H] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from speed import run_offline_town

from townbot.llm.metering import CollectedUsage
from townbot.llm.offline import OfflineModel
from townbot.llm.port import AnswerT, Ask, CallContext, Embedded, LanguageModel, Reply
from townbot.llm.stack import WithContext, build_model_stack

Call = tuple[str, Any, CallContext | None]  # the method, its ask or texts, its call context


async def kept_calls(residents: int, hours: float) -> tuple[list[Call], list[int]]:
    """Every call the engine made in `hours` game hours, and the game day each was made on."""
    calls: list[Call] = []
    days: list[int] = []
    originals = {name: getattr(WithContext, name) for name in ("ask", "reply", "embed",
                                                                "embed_report")}

    def keeping(name: str) -> Callable[..., Any]:
        async def method(self: WithContext, payload: Any, call: CallContext | None = None) -> Any:
            calls.append((name, payload, call))
            days.append(self.context().game_day or 1)
            if name in ("ask", "reply"):
                return await originals[name](self, payload)
            return await originals[name](self, payload, call)
        return method

    for name in originals:
        setattr(WithContext, name, keeping(name))
    try:
        await run_offline_town(residents, hours)
    finally:
        for name, method in originals.items():
            setattr(WithContext, name, method)
    return calls, days


class Remembered(OfflineModel):
    """The offline model answering each call once: a call met again (same purpose, agent and
    prompt; same texts) gets the reply kept from the first time, so that from the second
    round on the model's own work is a dictionary look-up and the layers' cost stands out."""

    def __init__(self) -> None:
        super().__init__(seed=0)
        self.replies: dict[tuple[Any, ...], Reply] = {}
        self.embedded: dict[tuple[str, ...], Embedded] = {}

    async def reply(self, request: Ask[AnswerT]) -> Reply[AnswerT]:
        key = (request.purpose, request.agent, request.prompt)
        if key not in self.replies:
            self.replies[key] = await super().reply(request)
        return self.replies[key]

    async def embed_report(self, texts: Sequence[str],
                           call: CallContext | None = None) -> Embedded:
        key = tuple(texts)
        if key not in self.embedded:
            self.embedded[key] = await super().embed_report(texts, call)
        return self.embedded[key]


async def make(calls: Sequence[Call], days: Sequence[int],
               model: Callable[[int], LanguageModel]) -> float:
    """CPU seconds to make every call through `model(game_day)`."""
    began = time.process_time()
    for (name, payload, call), day in zip(calls, days, strict=True):
        target = model(day)
        if name in ("ask", "reply"):
            await getattr(target, name)(payload)
        else:
            await getattr(target, name)(payload, call)
    return time.process_time() - began


async def one_round(calls: Sequence[Call], days: Sequence[int],
                    inner: Remembered) -> tuple[float, float]:
    """CPU of the calls straight to the (remembering) offline model, then through a fresh stack
    around it behind the engine's `WithContext`."""
    usage = CollectedUsage()
    # What the innermost layer hands the model: a stamped ask to `reply`, texts to
    # `embed_report` (speed.py's CpuTimed counts the same two methods as the model's own CPU).
    bare_calls = [("reply", payload.within(CallContext(game_day=day, usage=usage)), call)
                  if isinstance(payload, Ask) else ("embed_report", payload, call)
                  for (name, payload, call), day in zip(calls, days, strict=True)]
    bare_cpu = await make(bare_calls, days, lambda day: inner)
    context = {"day": 1}
    stacked = WithContext(build_model_stack(inner),
                          lambda: CallContext(game_day=context["day"], usage=usage))

    def through_stack(day: int) -> LanguageModel:
        context["day"] = day
        return stacked

    stack_cpu = await make(calls, days, through_stack)
    return bare_cpu, stack_cpu


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--residents", type=int, default=25)
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    calls, days = await kept_calls(args.residents, args.hours)
    kinds = {name: sum(1 for kept in calls if kept[0] == name) for name, _, _ in calls}
    print(f"{len(calls)} calls kept from {args.hours:g} game hours at {args.residents} residents: "
          + ", ".join(f"{n} {name}" for name, n in kinds.items()))
    inner = Remembered()
    await one_round(calls, days, inner)  # warm-up: the model answers each call once
    added = []
    for _ in range(args.rounds):
        bare_cpu, stack_cpu = await one_round(calls, days, inner)
        added.append((stack_cpu - bare_cpu) / len(calls))
        print(f"  offline model alone {bare_cpu * 1e3:7.1f} ms, through the stack "
              f"{stack_cpu * 1e3:7.1f} ms: {added[-1] * 1e6:5.1f} us a call added")
    print(f"the stack's layers: {statistics.median(added) * 1e6:.1f} us CPU a call "
          f"(median of {args.rounds} rounds)")


if __name__ == "__main__":
    asyncio.run(main())
