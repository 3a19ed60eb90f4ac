"""`townbot export`: a town's state and history as JSON or Markdown. The JSON format is in
docs/data.md ("Export format"): change its keys only with a new `format` version.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from townbot.mind.memory import KINDS
from townbot.store.database import Store, StoreError, conversations
from townbot.world.clock import GameClock, format_game_time, parse_game_time

EXPORT_FORMAT = "townbot-export/1"


async def export_town(store: Store) -> dict[str, Any]:
    town = await store.town()
    if town is None:
        raise StoreError(f"{store.path} holds no town yet; run `townbot sim --db {store.path}` first")
    clock = GameClock(parse_game_time(town.start), town.tick_minutes, town.tick)
    memories: dict[str, dict[str, list]] = defaultdict(lambda: {k: [] for k in KINDS})
    for stored in await store.memories(town.id):
        m = stored.memory
        memories[stored.agent][m.kind].append({
            "id": m.id, "text": m.text, "importance": m.importance,
            "created": format_game_time(m.created),
            "last_accessed": format_game_time(m.last_accessed), "evidence": list(m.evidence)})
    agents = [{
        "name": name,
        "location": {"sector": body["sector"], "arena": body["arena"],
                     "walking_to": body["travel_sector"]},
        "action": body["action"], "emoji": body["emoji"], "object": body["object_path"],
        "today": {"date": mind.get("day"), "day_plan": mind.get("day_plan", []),
                  "schedule": mind.get("blocks", [])},
        "memory_counts": {k: len(v) for k, v in memories[name].items()},
        "memories": memories[name],
    } for name, (body, mind) in (await store.agents(town.id)).items()]
    return {
        "format": EXPORT_FORMAT,
        "town": {"id": town.id, "name": town.name, "start": town.start,
                 "now": format_game_time(clock.now), "tick": town.tick,
                 "tick_minutes": town.tick_minutes, "seed": town.seed, "model": town.model,
                 "embedding_model": town.embedding_model, "embedding_dim": town.embedding_dim},
        "agents": agents,
        "conversations": await conversations(store, town.id),
        "objects": [{"path": p, "state": s} for p, s in (await store.objects(town.id)).items()],
        "events": [{"time": e.game_time, "channel": e.channel, "kind": e.kind, "actor": e.actor,
                    "text": e.text, "emoji": e.emoji, "place": e.place}
                   for e in await store.events(town.id)],
    }


def to_markdown(data: dict[str, Any]) -> str:
    town = data["town"]
    lines = [f"# {town['name']} at {town['now']}", "",
             f"Tick {town['tick']} ({town['tick_minutes']} min each), model: {town['model']}", ""]
    for agent in data["agents"]:
        where = agent["location"]
        place = (f"walking to {where['walking_to']}" if where["walking_to"]
                 else f"{where['sector']}: {where['arena']}")
        lines += [f"## {agent['name']}", f"{agent['emoji']} {agent['action']} ({place})", "",
                  "Today's plan:"]
        lines += [f"- {item}" for item in agent["today"]["day_plan"]] or ["- (none yet)"]
        counts = ", ".join(f"{k} {v}" for k, v in agent["memory_counts"].items())
        lines += ["", f"Memories: {counts}", ""]
        for kind, items in agent["memories"].items():
            for memory in items[-5:]:
                lines.append(f"- [{kind}, {memory['importance']}, {memory['created']}] "
                             f"{memory['text']}")
        lines.append("")
    lines += ["## Conversations", ""]
    for talk in data["conversations"]:
        lines.append(f"### {talk['started']} at {talk['sector']}: {', '.join(talk['participants'])}")
        lines += [f"- {u['speaker']}: {u['text']}" for u in talk["utterances"]]
    lines += ["", "## Objects", ""] + [f"- {o['path']}: {o['state']}" for o in data["objects"]]
    lines += ["", "## Events", ""]
    lines += [f"- {e['time']} #{e['channel']} {e['emoji']} {e['actor']} {e['text']}"
              for e in data["events"]]
    return "\n".join(lines) + "\n"
