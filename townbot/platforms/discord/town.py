"""One server's town at run time: the service, its Discord state, publisher and outlet."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

import discord

from townbot.mind.answering import Ablation
from townbot.platforms.discord.cards import interview_card
from townbot.platforms.discord.outlet import NO_MENTIONS, WebhookOutlet
from townbot.platforms.discord.posts import split_text
from townbot.platforms.discord.publisher import Publisher, classify
from townbot.platforms.discord.store import DiscordStore
from townbot.town.body import Body
from townbot.town.engine import Engine
from townbot.town.requests import Person
from townbot.town.rest import Rest
from townbot.town.service import TownService

log = logging.getLogger(__name__)

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
        """The scheduler's job id for this town."""
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

    def speaker(self, person: Person) -> tuple[str, Body] | None:
        """The name a joined person speaks under (their visitor, or a resident taken over)."""
        return self.service.speaker_of(person)

    async def answer_in_thread(self, thread: Any, resident: str, question: str,
                               answer: str) -> None:
        """A resident's answer in an interview thread, posted by the resident through the
        channel's webhook; in a thread of someone else's channel, by the bot."""
        slug = self.slug_of(getattr(thread, "parent_id", 0) or 0)
        card = interview_card(resident, question, answer, self.outlet.avatar(resident))
        if slug is None:
            await thread.send(embed=card, allowed_mentions=NO_MENTIONS)
        else:
            await self.outlet.post(slug, "", resident, thread=thread, embed=card)

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

    async def close(self, post_grace: float = 5.0, use_case_grace: float = 30.0) -> None:
        """Stop posting, let a use case under way commit (up to its grace), close the files."""
        await self.publisher.stop(post_grace)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.service.lock.acquire(), use_case_grace)  # kept: no more
        self.engine.drop_talks()  # uncommitted: the talkers think again when the town resumes
        await self.store.close()
        await self.engine.model.close()
        await self.engine.store.close()


def partial_message(town: GuildTown, channel_id: int, message_id: int) -> discord.PartialMessage | None:
    """A message known by its ids (after a restart), to react to or reply to."""
    channel = town.outlet.guild.get_channel(channel_id)  # type: ignore[attr-defined]
    if channel is None or not hasattr(channel, "get_partial_message"):
        return None
    return channel.get_partial_message(message_id)
