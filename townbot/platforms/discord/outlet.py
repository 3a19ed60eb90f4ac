"""The publisher's Discord: a server's webhooks, made again when someone deletes them."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import discord

from townbot.platforms.discord.posts import webhook_name
from townbot.platforms.discord.publisher import ChannelGone, Seen
from townbot.platforms.discord.setup import ChannelPlan, GuildLike, Layout, ensure_layout
from townbot.platforms.discord.store import DiscordStore

HISTORY = 100  # messages read back after the last confirmed post, to find one that landed
NO_MENTIONS = discord.AllowedMentions.none()
# Without configuration every name gets its own picture, drawn from the name by DiceBear's
# free avatar service; TOWNBOT_AVATAR_URL=discord uses Discord's six default avatars instead.
DEFAULT_AVATARS = "https://api.dicebear.com/9.x/personas/png?seed={name}"
DISCORD_AVATARS = "https://cdn.discordapp.com/embed/avatars/{index}.png"


def avatar_for(name: str, template: str | None, own: str | None = None) -> str:
    """The picture posts under `name` carry: the persona's own, else the template's."""
    if own:
        return own
    if template == "discord":
        return DISCORD_AVATARS.format(index=zlib.crc32(name.encode()) % 6)
    return (template or DEFAULT_AVATARS).replace("{name}", quote(name))


class WebhookOutlet:
    def __init__(self, guild: GuildLike, plan: ChannelPlan, store: DiscordStore,
                 avatar_url: str | None = None, avatars: Mapping[str, Any] | None = None) -> None:
        self.guild = guild
        self.plan = plan
        self.store = store
        self.avatar_url = avatar_url
        self.own_avatars = {name: p.avatar for name, p in (avatars or {}).items()
                            if getattr(p, "avatar", None)}
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

    def avatar(self, username: str) -> str:
        return avatar_for(username, self.avatar_url, self.own_avatars.get(username))

    async def post(self, channel: str, content: str, username: str, thread: Any = None,
                   embed: discord.Embed | None = None, view: discord.ui.View | None = None) -> int:
        """Post under `username` (cleaned for Discord) in a channel, or a thread of it."""
        assert self.layout is not None
        webhook = self.layout.webhooks[self.resolve(channel)]
        extra: dict[str, Any] = {"thread": thread} if thread is not None else {}
        if embed is not None:
            extra["embed"] = embed
        if view is not None:
            extra["view"] = view
        name = webhook_name(username, self.plan.category)
        try:
            message = await webhook.send(content, username=name, wait=True,
                                         avatar_url=self.avatar(name),
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
