"""Setup per server: a category named after the town, a channel per sector and the town hall,
a webhook per channel. Idempotent: what is recorded and still there is used as it is; what is
gone is made again and recorded at once; the server's own channels are never touched.

`WebhookOutlet` is the publisher's Discord: it posts through those webhooks and makes them again
when someone deletes them."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import discord

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

    def webhook_name(self, slug: str) -> str:
        return webhook_name(f"{self.category} #{slug}", f"Town #{slug}")


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


async def ensure_layout(guild: discord.Guild, plan: ChannelPlan, store: DiscordStore) -> Layout:
    placed = await store.layout(guild.id)
    made: list[str] = []
    layout = Layout(await _category(guild, plan, store, placed.get(CATEGORY), made), made=made)
    category = guild.get_channel(layout.category_id)
    hooks = {hook.id: hook for hook in await guild.webhooks()}
    for planned in plan.channels:
        recorded = placed.get(planned.slug)
        channel = await _channel(guild, category, planned, store, recorded, layout.made)
        name = plan.webhook_name(planned.slug)
        try:
            hook = await _webhook(guild, channel, name, store, planned.slug,
                                  hooks.get(recorded.webhook_id) if recorded else None, layout.made)
        except discord.NotFound:
            # The bot still knew a channel Discord had deleted (it missed the event): its
            # webhook is gone with it, and a webhook cannot be made there. Make both anew.
            channel = await _channel(guild, category, planned, store, None, layout.made)
            hook = await _webhook(guild, channel, name, store, planned.slug, None, layout.made)
        layout.channels[planned.slug] = channel
        layout.webhooks[planned.slug] = hook
    return layout


async def _category(guild: discord.Guild, plan: ChannelPlan, store: DiscordStore,
                    recorded: Placed | None, made: list[str]) -> int:
    if recorded is not None and guild.get_channel(recorded.channel_id) is not None:
        return recorded.channel_id
    category = await guild.create_category(plan.category, reason=REASON)
    await store.place(guild.id, CATEGORY, category.id, None)
    made.append(f"category {plan.category}")
    return category.id


async def _channel(guild: discord.Guild, category: Any, planned: PlannedChannel, store: DiscordStore,
                   recorded: Placed | None, made: list[str]) -> Any:
    if recorded is not None:
        existing = guild.get_channel(recorded.channel_id)
        if existing is not None:
            return existing
    channel = await guild.create_text_channel(planned.slug, category=category, topic=planned.topic,
                                              reason=REASON)
    await store.place(guild.id, planned.slug, channel.id, None)
    made.append(f"#{planned.slug}")
    return channel


async def _webhook(guild: discord.Guild, channel: Any, name: str, store: DiscordStore, slug: str,
                   recorded: Any, made: list[str]) -> Any:
    if recorded is not None and recorded.channel_id == channel.id and recorded.token:
        return recorded
    webhook = await channel.create_webhook(name=name, reason=REASON)
    await store.place(guild.id, slug, channel.id, webhook.id)
    made.append(f"webhook for #{slug}")
    return webhook


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
