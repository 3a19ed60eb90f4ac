"""The publisher's Discord: a server's webhooks, made again when someone deletes them."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

import discord

from townbot.platforms.discord.publisher import ChannelGone, Seen
from townbot.platforms.discord.setup import ChannelPlan, GuildLike, Layout, ensure_layout
from townbot.platforms.discord.store import DiscordStore

HISTORY = 100  # messages read back after the last confirmed post, to find one that landed
NO_MENTIONS = discord.AllowedMentions.none()


class WebhookOutlet:
    def __init__(self, guild: GuildLike, plan: ChannelPlan, store: DiscordStore,
                 avatar_url: str | None = None) -> None:
        self.guild = guild
        self.plan = plan
        self.store = store
        self.avatar_url = avatar_url
        self.layout: Layout | None = None
        self._lock = asyncio.Lock()  # one setup at a time: two would make two channels

    async def ensure(self) -> Layout:
        async with self._lock:
            self.layout = await ensure_layout(self.guild, self.plan, self.store)
            return self.layout

    async def repair(self, channel: str) -> None:
        await self.ensure()

    def resolve(self, slug: str) -> str:
        """A channel the world no longer has posts to the town hall instead of nowhere."""
        assert self.layout is not None, "ensure() the layout before posting"
        return slug if slug in self.layout.channels else self.plan.town_hall

    def avatar(self, username: str) -> str | None:
        return self.avatar_url.replace("{name}", quote(username)) if self.avatar_url else None

    async def post(self, channel: str, content: str, username: str, thread: Any = None) -> int:
        assert self.layout is not None
        webhook = self.layout.webhooks[self.resolve(channel)]
        extra: dict[str, Any] = {"thread": thread} if thread is not None else {}
        avatar = self.avatar(username)
        if avatar:
            extra["avatar_url"] = avatar
        try:
            message = await webhook.send(content, username=username, wait=True,
                                         allowed_mentions=NO_MENTIONS, **extra)
        except discord.NotFound as error:
            raise ChannelGone(channel) from error
        return message.id

    async def recent(self, channel: str, after: int | None) -> list[Seen]:
        assert self.layout is not None
        place = self.layout.channels[self.resolve(channel)]
        since = {"after": discord.Object(after)} if after is not None else {}
        try:
            return [Seen(m.id, m.author.name, m.content)
                    async for m in place.history(limit=HISTORY, **since) if m.webhook_id]
        except discord.NotFound as error:
            raise ChannelGone(channel) from error
