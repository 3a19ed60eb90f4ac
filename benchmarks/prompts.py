"""CPU of rendering the prompts a town asks its model, by `prompting.render` and by substitute.

A town of --residents runs --hours game hours on the offline model while every prompt the mind
renders (its template and values) is kept. The kept prompts are then rendered again in rounds
that take turns: by `prompting.render` (a template's pieces joined) and by string.Template's
`substitute` (how render filled a template before), each text checked against the first; the
median of --rounds pairs is printed, with each round's figures beside it.

Usage: python benchmarks/prompts.py [--residents N] [--hours H] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable

from speed import run_offline_town

import townbot.town.engine  # noqa: F401  (loads the minds, whose `render` kept_prompts swaps)
from townbot import prompting

Prompt = tuple[str, dict[str, object], str]  # the template's name, its values, the text


async def kept_prompts(residents: int, hours: float) -> list[Prompt]:
    """Every prompt rendered in `hours` game hours of a town of `residents`."""
    kept: list[Prompt] = []
    render = prompting.render

    def keeping(name: str, /, **values: object) -> str:
        text = render(name, **values)
        kept.append((name, values, text))
        return text

    # The modules that took `render` by name (the mind's and the model layer's).
    users = [module for name, module in list(sys.modules.items())
             if name.startswith("townbot.") and getattr(module, "render", None) is render]
    for module in users:
        module.render = keeping  # type: ignore[attr-defined]
    try:
        await run_offline_town(residents, hours)
    finally:
        for module in users:
            module.render = render  # type: ignore[attr-defined]
    return kept


def by_substitute(name: str, /, **values: object) -> str:
    return prompting.template(name).substitute({k: str(v) for k, v in values.items()}).rstrip("\n")


def cpu_per_prompt(prompts: list[Prompt], render: Callable[..., str]) -> float:
    """CPU seconds a prompt to render all of `prompts` with `render` (each text checked)."""
    began = time.process_time()
    texts = [render(name, **values) for name, values, _ in prompts]
    spent = time.process_time() - began
    if texts != [text for _, _, text in prompts]:
        raise SystemExit(f"{render.__qualname__} rendered another text")
    return spent / len(prompts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--residents", type=int, default=25)
    parser.add_argument("--hours", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    prompts = asyncio.run(kept_prompts(args.residents, args.hours))
    templates = len({name for name, _, _ in prompts})
    print(f"{len(prompts)} prompts of {templates} templates kept from {args.hours:g} game hours "
          f"at {args.residents} residents")
    cpu_per_prompt(prompts, prompting.render)  # warm-up: each template split once
    ratios = []
    for _ in range(args.rounds):
        joined = cpu_per_prompt(prompts, prompting.render)
        substituted = cpu_per_prompt(prompts, by_substitute)
        ratios.append(substituted / joined)
        print(f"  render {joined * 1e6:5.2f} us a prompt, substitute {substituted * 1e6:5.2f} us: "
              f"{ratios[-1]:.1f}x")
    print(f"render takes 1/{statistics.median(ratios):.1f} of substitute's CPU a prompt "
          f"(median of {args.rounds} rounds)")


if __name__ == "__main__":
    main()
