"""One server's town at run time: the service, its Discord state, publisher and outlet."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from townbot.mind.answering import Ablation
from townbot.platforms.discord.outlet import NO_MENTIONS, WebhookOutlet
from townbot.platforms.discord.posts import split_text, webhook_name
from townbot.platforms.discord.publisher import Publisher
from townbot.platforms.discord.store import DiscordStore
from townbot.town.body import Body
from townbot.town.engine import Engine
from townbot.town.service import Person, TownService

# The paper's interview conditions (section 6.1): which memories an answer may draw on.
MEMORY_ACCESS = {
    "full": Ablation(),
    "no reflections": Ablation(reflections=False),
    "no reflections or plans": Ablation(reflections=False, plans=False),
    "no memories": Ablation(observations=False, reflections=False, plans=False),
}


@dataclass
class Waiting:
    """A visitor's words written in a channel they are still walking to."""

    person: Person
    sector: str
    said: list[tuple[str, Any]] = field(default_factory=list)  # (text, discord.Message)


@dataclass
class GuildTown:
    guild_id: int
    service: TownService
    store: DiscordStore
    publisher: Publisher
    outlet: WebhookOutlet
    waiting: dict[str, Waiting] = field(default_factory=dict)  # person id -> words on the way
    hinted: set[str] = field(default_factory=set)  # people told how to join (once per run)

    @property
    def engine(self) -> Engine:
        return self.service.engine

    @property
    def key(self) -> str:
        """The scheduler's job id for this town."""
        return f"guild-{self.guild_id}"

    def slug_of(self, channel_id: int) -> str | None:
        layout = self.outlet.layout
        return layout.slug_of(channel_id) if layout is not None else None

    def sector_of(self, slug: str | None) -> str | None:
        """The sector a channel shows; None for the town hall and foreign channels."""
        return next((s.name for s in self.engine.world.sectors.values() if s.channel == slug), None)

    def speaker(self, person: Person) -> tuple[str, Body] | None:
        """The name a joined person speaks under (their visitor, or a resident taken over)."""
        return self.service.speaker_of(person)

    async def answer_in_thread(self, thread: Any, resident: str, text: str) -> None:
        """A resident's answer in an interview thread, under their name where a webhook can."""
        slug = self.slug_of(getattr(thread, "parent_id", 0) or 0)
        for part in split_text(text):
            if slug is None:
                await thread.send(f"**{resident}:** {part}", allowed_mentions=NO_MENTIONS)
            else:
                await self.outlet.post(slug, part, webhook_name(resident, "Resident"),
                                       thread=thread)

    async def close(self, grace: float = 30.0) -> None:
        """Stop posting, let a use case under way commit (up to `grace` s), close the files."""
        await self.publisher.stop()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.service.lock.acquire(), grace)  # kept: no more use cases
        await self.store.close()
        await self.engine.model.close()
        await self.engine.store.close()
