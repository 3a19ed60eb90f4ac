"""One evaluation of one town: interviews, the judge's rankings and ratings, the end-to-end
measures and what the evaluation itself cost. Returns plain data for the report."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from townbot.eval import measures
from townbot.eval.conditions import MATCH_ORDERS
from townbot.eval.interviews import CATEGORIES, CONDITIONS, AnswerRecord, Interviewer, fill, load_questions
from townbot.eval.judging import (
    LabelItem,
    Ranked,
    label_answers,
    memory_digest,
    not_told_apart,
    rank_answers,
    rate,
)
from townbot.eval.snapshot import TownMoment, TownSnapshot
from townbot.llm.metering import CollectedUsage
from townbot.llm.port import LanguageModel
from townbot.llm.settings import ModelSettings
from townbot.store.database import StoreError
from townbot.town import news
from townbot.town.usage import summarise
from townbot.world.clock import format_game_time

DENSITY_QUESTION = "Do you know of {name}?"  # the paper's own question (section 7.1.1)


@dataclass(frozen=True)
class EvalOptions:
    seed: int = 0
    conditions: tuple[str, ...] = tuple(CONDITIONS)
    retrieval_count: int = 10
    rankings: bool = True  # the interviews and ranking (section 6); off: end-to-end only
    orders: int = MATCH_ORDERS  # random match orders the ratings are averaged over


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- the controlled evaluation --------------------------------------------------------------------


async def controlled(snapshot: TownSnapshot, model: LanguageModel, judge: LanguageModel,
                     options: EvalOptions) -> dict[str, Any]:
    people = snapshot.residents
    interviewer = Interviewer(model, snapshot.end, people, options.retrieval_count)
    asks = []
    for name in people:
        view = snapshot.end.residents[name]
        for question in load_questions():
            text = fill(question, view, people, options.seed)
            asks += [interviewer.ask(name, text, condition, question_id=question.id,
                                     category=question.category)
                     for condition in options.conditions]
    note(f"  interviews: {len(asks)} answers ({len(people)} residents x 25 questions x "
         f"{len(options.conditions)} conditions)")
    answers: list[AnswerRecord] = await asyncio.gather(*asks)
    grouped: dict[tuple[str, str], dict[str, AnswerRecord]] = {}
    for record in answers:
        grouped.setdefault((record.resident, record.question_id), {})[record.condition] = record
    rankings: list[Ranked] = []
    if len(options.conditions) > 1:
        note(f"  judging: {len(grouped)} blind rankings")
        digests = {n: memory_digest(snapshot.end.residents[n].memories) for n in people}
        rankings = await asyncio.gather(*(
            rank_answers(judge, snapshot.end.residents[name].persona, digests[name],
                         next(iter(by.values())).question, {c: r.answer for c, r in by.items()},
                         random.Random(f"{options.seed}:{name}:{qid}"), qid,
                         next(iter(by.values())).category)
            for (name, qid), by in grouped.items()))
    # Rating is CPU (milliseconds a match): the categories' table shows means only, which a
    # fifth of the orders settles.
    category_orders = max(1, options.orders // 5)
    note(f"  rating: {len(rankings)} rankings in {options.orders} random match orders, and "
         f"by category in {category_orders}")
    ratings = rate(rankings, options.conditions, options.seed, options.orders)
    categories = {cat: rate([r for r in rankings if r.category == cat], options.conditions,
                            options.seed, category_orders) for cat in CATEGORIES}
    return {"interviews": [a.to_dict() for a in answers],
            "rankings": [dataclasses.asdict(r) for r in rankings],
            "judge_failures": sum(not r.order for r in rankings),
            "ratings": {c: dataclasses.asdict(r) for c, r in ratings.items()},
            "not_told_apart": not_told_apart(ratings),
            "identical_answers": identical_answers(grouped, options.conditions),
            "categories": {cat: {c: dataclasses.asdict(r) for c, r in rs.items()}
                           for cat, rs in categories.items()},
            "pattern": category_pattern(categories)}


def identical_answers(grouped: dict[tuple[str, str], dict[str, AnswerRecord]],
                      conditions: Sequence[str]) -> list[dict[str, Any]]:
    """For each pair of conditions, how many questions they answered word for word alike: a
    judge cannot tell apart answers that are the same."""
    pairs = []
    for i, first in enumerate(conditions):
        for second in conditions[i + 1:]:
            both = [by for by in grouped.values() if first in by and second in by]
            same = sum(by[first].answer == by[second].answer for by in both)
            pairs.append({"conditions": [first, second], "identical": same, "of": len(both),
                          "share": round(same / len(both), 3) if both else 0.0})
    return pairs


def category_pattern(categories: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per category, the condition that loses the most TrueSkill against the full architecture
    (the paper: without reflection, synthesis questions suffer)."""
    pattern = {}
    for category, ratings in categories.items():
        if "full" not in ratings or len(ratings) < 2:
            continue
        losses = {c: round(ratings["full"].mu - r.mu, 2) for c, r in ratings.items() if c != "full"}
        pattern[category] = {"losses": losses, "largest_loss": max(losses, key=lambda c: losses[c])}
    return pattern


# --- the end-to-end measures ------------------------------------------------------------------------


async def aware_of(moment: TownMoment, interviewer: Interviewer, judge: LanguageModel,
                   event: news.TrackedEvent) -> list[measures.Checked]:
    names = sorted(moment.residents)
    records = await asyncio.gather(*(interviewer.ask(n, event.question) for n in names))
    labels = await label_answers(judge, f"of {event.title}", [
        LabelItem(r.question, r.answer, event.answer_names or event.about) for r in records])
    checked = []
    for record, said_yes in zip(records, labels, strict=True):
        backing = measures.backing_memory(moment.residents[record.resident].memories,
                                          event.patterns, news.SOURCES)
        checked.append(measures.Checked(record.resident, event.key, record.answer, said_yes,
                                        backing.id if backing else None,
                                        backing.text if backing else None,
                                        record.unmet_claims, record.town_guard))
    return checked


async def relationships(moment: TownMoment, interviewer: Interviewer, judge: LanguageModel,
                        people: list[str]) -> list[measures.Checked]:
    """The paper's density interview: every resident asked about every other one."""
    pairs = [(a, b) for a in people for b in people if a != b]
    records = await asyncio.gather(*(interviewer.ask(a, DENSITY_QUESTION.format(name=b))
                                      for a, b in pairs))
    labels = await label_answers(judge, "the person the question names", [
        LabelItem(r.question, r.answer, (rf"\b{b.split()[0]}\b",))
        for r, (_, b) in zip(records, pairs, strict=True)])
    checked = []
    for (a, b), record, said_yes in zip(pairs, records, labels, strict=True):
        view = moment.residents[a]
        patterns = measures.name_patterns(b, people)
        backing = measures.backing_memory(view.memories, patterns)
        in_summary = all(p.search(view.summary) for p in patterns)
        backing_id = backing.id if backing else (-1 if in_summary else None)
        text = backing.text if backing else ("(the resident's summary)" if in_summary else None)
        checked.append(measures.Checked(a, b, record.answer, said_yes, backing_id, text,
                                        record.unmet_claims, record.town_guard))
    return checked


async def end_to_end(snapshot: TownSnapshot, model: LanguageModel, judge: LanguageModel,
                     options: EvalOptions) -> dict[str, Any]:
    people = snapshot.residents
    events = news.tracked_events()
    result: dict[str, Any] = {"events": {}, "network": {"residents": people}}
    checked_all: list[measures.Checked] = []
    relation_checks: list[measures.Checked] = []
    edges: dict[str, set[tuple[str, str]]] = {}
    for moment in (snapshot.start, snapshot.end):
        interviewer = Interviewer(model, moment, people, options.retrieval_count)
        note(f"  end-to-end at the {moment.label} ({format_game_time(moment.now)}): awareness "
             f"and {len(people) * (len(people) - 1)} relationship questions")
        for key, event in events.items():
            checked = await aware_of(moment, interviewer, judge, event)
            checked_all += checked
            result["events"].setdefault(key, {"title": event.title})[moment.label] = \
                measures.awareness(checked)
        pairs = await relationships(moment, interviewer, judge, people)
        relation_checks += pairs
        known = measures.known_pairs(people, {(c.resident, c.subject): c.said_yes
                                              and not c.hallucinated for c in pairs})
        edges[moment.label] = set(known)
        result["network"][moment.label] = {
            "density": round(measures.density(len(people), len(known)), 3),
            "edges": [list(e) for e in known], "said_yes": sum(c.said_yes for c in pairs),
            "hallucinated": sum(c.hallucinated for c in pairs)}
    result["network"]["gained"] = [list(e) for e in sorted(edges["end"] - edges["start"])]
    result["network"]["lost"] = [list(e) for e in sorted(edges["start"] - edges["end"])]
    memories = {name: view.memories for name, view in snapshot.end.residents.items()}
    for key, event in events.items():
        heard = news.diffusion(memories, event)
        entry = result["events"][key]
        entry["diffusion"] = [{"resident": h.resident, "time": format_game_time(h.time),
                               "teller": h.teller, "how": h.how, "memory_id": h.memory_id,
                               "memory": h.text} for h in heard]
        if event.place and event.window and event.place in snapshot.world.sectors:
            channel = snapshot.world.sectors[event.place].channel
            where = measures.presence(snapshot.events, channel, snapshot.end.now, people)
            came = measures.attendance(heard, where, event, snapshot.end.now)
            if came is not None:
                entry["attendance"] = {**came, "place": event.place, "starts": event.starts,
                                       "ends": event.ends,
                                       "present": {n: [[format_game_time(a), format_game_time(b)]
                                                       for a, b in spans]
                                                   for n, spans in where.items()}}
    everything = checked_all + relation_checks
    result["hallucination"] = {
        "awareness": measures.hallucinations(checked_all),
        "relationships": measures.hallucinations(relation_checks),
        **measures.hallucinations(everything),
        "examples": [c.report() for c in everything if c.hallucinated][:10]}
    return result


# --- cost ---------------------------------------------------------------------------------------


def cost(usage: CollectedUsage, settings: ModelSettings) -> dict[str, Any]:
    summary = summarise([{**r._asdict(), "tick": 0} for r in usage.drain()], settings)
    return {**{key: summary[key] for key in ("calls", "prompt_tokens", "completion_tokens",
                                             "embedding_tokens", "estimated", "fallbacks",
                                             "budget_defaults", "price", "unpriced_tokens")},
            "purposes": {p: {key: e[key] for key in ("calls", "prompt_tokens", "completion_tokens")}
                         for p, e in summary["purposes"].items()}}


async def evaluate(snapshot: TownSnapshot, model: LanguageModel, judge: LanguageModel,
                   settings: ModelSettings, options: EvalOptions,
                   usage: CollectedUsage) -> dict[str, Any]:
    """`model` answers as the residents, `judge` ranks and labels; both send their usage
    records to `usage`, which becomes the evaluation's cost."""
    town = snapshot.town
    if (town.embedding_model, town.embedding_dim) != (model.embedding_model, model.embedding_dim):
        raise StoreError(
            f"this town's memories were embedded with {town.embedding_model} "
            f"({town.embedding_dim} dimensions) but the configured embedder is "
            f"{model.embedding_model} ({model.embedding_dim}); configure the town's embedding "
            "model (TOWNBOT_EMBEDDING_MODEL) so interviews retrieve what the residents remember")
    result: dict[str, Any] = {
        "seed": options.seed, "database": snapshot.path,
        "town": {"name": town.name, "seed": town.seed, "model": town.model,
                 "embedding_model": town.embedding_model, "start": town.start,
                 "now": format_game_time(snapshot.end.now), "ticks": town.tick,
                 "residents": len(snapshot.residents)}}
    if options.rankings:
        result.update(await controlled(snapshot, model, judge, options))
    result.update(await end_to_end(snapshot, model, judge, options))
    result["cost"] = cost(usage, settings)
    return result
