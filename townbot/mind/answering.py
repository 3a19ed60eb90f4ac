"""Answering as the agent (paper 6.1's interviews): a reply in the agent's voice from retrieval
and its summary, optionally to an interviewer persona, with the paper's ablation switches.

It writes no memory and leaves last-access times alone unless asked to remember.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from townbot.llm.port import Ask, LanguageModel
from townbot.llm.purposes import Answer
from townbot.mind.memory import KINDS, MemoryStream
from townbot.mind.retrieval import retrieve
from townbot.prompting import quoted, render
from townbot.world.model import Persona


@dataclass(frozen=True)
class Ablation:
    """Which kinds of memory the agent may not use (the paper's evaluation conditions)."""

    observations: bool = True
    reflections: bool = True
    plans: bool = True

    def kinds(self) -> tuple[str, ...]:
        banned = {"observation": not self.observations, "reflection": not self.reflections,
                  "plan": not self.plans}
        return tuple(kind for kind in KINDS if not banned.get(kind, False))


async def answer_as(model: LanguageModel, persona: Persona, summary: str, stream: MemoryStream,
                    question: str, now: datetime, *, asker: str = "Someone",
                    access: Ablation = Ablation(), remember: bool = False,
                    count: int = 10) -> str:
    vector = (await model.embed([question]))[0]
    found = retrieve(stream, vector, now, limit=count, kinds=access.kinds(), touch=remember)
    memories = [s.memory.text for s in found]
    prompt = render("answer", summary=summary, first_name=persona.first_name,
                    context="\n".join(f"- {t}" for t in memories) or "- (nothing comes to mind)",
                    asker=asker, question=quoted(question))
    answer = await model.ask(Ask(
        purpose="answer", prompt=prompt, schema=Answer, agent=persona.name,
        default=lambda: Answer(text="I'm sorry, I can't think of an answer to that right now."),
        context={"name": persona.name, "question": question, "memories": memories,
                 "asker": asker, "background": persona.background}))
    return answer.text
