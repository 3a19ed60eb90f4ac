"""The towns this bot hosts, one per server (each a `GuildTown`: the service, its Discord state,
publisher and outlet), and who counts as a moderator where; their rest and backups, and closing
them (opening one and its tick job: `hosting.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from townbot.llm.settings import ModelSettings
from townbot.mind.answering import Ablation
from townbot.platforms.discord.config import DiscordConfig, Upkeep
from townbot.platforms.discord.posts import split_text
from townbot.platforms.discord.publisher import GLOBAL_WINDOWS, Pacer, Publisher, classify
from townbot.platforms.discord.scheduler import TownScheduler
from townbot.platforms.discord.setup import WebhookOutlet
from townbot.platforms.discord.store import DiscordStore
from townbot.platforms.metrics import TownMetrics
from townbot.store.backup import backup_database, prune_backups
from townbot.store.errors import StoreError
from townbot.town.engine import Engine
from townbot.town.launch import TownFiles
from townbot.town.requests import Person, TownError
from townbot.town.rest import WOKE, Rest
from townbot.town.service import TownService

log = logging.getLogger(__name__)

# Shutdown must fit a container's default 10 s stop timeout: ticks under way get most of it.
TICK_GRACE, POST_GRACE, USE_CASE_GRACE = 6.0, 1.5, 1.0

UPKEEP_KEY, BACKUP_KEY = "upkeep", "backups"  # the scheduler's hub-wide jobs
UPKEEP_SECONDS = 60.0  # how often idle towns are looked for

# The paper's interview conditions (section 6.1): which memories an answer may draw on.
MEMORY_ACCESS = {
    "full": Ablation(),
    "no reflections": Ablation(reflections=False),
    "no reflections or plans": Ablation(reflections=False, plans=False),
    "no memories": Ablation(observations=False, reflections=False, plans=False),
}


@dataclass
class GuildTown:
    guild_id: int
    service: TownService
    store: DiscordStore
    publisher: Publisher
    outlet: WebhookOutlet
    hinted: set[str] = field(default_factory=set)  # people told how to join (once per run)
    server_down: bool = False  # the model server failed too often: ticks wait for it
    rest: Rest | None = None  # when it last saw someone; set by the hub

    @property
    def engine(self) -> Engine:
        return self.service.engine

    @property
    def key(self) -> str:
        return f"guild-{self.guild_id}"

    def slug_of(self, channel_id: int) -> str | None:
        layout = self.outlet.layout
        return layout.slug_of(channel_id) if layout is not None else None

    def channel(self, slug: str) -> Any:
        assert self.outlet.layout is not None
        return self.outlet.layout.channels[slug]

    def sector_of(self, slug: str | None) -> str | None:
        """The sector a channel shows; None for the town hall and foreign channels."""
        return next((s.name for s in self.engine.world.sectors.values() if s.channel == slug), None)

    async def notify(self, text: str) -> bool:
        """A notice in #town-hall now, under the town's name; False if Discord refused it."""
        hall = self.outlet.plan.town_hall
        try:
            for part in split_text(text):
                await self.outlet.post(hall, part, self.engine.world.town)
        except Exception as error:
            if classify(error) is None:
                raise
            log.warning("server %s: the notice could not be posted: %s", self.guild_id, error)
            return False
        return True

    async def close(self) -> None:
        """Stop posting, let a use case under way commit (up to its grace), close the files."""
        await self.publisher.stop(POST_GRACE)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.service.lock.acquire(), USE_CASE_GRACE)  # kept: no more
        self.engine.drop_talks()  # uncommitted: the talkers think again when the town resumes
        await self.store.close()
        await self.engine.model.close()
        await self.engine.store.close()


class Hub:
    def __init__(self, config: DiscordConfig, scheduler: TownScheduler, *,
                 files: TownFiles | None = None, settings: ModelSettings | None = None,
                 upkeep: Upkeep | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.upkeep = upkeep or Upkeep()
        self.clock = clock  # real seconds, for rest
        self.scheduler = scheduler
        self.files = files or TownFiles()
        self.settings = settings
        self.towns: dict[int, GuildTown] = {}
        self.failures: dict[int, str] = {}  # server id -> why its town could not open
        # Discord's 50 requests per second are per bot: one pacer for every town's posts.
        self.pacer = Pacer(GLOBAL_WINDOWS, time.monotonic)
        self.opening: dict[int, asyncio.Lock] = {}  # one opening at a time per server
        self.metrics = TownMetrics(lambda: self.towns)
        self.notices: set[asyncio.Task[bool]] = set()  # wake-up notices being posted
        self.closing = False

    # --- who and where ------------------------------------------------------------------------

    def town(self, guild_id: int | None) -> GuildTown:
        if guild_id is None:
            raise TownError("the town lives in a server's channels; use this command there")
        if guild_id in self.towns:
            return self.towns[guild_id]
        if not self.config.allows(guild_id):
            raise TownError("this server has no town: the bot's owner can add its id to "
                            "TOWNBOT_ALLOWED_GUILDS")
        if guild_id in self.failures:
            raise TownError(f"the town could not open here: {self.failures[guild_id]}")
        raise TownError("the town is still opening; try again in a moment")

    def person(self, member: Any) -> Person:
        """A member as the town knows them: a moderator with Manage Server or the configured
        moderator role (by name or id)."""
        permissions = getattr(member, "guild_permissions", None)
        role = self.config.moderator_role
        moderator = (permissions is not None and permissions.manage_guild) or (
            role is not None and any(r.name == role or str(r.id) == role
                                     for r in getattr(member, "roles", ())))
        return Person(f"discord:{member.id}", member.display_name, moderator)

    async def page_link(self, town: GuildTown, person: Person) -> str | None:
        """The members-only link to the town's web page; None when this bot serves none.
        TownError when a moderator closed the page."""
        if not self.config.serves_web:
            return None
        token = (await town.service.web_link(person)).data["token"]
        return self.config.web_link(town.guild_id, token)

    # --- rest and backups -------------------------------------------------------------------

    def start_upkeep(self) -> None:
        if self.scheduler.interval(UPKEEP_KEY) is None and self.upkeep.rest.after:
            self.scheduler.add(UPKEEP_KEY, self.rest_round, UPKEEP_SECONDS)
        folder = self.upkeep.backup_dir
        if folder is not None and self.scheduler.interval(BACKUP_KEY) is None:
            folder.mkdir(parents=True, exist_ok=True)
            self.scheduler.add(BACKUP_KEY, self.backup_round, self.upkeep.backup_every_hours * 3600)

    async def seen(self, guild_id: int | None, *, wait: bool = True) -> None:
        """Someone's activity in a server's town (a command, a message in its channels, its
        web page): a resting town wakes at once, and #town-hall says so; `wait=False` posts
        that notice in the background (a command must be answered within 3 s)."""
        town = self.towns.get(guild_id) if guild_id is not None else None
        if town is None or town.rest is None or not town.rest.seen() or town.service.paused:
            return
        log.info("server %s: someone is here; the town wakes", town.guild_id)
        self._tick_every(town, town.engine.town.tick_seconds)
        if wait:
            await town.notify(WOKE)
            return
        notice = asyncio.create_task(town.notify(WOKE))
        self.notices.add(notice)
        notice.add_done_callback(self.notices.discard)

    async def rest_round(self) -> None:
        """Towns alone for TOWNBOT_IDLE_AFTER begin to rest; #town-hall says so."""
        for town in list(self.towns.values()):
            if town.rest is None:
                continue
            if town.service.paused:  # spends nothing; its rest counts from its resumption
                town.rest.seen()
                continue
            if town.rest.due():
                log.info("server %s: nobody is here; the town rests (%s)", town.guild_id,
                         town.rest.settings.describe())
                self._tick_every(town, town.rest.interval(town.engine.town.tick_seconds))
                await town.notify(town.rest.fell_asleep_notice())

    def _tick_every(self, town: GuildTown, seconds: float | None) -> None:
        if seconds is None:
            self.scheduler.pause(town.key)
            return
        self.scheduler.set_interval(town.key, seconds)
        if self.scheduler.is_paused(town.key):
            self.scheduler.resume(town.key)

    async def backup_round(self) -> None:
        """A backup of every open town into TOWNBOT_BACKUP_DIR, keeping the newest few."""
        folder = self.upkeep.backup_dir
        assert folder is not None
        for guild_id in list(self.towns):
            path = self.config.database(guild_id)
            try:
                made = await asyncio.to_thread(backup_database, path, folder)
                await asyncio.to_thread(prune_backups, folder, path.stem, self.upkeep.backup_keep)
            except (StoreError, OSError) as error:
                log.error("server %s: the scheduled backup failed: %s", guild_id, error)
                continue
            log.info("server %s: backed up to %s (%.1f MB)", guild_id, made.path, made.bytes / 1e6)

    # --- closing ------------------------------------------------------------------------------

    async def close_town(self, guild_id: int) -> bool:
        """Stop one town for good in this run: no ticks, no posts, no retries; files closed."""
        self.failures.pop(guild_id, None)
        town = self.towns.pop(guild_id, None)
        if town is None:
            return False
        await self.scheduler.stop(town.key, TICK_GRACE)
        await town.close()
        return True

    async def close(self) -> None:
        """Shutdown: no new ticks, ticks under way finished or cancelled (rolled back), posts
        under way finished, use cases under way committed: at most about 9 s in all."""
        self.closing = True
        await asyncio.gather(self.scheduler.shutdown(TICK_GRACE), self._drop_notices())
        towns = [self.towns.pop(guild_id) for guild_id in list(self.towns)]
        await asyncio.gather(*(town.close() for town in towns))

    async def _drop_notices(self) -> None:
        """Wake-up notices under way get the posts' grace (beside the ticks' own), then are
        dropped: they only inform."""
        if self.notices:
            _, late = await asyncio.wait(self.notices, timeout=POST_GRACE)
            for notice in late:
                notice.cancel()

    def health(self) -> dict[str, Any]:
        """For /healthz: ok while serving, with the towns open, waiting for their model
        server, resting, and those that could not open."""
        towns = self.towns.values()
        return {"status": "closing" if self.closing else "ok", "towns": len(self.towns),
                "waiting_for_model": sorted(t.guild_id for t in towns if t.server_down),
                "resting": sorted(t.guild_id for t in towns if t.rest and t.rest.resting),
                "could_not_open": sorted(self.failures)}
