"""Setup per server: a category named after the town, a channel per sector and the town hall,
a webhook per channel. Idempotent: what is recorded and still there is used as it is; what is
gone is made again and recorded at once; the server's own channels are never touched."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import discord

from townbot.platforms.discord.posts import webhook_name
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

    @property
    def slugs(self) -> list[str]:
        return [c.slug for c in self.channels]

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


class GuildLike(Protocol):
    """The few parts of discord.Guild that setup uses (tests supply a faithful fake)."""

    id: int

    def get_channel(self, channel_id: int, /) -> Any: ...

    async def create_category(self, name: str, *, reason: str | None = None) -> Any: ...

    async def create_text_channel(self, name: str, *, reason: str | None = None,
                                  category: Any = None, topic: str = ...) -> Any: ...

    async def webhooks(self) -> list[Any]: ...


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


async def ensure_layout(guild: GuildLike, plan: ChannelPlan, store: DiscordStore) -> Layout:
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


async def _category(guild: GuildLike, plan: ChannelPlan, store: DiscordStore,
                    recorded: Placed | None, made: list[str]) -> int:
    if recorded is not None and guild.get_channel(recorded.channel_id) is not None:
        return recorded.channel_id
    category = await guild.create_category(plan.category, reason=REASON)
    await store.place(guild.id, CATEGORY, category.id, None)
    made.append(f"category {plan.category}")
    return category.id


async def _channel(guild: GuildLike, category: Any, planned: PlannedChannel, store: DiscordStore,
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


async def _webhook(guild: GuildLike, channel: Any, name: str, store: DiscordStore, slug: str,
                   recorded: Any, made: list[str]) -> Any:
    if recorded is not None and recorded.channel_id == channel.id and recorded.token:
        return recorded
    webhook = await channel.create_webhook(name=name, reason=REASON)
    await store.place(guild.id, slug, channel.id, webhook.id)
    made.append(f"webhook for #{slug}")
    return webhook
