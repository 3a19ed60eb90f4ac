"""What a running bot's towns are doing, as Prometheus figures: ticks and their duration,
model calls and the share answered by defaults, the posts waiting to be sent, and the budget
left. One registry per process (not prometheus_client's global one), labelled by server.

Ticks are counted as they happen; the rest is read from the towns when /metrics is asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

from townbot.llm.port import DEFAULTED

# A tick takes from a few milliseconds (offline) to a minute (a slow model at 25 residents).
TICK_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60, 120)


class TownMetrics(Collector):
    """`towns()` gives the open towns by server id (GuildTown-like: engine, service, backlog)."""

    def __init__(self, towns: Callable[[], Mapping[int, Any]]) -> None:
        self.towns = towns
        self.registry = CollectorRegistry()
        self.ticks = Counter("townbot_ticks", "Ticks committed by this process", ["guild"],
                             registry=self.registry)
        self.tick_seconds = Histogram("townbot_tick_duration_seconds", "Real seconds a tick took",
                                      ["guild"], buckets=TICK_BUCKETS, registry=self.registry)
        self.backlogs: dict[int, int] = {}  # server id -> posts waiting, after its last tick
        self.registry.register(self)

    def tick_done(self, guild_id: int, seconds: float, backlog: int) -> None:
        self.ticks.labels(str(guild_id)).inc()
        self.tick_seconds.labels(str(guild_id)).observe(seconds)
        self.backlogs[guild_id] = backlog

    def text(self) -> bytes:
        return generate_latest(self.registry)

    def collect(self) -> Iterator[Metric]:
        """The figures read from the towns (prometheus_client asks when /metrics is read)."""
        calls = GaugeMetricFamily("townbot_model_calls", "Model calls this process made, by "
                                  "outcome", labels=["guild", "outcome"])
        defaulted = GaugeMetricFamily("townbot_defaulted_share", "Share of model calls answered "
                                      "by defaults (server failures and unusable replies)",
                                      labels=["guild"])
        backlog = GaugeMetricFamily("townbot_outbox_backlog", "Posts waiting to be sent",
                                    labels=["guild"])
        budget = GaugeMetricFamily("townbot_budget_left", "Share of the most used budget cap "
                                   "still left (only when caps are set)", labels=["guild"])
        resting = GaugeMetricFamily("townbot_resting", "1 while a town rests for want of "
                                    "visitors", labels=["guild"])
        for guild_id, town in sorted(self.towns().items()):
            label = str(guild_id)
            report = town.engine.model.report()
            for outcome, count in sorted(report.outcomes.items()):
                calls.add_metric([label, outcome], count)
            total = sum(report.outcomes.values())
            share = sum(report.outcomes.get(o, 0) for o in DEFAULTED) / total if total else 0.0
            defaulted.add_metric([label], share)
            backlog.add_metric([label], self.backlogs.get(guild_id, 0))
            pressure = report.budget.pressure(town.engine.clock.day_number) \
                if report.budget is not None else None
            if pressure is not None:
                budget.add_metric([label], max(0.0, 1.0 - pressure.fraction))
            resting.add_metric([label], float(bool(town.rest and town.rest.resting)))
        yield from (calls, defaulted, backlog, budget, resting)
