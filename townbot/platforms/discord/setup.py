"""Setup per server: a category named after the town, a channel per sector and the town hall, a
webhook each; what is recorded and still there is used, what is gone made again, the server's
own channels never touched. `WebhookOutlet`, the publisher's Discord, posts through them."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import discord
from discord.utils import MISSING

from townbot.platforms.discord.posts import NO_MENTIONS, webhook_name
from townbot.platforms.discord.publisher import ChannelGone, Seen
from townbot.platforms.discord.store import CATEGORY, DiscordStore, Placed
from townbot.world.model import World

REASON = "townbot: the town's channels"
# What the bot does: make channels and webhooks, post and pin the welcome, open interview
# threads and answer in them, read back recent posts after a failure, react to visitors.
PERMISSIONS = {"view_channel": "view channels", "manage_channels": "manage channels",
               "manage_webhooks": "manage webhooks", "send_messages": "send messages",
               "create_public_threads": "create public threads",
               "send_messages_in_threads": "send messages in threads",
               "read_message_history": "read message history", "add_reactions": "add reactions",
               "embed_links": "embed links", "pin_messages": "pin messages"}
NEEDED = discord.Permissions(**dict.fromkeys(PERMISSIONS, True))
HISTORY = 100  # messages read back after the last confirmed post, to find one that landed
# Without configuration every name gets its own picture, drawn from the name by DiceBear's
# free avatar service; TOWNBOT_AVATAR_URL=discord uses Discord's six default avatars instead.
DEFAULT_AVATARS = "https://api.dicebear.com/9.x/personas/png?seed={name}"
DISCORD_AVATARS = "https://cdn.discordapp.com/embed/avatars/{index}.png"


class SetupError(Exception):
    """The server cannot be set up as it is; the message says what to change."""


@dataclass(frozen=True)
class PlannedChannel:
    slug: str
    title: str
    topic: str


@dataclass(frozen=True)
class ChannelPlan:
    category: str
    town_hall: str
    channels: tuple[PlannedChannel, ...]


@dataclass
class Layout:
    category_id: int
    channels: dict[str, Any] = field(default_factory=dict)  # slug -> discord.TextChannel
    webhooks: dict[str, Any] = field(default_factory=dict)  # slug -> discord.Webhook
    made: list[str] = field(default_factory=list)  # what this run created, for the log

    def slug_of(self, channel_id: int) -> str | None:
        return next((s for s, c in self.channels.items() if c.id == channel_id), None)


def channel_plan(world: World) -> ChannelPlan:
    channels = [PlannedChannel(s.channel, s.name, _topic(s.name, s.description, s.hours))
                for s in world.sectors.values()]
    channels.append(PlannedChannel(world.town_hall_channel, "Town hall",
                                   f"Announcements and news of {world.town}."))
    return ChannelPlan(world.town, world.town_hall_channel, tuple(channels))


def _topic(name: str, description: str, hours: Any) -> str:
    opening = f" Open {hours.describe()}." if hours else ""
    return f"{name}: {' '.join(description.split())}{opening}"[:1024]


def missing_permissions(granted: discord.Permissions) -> list[str]:
    return [words for name, words in PERMISSIONS.items() if not getattr(granted, name)]


def avatar_for(name: str, template: str | None, own: str | None = None) -> str:
    """The picture posts under `name` carry: the persona's own, else the template's."""
    if own:
        return own
    if template == "discord":
        return DISCORD_AVATARS.format(index=zlib.crc32(name.encode()) % 6)
    return (template or DEFAULT_AVATARS).replace("{name}", quote(name))


class WebhookOutlet:
    def __init__(self, guild: discord.Guild, plan: ChannelPlan, store: DiscordStore,
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
        """The recorded category, channels and webhooks, each made again and recorded at once
        when it is gone."""
        async with self._lock:
            placed = await self.store.layout(self.guild.id)
            made: list[str] = []
            layout = Layout(await self._category(placed.get(CATEGORY), made), made=made)
            category = self.guild.get_channel(layout.category_id)
            hooks = {hook.id: hook for hook in await self.guild.webhooks()}
            for planned in self.plan.channels:
                recorded = placed.get(planned.slug)
                channel = await self._channel(category, planned, recorded, made)
                try:
                    hook = await self._webhook(channel, planned.slug,
                                               hooks.get(recorded.webhook_id) if recorded else None,
                                               made)
                except discord.NotFound:
                    # The bot still knew a channel Discord had deleted (it missed the event): its
                    # webhook is gone with it, and a webhook cannot be made there. Make both anew.
                    channel = await self._channel(category, planned, None, made)
                    hook = await self._webhook(channel, planned.slug, None, made)
                layout.channels[planned.slug] = channel
                layout.webhooks[planned.slug] = hook
            self.layout = layout
            return layout

    async def _category(self, recorded: Placed | None, made: list[str]) -> int:
        if recorded is not None and self.guild.get_channel(recorded.channel_id) is not None:
            return recorded.channel_id
        category = await self.guild.create_category(self.plan.category, reason=REASON)
        await self.store.place(self.guild.id, CATEGORY, category.id, None)
        made.append(f"category {self.plan.category}")
        return category.id

    async def _channel(self, category: Any, planned: PlannedChannel, recorded: Placed | None,
                       made: list[str]) -> Any:
        existing = self.guild.get_channel(recorded.channel_id) if recorded is not None else None
        if existing is not None:
            return existing
        channel = await self.guild.create_text_channel(planned.slug, category=category,
                                                       topic=planned.topic, reason=REASON)
        await self.store.place(self.guild.id, planned.slug, channel.id, None)
        made.append(f"#{planned.slug}")
        return channel

    async def _webhook(self, channel: Any, slug: str, recorded: Any, made: list[str]) -> Any:
        if recorded is not None and recorded.channel_id == channel.id and recorded.token:
            return recorded
        name = webhook_name(f"{self.plan.category} #{slug}", f"Town #{slug}")
        webhook = await channel.create_webhook(name=name, reason=REASON)
        await self.store.place(self.guild.id, slug, channel.id, webhook.id)
        made.append(f"webhook for #{slug}")
        return webhook

    async def repair(self, channel: str) -> None:
        await self.ensure()

    def resolve(self, slug: str) -> str:
        """A channel the world no longer has posts to the town hall instead of nowhere."""
        assert self.layout is not None, "ensure() the layout before posting"
        return slug if slug in self.layout.channels else self.plan.town_hall

    def avatar(self, username: str) -> str:
        return avatar_for(username, self.avatar_url, self.own_avatars.get(username))

    async def post(self, channel: str, content: str, username: str, thread: Any = MISSING,
                   embed: discord.Embed = MISSING) -> int:
        """Post under `username` (cleaned for Discord) in a channel, or a thread of it."""
        assert self.layout is not None
        webhook = self.layout.webhooks[self.resolve(channel)]
        name = webhook_name(username, self.plan.category)
        try:
            message = await webhook.send(content, username=name, wait=True, thread=thread,
                                         embed=embed, avatar_url=self.avatar(name),
                                         allowed_mentions=NO_MENTIONS)
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
