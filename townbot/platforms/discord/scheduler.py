"""Ticks on a clock: one APScheduler interval job per town. A tick still running when the next
is due is skipped (max_instances=1) and logged, never run beside it."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobSubmissionEvent
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

log = logging.getLogger(__name__)

MIN_INTERVAL = 1.0  # "/town speed 0" means as fast as ticks finish, checked once a second
MISFIRE_GRACE = 30  # seconds late a tick may still start (after the loop was busy)


class TownScheduler:
    def __init__(self, *, min_interval: float = MIN_INTERVAL) -> None:
        self.min_interval = min_interval
        self.scheduler = AsyncIOScheduler()
        self.scheduler.add_listener(self._skipped, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED)
        self.skipped: Counter[str] = Counter()  # job id -> ticks skipped because one was running
        self._running: dict[str, asyncio.Task[object]] = {}
        self._cancelled: set[asyncio.Task[object]] = set()  # ticks a stop cut short

    def start(self) -> None:
        """Call from inside the running event loop: the scheduler binds to it."""
        asyncio.get_running_loop()
        self.scheduler.start()

    def add(self, key: str, tick: Callable[[], Awaitable[object]], seconds: float,
            paused: bool = False) -> None:
        async def run() -> None:
            task = asyncio.current_task()
            assert task is not None
            self._running[key] = task
            try:
                await tick()
            except asyncio.CancelledError:
                if task in self._cancelled:  # our own shutdown, already logged as a warning:
                    return  # not an ERROR and a traceback from APScheduler's executor
                raise
            finally:
                self._running.pop(key, None)
                self._cancelled.discard(task)

        self.scheduler.add_job(run, self._trigger(seconds), id=key, name=f"tick {key}",
                               max_instances=1, coalesce=True,
                               misfire_grace_time=MISFIRE_GRACE, replace_existing=True)
        if paused:
            self.scheduler.pause_job(key)

    def _trigger(self, seconds: float) -> IntervalTrigger:
        return IntervalTrigger(seconds=max(self.min_interval, seconds))

    def pause(self, key: str) -> None:
        self.scheduler.pause_job(key)

    def resume(self, key: str) -> None:
        self.scheduler.resume_job(key)

    def set_interval(self, key: str, seconds: float) -> None:
        """A new interval; a paused job stays paused (reschedule_job would resume it)."""
        if self.is_paused(key):
            self.scheduler.modify_job(key, trigger=self._trigger(seconds))
        else:
            self.scheduler.reschedule_job(key, trigger=self._trigger(seconds))

    def is_paused(self, key: str) -> bool:
        job = self.scheduler.get_job(key)
        return job is not None and job.next_run_time is None

    def interval(self, key: str) -> float | None:
        job = self.scheduler.get_job(key)
        return job.trigger.interval.total_seconds() if job is not None else None

    async def stop(self, key: str, grace: float = 30.0) -> None:
        """No more ticks of this town; the tick under way finishes within `grace` seconds or
        is cancelled (its transaction is never committed)."""
        if self.scheduler.get_job(key) is not None:
            self.scheduler.remove_job(key)
        running = self._running.get(key)
        if running is not None:
            await self._finish_or_cancel([running], grace)

    def _skipped(self, event: JobSubmissionEvent) -> None:
        self.skipped[event.job_id] += 1
        why = "the previous tick is still running" if event.code == EVENT_JOB_MAX_INSTANCES \
            else "the loop was busy past the grace time"
        log.warning("%s skipped a tick: %s (%d skipped so far)", event.job_id, why,
                    self.skipped[event.job_id])

    async def shutdown(self, grace: float = 30.0) -> None:
        """No new ticks; wait up to `grace` seconds for ticks under way; then stop."""
        if not self.scheduler.running:
            return
        self.scheduler.pause()
        await self._finish_or_cancel(list(self._running.values()), grace)
        self.scheduler.shutdown(wait=False)
        await asyncio.sleep(0)  # let the scheduler's own shutdown callback run in this loop

    async def _finish_or_cancel(self, ticks: list[asyncio.Task[object]], grace: float) -> None:
        if not ticks:
            return
        _, late = await asyncio.wait(ticks, timeout=grace)
        if late:
            log.warning("%d ticks did not finish in %.0f s and are cancelled (nothing of them is "
                        "committed)", len(late), grace)
            for task in late:
                self._cancelled.add(task)
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
