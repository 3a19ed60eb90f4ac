"""Dialogue (paper 4.3.2): each line conditioned on the speaker's memories of the other and on
the conversation so far, until someone ends it or the turn cap is reached. Afterwards each
participant remembers the conversation and what it learned, which is how news spreads.

A setting generates the whole exchange in one call instead (the paper's suggested saving).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from townbot.llm.port import Ask, LanguageModel
from townbot.llm.purposes import Exchange, Takeaways, Utterance, WholeConversation
from townbot.mind.memory import MemoryStream
from townbot.mind.retrieval import retrieve
from townbot.prompting import render
from townbot.world.clock import clock_face, minute_of_day

Line = tuple[str, str]  # (speaker, text)


@dataclass
class Voice:
    """What a speaker brings to a conversation: who it is and what it remembers."""

    name: str
    summary: str
    stream: MemoryStream
    action: str
    already_told: list[str] = field(default_factory=list)


def transcript(lines: list[Line]) -> str:
    return "\n".join(f'{speaker}: "{text}"' for speaker, text in lines) or "(nothing yet)"


TOKENS_PER_RECALL = 350  # budget of remembered text per retrieval in a line's prompt


async def recall_for(model: LanguageModel, voice: Voice, partner: str, topic: str,
                     now: datetime, count: int) -> list[dict]:
    """The paper's two retrievals for a line: the partner, and what is being talked about."""
    queries = [f"What does {voice.name} know about {partner}?", topic]
    vectors = await model.embed(queries)
    found: dict[int, dict] = {}
    for vector in vectors:
        for scored in retrieve(voice.stream, vector, now, limit=count,
                               token_budget=TOKENS_PER_RECALL):
            m = scored.memory
            found[m.id] = {"text": m.text, "importance": m.importance, "kind": m.kind}
    return list(found.values())


async def next_line(model: LanguageModel, voice: Voice, partner: Voice, lines: list[Line],
                    now: datetime, place: str, count: int) -> Utterance:
    topic = lines[-1][1] if lines else f"things {voice.name} would bring up with {partner.name}"
    memories = await recall_for(model, voice, partner.name, topic, now, count)
    prompt = render("utterance", summary=voice.summary, time=clock_face(minute_of_day(now)),
                    place=place, first_name=voice.name.split()[0], partner=partner.name,
                    partner_action=partner.action,
                    context="\n".join(f"- {m['text']}" for m in memories) or "- (nothing)",
                    history=transcript(lines))
    return await model.ask(Ask(
        purpose="utterance", prompt=prompt, schema=Utterance, agent=voice.name,
        default=lambda: Utterance(text="Anyway, I should get going. See you later!", end=True),
        context={"speaker": voice.name, "partner": partner.name, "partner_action": partner.action,
                 "speaker_action": voice.action,
                 "memories": memories, "history": list(lines), "turn": len(lines),
                 "already_said": voice.already_told + [t for s, t in lines if s == voice.name]}))


async def converse_by_lines(model: LanguageModel, first: Voice, second: Voice, now: datetime,
                            place: str, turn_cap: int, count: int) -> list[Line]:
    lines: list[Line] = []
    speakers = (first, second)
    while len(lines) < turn_cap:
        speaker, listener = speakers[len(lines) % 2], speakers[(len(lines) + 1) % 2]
        reply = await next_line(model, speaker, listener, lines, now, place, count)
        lines.append((speaker.name, reply.text))
        if reply.end and len(lines) >= 2:
            break
    return lines


def _whole_problem(answer: WholeConversation, names: set[str]) -> str | None:
    strangers = {line.speaker for line in answer.lines} - names
    return f"speakers {sorted(strangers)} are not in this conversation" if strangers else None


async def converse_in_one_call(model: LanguageModel, first: Voice, second: Voice, now: datetime,
                               place: str, count: int) -> list[Line]:
    memories_a = await recall_for(model, first, second.name, "things to talk about", now, count)
    memories_b = await recall_for(model, second, first.name, "things to talk about", now, count)
    prompt = render("conversation", summary_a=first.summary, summary_b=second.summary,
                    time=clock_face(minute_of_day(now)), place=place, first=first.name,
                    second=second.name,
                    context_a="; ".join(m["text"] for m in memories_a) or "nothing in particular",
                    context_b="; ".join(m["text"] for m in memories_b) or "nothing in particular")
    answer = await model.ask(Ask(
        purpose="conversation", prompt=prompt, schema=WholeConversation, agent=first.name,
        check=lambda a: _whole_problem(a, {first.name, second.name}),
        default=lambda: WholeConversation(lines=[
            Exchange(speaker=first.name, text=f"Hello, {second.name.split()[0]}!"),
            Exchange(speaker=second.name, text=f"Hi, {first.name.split()[0]}. Good to see you.")]),
        context={"first": first.name, "second": second.name, "memories_a": memories_a,
                 "memories_b": memories_b, "partner_action_a": second.action,
                 "partner_action_b": first.action, "already_said_a": first.already_told,
                 "already_said_b": second.already_told}))
    return [(line.speaker, line.text) for line in answer.lines]


async def takeaways(model: LanguageModel, voice: Voice, partner: str, lines: list[Line]) -> list[str]:
    prompt = render("takeaways", name=voice.name, partner=partner, transcript=transcript(lines))
    answer = await model.ask(Ask(
        purpose="takeaways", prompt=prompt, schema=Takeaways, agent=voice.name,
        default=lambda: Takeaways(facts=[]),
        context={"name": voice.name, "partner": partner, "lines": lines}))
    return answer.facts
