"""The in-memory Discord: state, REST routes, faults, and the gateway side (see the package doc)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import mimetypes
import re
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote

import discord
from discord.http import HTTPClient
from discord.webhook.async_ import AsyncWebhookAdapter, async_context

APPLICATION_ID = 1_100_000_000_000_000_001
BOT_USER_ID = APPLICATION_ID  # a bot's user id is its application's id
TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.fake.token"
EPHEMERAL, LOADING = 64, 128
ALL_PERMISSIONS = discord.Permissions.all().value
OPTION_TYPES = {3: str, 4: int, 5: bool, 10: float}  # string, integer, boolean, number
DISCORD_DELAY = 0.0  # seconds each request takes; raise it to let tasks interleave
UPLOAD_LIMIT = 10 * 1024 * 1024  # bytes of files per message on a server without boosts


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def user_payload(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {"id": str(user_id), "username": name, "global_name": None if bot else name,
            "discriminator": "0", "avatar": None, "bot": bot, "public_flags": 0}


@dataclass
class Fault:
    """How the next matching request(s) fail."""

    method: str
    path: re.Pattern[str]
    status: int = 500
    times: int = 1
    after: bool = False  # the request takes effect, then the error comes back
    error: BaseException | None = None  # raised instead of an HTTP status (a broken network)
    retry_after: float = 1.0
    code: int = 0
    message: str = "fake failure"


@dataclass
class Exchange:
    """One interaction as the person experienced it: the responses and messages it got."""

    id: int
    token: str
    kind: int
    channel_id: int
    responses: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)  # original first, then follow-ups

    @property
    def visible(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if not m.get("x_deleted") and not m["flags"] & LOADING]

    @property
    def text(self) -> str:
        return "\n".join(m["content"] for m in self.visible if m["content"])

    @property
    def ephemeral(self) -> bool:
        """Everything the person was shown was shown only to them."""
        return bool(self.visible) and all(m["flags"] & EPHEMERAL for m in self.visible)

    @property
    def attachments(self) -> list[dict[str, Any]]:
        """Files the person was shown, each with its bytes under "x_data"."""
        return [a for m in self.visible for a in m.get("attachments", [])]

    @property
    def embeds(self) -> list[dict[str, Any]]:
        return [e for m in self.visible for e in m.get("embeds", [])]

    @property
    def buttons(self) -> list[dict[str, Any]]:
        return [c for m in self.visible for row in m.get("components", [])
                for c in row.get("components", [])]

    @property
    def choices(self) -> list[str]:
        """Autocomplete suggestions (values)."""
        for response in self.responses:
            if response["type"] == 8:
                return [c["value"] for c in response["data"]["choices"]]
        return []

    @property
    def deferred(self) -> dict[str, Any] | None:
        return next((r for r in self.responses if r["type"] == 5), None)


class FakeAdapter(AsyncWebhookAdapter):
    """discord.py's webhook adapter with the network replaced by the fake."""

    def __init__(self, fake: FakeDiscord) -> None:
        super().__init__()
        self.fake = fake

    async def request(self, route: Any, session: Any = None, *, payload: Any = None,
                      multipart: Any = None, files: Any = None, params: Any = None,
                      **_: Any) -> Any:
        if multipart:
            fields = {p["name"]: p["value"] for p in multipart}
            payload = json.loads(fields.get("payload_json", "{}"))
            payload["x_files"] = [uploaded(p) for p in multipart if p["name"].startswith("files[")]
        return await self.fake.handle(route.method, route.url, payload, params or {},
                                      webhook=True)


def uploaded(part: dict[str, Any]) -> dict[str, Any]:
    """A file discord.py sent in a multipart form: its name, type and bytes."""
    value = part["value"]
    data = value.read() if hasattr(value, "read") else bytes(value)
    name = part.get("filename") or "file"
    kind = mimetypes.guess_type(name)[0] or part.get("content_type")  # Discord goes by the name
    return {"filename": name, "content_type": kind, "data": data}


def attachments_of(fake: FakeDiscord, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Attachment payloads for uploaded files; Discord refuses uploads over its limit (413)."""
    files = body.get("x_files") or []
    if sum(len(f["data"]) for f in files) > UPLOAD_LIMIT:
        fake._raise(413, 40005, "Request entity too large", webhook=True)
    found = []
    for file in files:
        attachment_id = fake.next_id()
        url = f"https://cdn.discordapp.com/attachments/0/{attachment_id}/{file['filename']}"
        found.append({"id": str(attachment_id), "filename": file["filename"],
                      "size": len(file["data"]), "url": url, "proxy_url": url,
                      "content_type": file["content_type"], "x_data": file["data"]})
    return found


class FakeDiscord:
    def __init__(self) -> None:
        self.token = TOKEN
        self.ids = itertools.count(discord.utils.time_snowflake(datetime.now(UTC)))
        self.guilds: dict[int, dict[str, Any]] = {}
        self.members: dict[int, dict[int, dict[str, Any]]] = defaultdict(dict)  # guild -> user
        self.users: dict[int, dict[str, Any]] = {}
        self.channels: dict[int, dict[str, Any]] = {}  # channels, categories and threads
        self.history: dict[int, list[dict[str, Any]]] = defaultdict(list)  # channel -> messages
        self.webhooks: dict[int, dict[str, Any]] = {}
        self.commands: dict[int | None, list[dict[str, Any]]] = {}  # guild (None: global)
        self.exchanges: dict[str, Exchange] = {}  # interaction token -> exchange
        self.faults: list[Fault] = []
        self.requests: list[tuple[str, str]] = []
        self.client: discord.Client | None = None
        self.adapter = FakeAdapter(self)
        self.shards = 1
        self._context: Any = None

    # --- installing ---------------------------------------------------------------------------

    @classmethod
    @contextlib.asynccontextmanager
    async def running(cls, monkeypatch: Any) -> AsyncIterator[FakeDiscord]:
        """Replace discord.py's HTTP layer with a fresh fake for the `with` block."""
        fake = cls.install(monkeypatch)
        try:
            yield fake
        finally:
            fake.uninstall()

    @classmethod
    def install(cls, monkeypatch: Any) -> FakeDiscord:
        """The same for code that runs its own event loop (e.g. `townbot run` in a test):
        call `uninstall()` at the end."""
        fake = cls()

        async def request(http: HTTPClient, route: Any, *, files: Any = None, form: Any = None,
                          **kwargs: Any) -> Any:
            if form:
                fields = {f["name"]: f["value"] for f in form}
                kwargs["json"] = json.loads(fields.get("payload_json", "{}"))
            if route.path == "/users/@me" and http.token != fake.token:
                fake._raise(401, 0, "401: Unauthorized", webhook=False)
            return await fake.handle(route.method, route.url, kwargs.get("json"),
                                     kwargs.get("params") or {}, webhook=False)

        monkeypatch.setattr(HTTPClient, "request", request)
        fake._context = async_context.set(fake.adapter)
        return fake

    def uninstall(self) -> None:
        async_context.reset(self._context)

    # --- the world: guilds, roles, members, channels -------------------------------------------

    def next_id(self) -> int:
        return next(self.ids)

    def add_guild(self, name: str = "Test server", *,
                  bot_permissions: discord.Permissions | None = None,
                  guild_id: int | None = None) -> int:
        """A server the bot is in (`guild_id` picks its shard: (id >> 22) % shard count)."""
        guild_id = guild_id or self.next_id()
        bot_role = {"id": str(self.next_id()), "name": "townbot", "position": 1, "color": 0,
                    "hoist": False, "managed": True, "mentionable": False, "flags": 0,
                    "permissions": str((bot_permissions or discord.Permissions.all()).value)}
        everyone = {"id": str(guild_id), "name": "@everyone", "position": 0, "color": 0,
                    "hoist": False, "managed": False, "mentionable": False, "flags": 0,
                    "permissions": str(discord.Permissions.general().value
                                       & ~discord.Permissions(manage_guild=True,
                                                              manage_channels=True,
                                                              manage_roles=True,
                                                              manage_webhooks=True,
                                                              manage_expressions=True).value)}
        owner = self.next_id()
        self.guilds[guild_id] = {"id": str(guild_id), "name": name, "owner_id": str(owner),
                                 "roles": [everyone, bot_role], "features": [], "emojis": [],
                                 "stickers": [], "icon": None, "afk_timeout": 300,
                                 "verification_level": 0, "default_message_notifications": 0,
                                 "explicit_content_filter": 0, "mfa_level": 0, "premium_tier": 0,
                                 "preferred_locale": "en-US", "system_channel_flags": 0,
                                 "nsfw_level": 0, "large": False, "unavailable": False}
        self.members[guild_id][BOT_USER_ID] = self._member(BOT_USER_ID, "townbot",
                                                           [int(bot_role["id"])], bot=True)
        general = self.add_channel(guild_id, "Text Channels", kind=4)
        self.add_channel(guild_id, "general", parent=general)
        return guild_id

    def add_role(self, guild_id: int, name: str, permissions: discord.Permissions) -> int:
        role_id = self.next_id()
        roles = self.guilds[guild_id]["roles"]
        roles.append({"id": str(role_id), "name": name, "position": len(roles), "color": 0,
                      "hoist": False, "managed": False, "mentionable": False, "flags": 0,
                      "permissions": str(permissions.value)})
        self.gateway("GUILD_ROLE_CREATE", {"guild_id": str(guild_id), "role": roles[-1]})
        return role_id

    def add_member(self, guild_id: int, name: str, *, roles: tuple[int, ...] = (),
                   manage_guild: bool = False) -> int:
        """A person in the guild; `manage_guild` gives them a role with Manage Server."""
        user_id = self.next_id()
        chosen = list(roles)
        if manage_guild:
            chosen.append(self.add_role(guild_id, f"{name}'s admin role",
                                        discord.Permissions(manage_guild=True)))
        self.members[guild_id][user_id] = self._member(user_id, name, chosen)
        self.users[user_id] = self.members[guild_id][user_id]["user"]
        return user_id

    def remove_member(self, guild_id: int, user_id: int) -> None:
        """The person left the server (the user still exists)."""
        del self.members[guild_id][user_id]

    def _member(self, user_id: int, name: str, roles: list[int], bot: bool = False) -> dict:
        return {"user": user_payload(user_id, name, bot=bot), "roles": [str(r) for r in roles],
                "joined_at": now_iso(), "deaf": False, "mute": False, "nick": None, "flags": 0}

    def permissions(self, guild_id: int, user_id: int) -> int:
        guild = self.guilds[guild_id]
        if str(user_id) == guild["owner_id"]:
            return ALL_PERMISSIONS
        roles = {r["id"]: int(r["permissions"]) for r in guild["roles"]}
        value = roles[str(guild_id)]
        for role in self.members[guild_id][user_id]["roles"]:
            value |= roles.get(role, 0)
        return ALL_PERMISSIONS if value & discord.Permissions(administrator=True).value else value

    def add_channel(self, guild_id: int, name: str, *, kind: int = 0, parent: int | None = None,
                    topic: str | None = None) -> int:
        channel_id = self.next_id()
        self.channels[channel_id] = {
            "id": str(channel_id), "type": kind, "guild_id": str(guild_id), "name": name,
            "position": len(self.channels), "parent_id": str(parent) if parent else None,
            "topic": topic, "nsfw": False, "permission_overwrites": [],
            "rate_limit_per_user": 0, "last_message_id": None, "flags": 0}
        return channel_id

    def guild_channels(self, guild_id: int) -> list[dict[str, Any]]:
        return [c for c in self.channels.values()
                if c["guild_id"] == str(guild_id) and c["type"] != 11]

    def named(self, guild_id: int, name: str) -> list[dict[str, Any]]:
        return [c for c in self.guild_channels(guild_id) if c["name"] == name]

    def channel_id(self, guild_id: int, name: str) -> int:
        found = self.named(guild_id, name)
        assert len(found) == 1, f"{len(found)} channels named {name}"
        return int(found[0]["id"])

    def guild_payload(self, guild_id: int) -> dict[str, Any]:
        guild = self.guilds[guild_id]
        threads = [c for c in self.channels.values()
                   if c["guild_id"] == str(guild_id) and c["type"] == 11]
        return {**guild, "channels": self.guild_channels(guild_id), "threads": threads,
                "members": list(self.members[guild_id].values()),
                "member_count": len(self.members[guild_id])}

    # --- what Discord shows -------------------------------------------------------------------

    def messages(self, channel_id: int) -> list[dict[str, Any]]:
        return [m for m in self.history[channel_id] if not m.get("x_deleted")]

    def said(self, channel_id: int) -> list[tuple[str, str]]:
        """(author name, content) of each message in the channel, oldest first."""
        return [(m["author"]["username"], m["content"]) for m in self.messages(channel_id)]

    def pins(self, channel_id: int) -> list[dict[str, Any]]:
        return [m for m in self.messages(channel_id) if m["pinned"]]

    def threads_of(self, channel_id: int) -> list[dict[str, Any]]:
        return [c for c in self.channels.values()
                if c["type"] == 11 and c["parent_id"] == str(channel_id)]

    def visible_commands(self, guild_id: int, user_id: int) -> set[str]:
        """Top-level commands this member sees in the guild (default_member_permissions)."""
        granted = self.permissions(guild_id, user_id)
        shown = set()
        for command in self.commands.get(guild_id, []) + self.commands.get(None, []):
            needed = command.get("default_member_permissions")
            if needed is None or int(needed) & granted == int(needed):
                shown.add(command["name"])
        return shown

    # --- faults -------------------------------------------------------------------------------

    def fail(self, method: str, path: str, status: int = 500, **options: Any) -> Fault:
        fault = Fault(method.upper(), re.compile(path), status, **options)
        self.faults.append(fault)
        return fault

    def _fault(self, method: str, path: str) -> Fault | None:
        for fault in self.faults:
            if fault.method in (method, "*") and fault.path.search(path):
                fault.times -= 1
                if fault.times <= 0:
                    self.faults.remove(fault)
                return fault
        return None

    def _raise(self, status: int, code: int, message: str, *, webhook: bool,
               retry_after: float = 1.0) -> None:
        headers = {"Retry-After": str(retry_after)} if status == 429 else {}
        response = SimpleNamespace(status=status, reason=message, headers=headers)
        body = {"code": code, "message": message}
        if status == 429:
            body["retry_after"] = retry_after
        kind = {403: discord.Forbidden, 404: discord.NotFound}.get(status, discord.HTTPException)
        if status >= 500:
            kind = discord.DiscordServerError
        raise kind(response, body)  # type: ignore[arg-type]

    # --- requests -----------------------------------------------------------------------------

    async def handle(self, method: str, url: str, body: Any, params: dict[str, Any], *,
                     webhook: bool) -> Any:
        path = unquote(url.split("/api/v10", 1)[-1])
        self.requests.append((method, path))
        await asyncio.sleep(DISCORD_DELAY)
        fault = self._fault(method, path)
        if fault is not None and fault.status == 429 and not webhook:
            await asyncio.sleep(fault.retry_after)  # HTTPClient waits and retries by itself
            fault = None
        if fault is not None and not fault.after:
            self._fail(fault, webhook)
        for verb, pattern, handler in ROUTES:
            match = pattern.fullmatch(path)
            if verb == method and match:
                result = handler(self, *map(_id_or_text, match.groups()), body=body or {},
                                 params=params)
                if fault is not None:
                    self._fail(fault, webhook)
                return result
        raise AssertionError(f"the fake Discord does not know {method} {path}")

    def _fail(self, fault: Fault, webhook: bool) -> None:
        if fault.error is not None:
            raise fault.error
        self._raise(fault.status, fault.code, fault.message, webhook=webhook,
                    retry_after=fault.retry_after)

    def _channel(self, channel_id: int) -> dict[str, Any]:
        channel = self.channels.get(channel_id)
        if channel is None:
            self._raise(404, 10003, "Unknown Channel", webhook=False)
        return channel  # type: ignore[return-value]

    def _message(self, channel_id: int, message_id: int) -> dict[str, Any]:
        for message in self.history[channel_id]:
            if message["id"] == str(message_id) and not message.get("x_deleted"):
                return message
        self._raise(404, 10008, "Unknown Message", webhook=False)
        raise AssertionError

    def new_message(self, channel_id: int, author: dict[str, Any], body: dict[str, Any], *,
                    webhook_id: int | None = None, flags: int = 0) -> dict[str, Any]:
        content = body.get("content") or ""
        embeds = body.get("embeds") or []
        self._check_message(content, embeds)
        parse = (body.get("allowed_mentions") or {"parse": ["everyone", "users", "roles"]}).get(
            "parse", [])
        channel = self.channels[channel_id]
        message = {"id": str(self.next_id()), "channel_id": str(channel_id),
                   "guild_id": channel["guild_id"], "author": author, "content": content,
                   "timestamp": now_iso(), "edited_timestamp": None, "tts": False,
                   "mention_everyone": "everyone" in parse and "@everyone" in content,
                   "mentions": [], "mention_roles": [],
                   "attachments": attachments_of(self, body), "embeds": embeds,
                   "components": body.get("components") or [], "pinned": False, "type": 0,
                   "flags": flags | (body.get("flags") or 0) & EPHEMERAL, "reactions": [],
                   "x_allowed_mentions": body.get("allowed_mentions"),
                   "x_avatar_url": body.get("avatar_url")}
        if webhook_id is not None:
            message["webhook_id"] = str(webhook_id)
        if body.get("message_reference"):
            message["message_reference"] = body["message_reference"]
            message["type"] = 19
        return message

    def _check_message(self, content: str, embeds: list[dict[str, Any]]) -> None:
        """Discord's own limits: 400 Invalid Form Body when broken."""
        too_long = len(content) > 2000 or len(embeds) > 10 or sum(
            len(e.get("title", "")) + len(e.get("description", "")) + len(
                e.get("footer", {}).get("text", "")) + sum(
                len(f["name"]) + len(f["value"]) for f in e.get("fields", []))
            for e in embeds) > 6000
        broken = any(len(e.get("title", "")) > 256 or len(e.get("description", "")) > 4096 or
                     len(e.get("fields", [])) > 25 or any(
                         not f["name"] or not f["value"] or len(f["name"]) > 256 or
                         len(f["value"]) > 1024 for f in e.get("fields", []))
                     for e in embeds)
        if too_long or broken:
            self._raise(400, 50035, "Invalid Form Body", webhook=False)

    def _store(self, channel_id: int, message: dict[str, Any]) -> dict[str, Any]:
        self.history[channel_id].append(message)
        self.channels[channel_id]["last_message_id"] = message["id"]
        if not message["flags"] & EPHEMERAL:
            self.gateway("MESSAGE_CREATE", _public(message))
        return message

    # --- gateway ------------------------------------------------------------------------------

    def gateway(self, event: str, data: dict[str, Any]) -> None:
        """Deliver a gateway event to the connected client, as its websocket would."""
        if self.client is None or self.client.is_closed():
            return  # no gateway connected: the event is lost, as for a bot that is down
        parser = getattr(self.client._connection, f"parse_{event.lower()}")
        parser(_public(data))

    async def connect(self, client: discord.Client, *, token: str | None = None) -> None:
        """Log in (the real `Client.login`, through the fake HTTP) and deliver READY with the
        guilds, without a websocket."""
        await client.login(token or self.token)
        self.client = client
        state = client._connection
        count, mine = getattr(client, "shard_count", None), getattr(client, "shard_ids", None)
        for guild_id in self.guilds:
            if mine is None or (guild_id >> 22) % count in mine:  # Discord sends a shard its own
                state._add_guild_from_data(self.guild_payload(guild_id))
        client._ready.set()  # type: ignore[union-attr]
        client.dispatch("ready")
        await self.settle()

    async def join(self, guild_id: int) -> None:
        """The bot is added to a server: GUILD_CREATE without `unavailable` (a join)."""
        payload = self.guild_payload(guild_id)
        del payload["unavailable"]
        self.gateway("GUILD_CREATE", payload)
        await self.settle()

    async def remove(self, guild_id: int) -> None:
        """The bot was kicked or the guild deleted: GUILD_DELETE without `unavailable`."""
        self.gateway("GUILD_DELETE", {"id": str(guild_id)})
        await self.settle()

    def delete_channel(self, channel_id: int) -> None:
        """What an admin's delete does: the channel, its webhooks and threads go."""
        channel = self.channels.pop(channel_id)
        for hook in list(self.webhooks.values()):
            if hook["channel_id"] == str(channel_id):
                del self.webhooks[int(hook["id"])]
        self.gateway("CHANNEL_DELETE", channel)

    def delete_webhook(self, webhook_id: int) -> None:
        del self.webhooks[webhook_id]

    async def settle(self, seconds: float = 60.0) -> None:
        """Wait until the events and commands discord.py started have run to their end."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            busy = [t for t in asyncio.all_tasks() if not t.done() and _is_discords(t)
                    and t is not asyncio.current_task()]
            if not busy:
                return
            if loop.time() > deadline:
                raise AssertionError(f"still busy after {seconds} s: {busy}")
            await asyncio.wait(busy, timeout=0.05)

    async def write(self, client: discord.Client, channel_id: int, user_id: int,
                    text: str) -> dict[str, Any]:
        """A person writes a message in a channel or thread (MESSAGE_CREATE)."""
        self.client = client
        guild_id = int(self.channels[channel_id]["guild_id"])
        member = self.members[guild_id][user_id]
        message = self.new_message(channel_id, member["user"], {"content": text})
        message["member"] = {k: v for k, v in member.items() if k != "user"}
        self._store(channel_id, message)
        await self.settle()
        return message

    # --- interactions -------------------------------------------------------------------------

    def _command(self, guild_id: int, name: str) -> dict[str, Any]:
        for command in self.commands.get(guild_id, []) + self.commands.get(None, []):
            if command["name"] == name:
                return command
        raise AssertionError(f"/{name} was never synced: Discord would not show it")

    def _options(self, guild_id: int, command: dict[str, Any], path: list[str],
                 values: dict[str, Any], focused: str | None,
                 resolved: dict[str, Any]) -> list[dict[str, Any]]:
        definitions = command.get("options", [])
        if path:
            sub = next(o for o in definitions if o["name"] == path[0])
            return [{"type": sub["type"], "name": sub["name"],
                     "options": self._options(guild_id, sub, path[1:], values, focused, resolved)}]
        options = []
        for name, value in values.items():
            spec = next((o for o in definitions if o["name"] == name), None)
            assert spec is not None, f"/{command['name']} has no option {name!r}"
            option = {"type": spec["type"], "name": name, "value": value}
            if spec["type"] == 6:  # a user: the id, with the member (if still one) in `resolved`
                member = self.members[guild_id].get(value)
                resolved.setdefault("users", {})[str(value)] = self.users[value]
                if member is not None:
                    resolved.setdefault("members", {})[str(value)] = {
                        k: v for k, v in member.items() if k != "user"}
                option["value"] = str(value)
            if name == focused:
                option["focused"] = True
                option["value"] = str(value)
            options.append(option)
        return options

    def _interaction(self, kind: int, guild_id: int, user_id: int, channel_id: int | None,
                     data: dict[str, Any], message: dict[str, Any] | None = None) -> Exchange:
        channel_id = channel_id or int(self.named(guild_id, "general")[0]["id"])
        member = self.members[guild_id][user_id]
        exchange = Exchange(self.next_id(), f"interaction-token-{self.next_id()}", kind,
                            channel_id)
        self.exchanges[exchange.token] = exchange
        payload = {"id": str(exchange.id), "application_id": str(APPLICATION_ID), "type": kind,
                   "token": exchange.token, "version": 1, "guild_id": str(guild_id),
                   "guild": {"id": str(guild_id), "locale": "en-US", "features": []},
                   "channel_id": str(channel_id), "channel": self.channels[channel_id],
                   "member": {**member, "permissions": str(self.permissions(guild_id, user_id))},
                   "app_permissions": str(self.permissions(guild_id, BOT_USER_ID)),
                   "locale": "en-US", "guild_locale": "en-US", "entitlements": [],
                   "authorizing_integration_owners": {"0": str(guild_id)}, "context": 0,
                   "attachment_size_limit": 8_388_608, "data": data}
        if message is not None:
            payload["message"] = _public(message)
        self.gateway("INTERACTION_CREATE", payload)
        return exchange

    async def slash(self, client: discord.Client, guild_id: int, user_id: int, command: str,
                    *, channel_id: int | None = None, **values: Any) -> Exchange:
        """A person uses a slash command ("town join") with these option values."""
        return await self._invoke(client, 2, guild_id, user_id, command, channel_id, values, None)

    async def autocomplete(self, client: discord.Client, guild_id: int, user_id: int,
                           command: str, option: str, typed: str, **values: Any) -> list[str]:
        """The suggestions Discord would show while `typed` is in `option`."""
        exchange = await self._invoke(client, 4, guild_id, user_id, command, None,
                                      {**values, option: typed}, option)
        return exchange.choices

    async def _invoke(self, client: discord.Client, kind: int, guild_id: int, user_id: int,
                      command: str, channel_id: int | None, values: dict[str, Any],
                      focused: str | None) -> Exchange:
        self.client = client
        top, *path = command.split()
        spec = self._command(guild_id, top)
        resolved: dict[str, Any] = {}
        data = {"id": spec["id"], "name": top, "type": 1,
                "options": self._options(guild_id, spec, path, values, focused, resolved)}
        if spec.get("guild_id"):
            data["guild_id"] = spec["guild_id"]
        if resolved:
            data["resolved"] = resolved
        exchange = self._interaction(kind, guild_id, user_id, channel_id, data)
        await self.settle()
        return exchange

    async def click(self, client: discord.Client, guild_id: int, user_id: int,
                    message: dict[str, Any], custom_id: str) -> Exchange:
        """A person presses a button on a message."""
        self.client = client
        exchange = self._interaction(3, guild_id, user_id, int(message["channel_id"]),
                                     {"custom_id": custom_id, "component_type": 2}, message)
        await self.settle()
        return exchange

    async def submit(self, client: discord.Client, guild_id: int, user_id: int,
                     shown: Exchange, **values: str) -> Exchange:
        """The person fills in the form (modal) an interaction showed them and sends it;
        `values` by the fields' labels."""
        self.client = client
        [form] = [r["data"] for r in shown.responses if r["type"] == 9]
        rows = []
        for row in form["components"]:
            for field_ in row["components"]:
                value = values.pop(field_["label"], "")
                assert len(value) <= field_.get("max_length", 4000), "Discord would not send it"
                assert value or not field_.get("required", True), f"{field_['label']} is required"
                rows.append({"type": 1, "components": [{"type": 4, "custom_id": field_["custom_id"],
                                                        "value": value}]})
        assert not values, f"the form has no fields {list(values)}"
        exchange = self._interaction(5, guild_id, user_id, shown.channel_id,
                                     {"custom_id": form["custom_id"], "components": rows})
        await self.settle()
        return exchange

    def button_ids(self, message: dict[str, Any]) -> dict[str, str]:
        """label -> custom_id of the buttons on a message."""
        return {c["label"]: c.get("custom_id", c.get("url", "")) for row in message["components"]
                for c in row["components"]}


def _id_or_text(part: str) -> Any:
    return int(part) if part.isdigit() else part


def _public(data: dict[str, Any]) -> dict[str, Any]:
    """The payload as Discord sends it: without the fake's own notes."""
    return {k: v for k, v in data.items() if not k.startswith("x_")}


def _is_discords(task: asyncio.Task[Any]) -> bool:
    name = task.get_name()
    return name.startswith(("discord.py:", "discord-ui-view-dispatch", "discord-ui-dynamic-item",
                            "discord-ui-modal-dispatch")) or name == "CommandTree-invoker"


# --- routes -----------------------------------------------------------------------------------
# Each handler gets the path's ids in order, then body= and params=, and returns the payload.

Handler = Callable[..., Any]
ROUTES: list[tuple[str, re.Pattern[str], Handler]] = []


def route(method: str, pattern: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        ROUTES.append((method, re.compile(pattern), handler))
        return handler
    return register


@route("GET", r"/users/@me")
def _me(fake: FakeDiscord, **_: Any) -> Any:
    return user_payload(BOT_USER_ID, "townbot", bot=True)


@route("GET", r"/oauth2/applications/@me")
def _application(fake: FakeDiscord, **_: Any) -> Any:
    return {"id": str(APPLICATION_ID), "name": "townbot", "description": "", "icon": None,
            "bot_public": True, "bot_require_code_grant": False, "verify_key": "0" * 64,
            "owner": user_payload(1, "owner"), "flags": 0, "rpc_origins": []}


@route("GET", r"/gateway/bot")
def _gateway(fake: FakeDiscord, **_: Any) -> Any:
    return {"url": "wss://gateway.invalid", "shards": fake.shards,
            "session_start_limit": {"total": 1000, "remaining": 1000, "reset_after": 0,
                                    "max_concurrency": 1}}


@route("POST", r"/guilds/(\d+)/channels")
def _create_channel(fake: FakeDiscord, guild_id: int, *, body: Any, **_: Any) -> Any:
    parent = body.get("parent_id")
    channel_id = fake.add_channel(guild_id, body["name"], kind=body.get("type", 0),
                                  parent=int(parent) if parent else None, topic=body.get("topic"))
    fake.gateway("CHANNEL_CREATE", fake.channels[channel_id])
    return fake.channels[channel_id]


@route("GET", r"/guilds/(\d+)/channels")
def _channels(fake: FakeDiscord, guild_id: int, **_: Any) -> Any:
    return fake.guild_channels(guild_id)


@route("GET", r"/guilds/(\d+)/webhooks")
def _guild_webhooks(fake: FakeDiscord, guild_id: int, **_: Any) -> Any:
    return [h for h in fake.webhooks.values() if h["guild_id"] == str(guild_id)]


@route("POST", r"/channels/(\d+)/webhooks")
def _create_webhook(fake: FakeDiscord, channel_id: int, *, body: Any, **_: Any) -> Any:
    channel = fake._channel(channel_id)
    if re.search("discord|clyde", body["name"], re.IGNORECASE):
        fake._raise(400, 50035, "Invalid Form Body", webhook=False)
    hook_id = fake.next_id()
    fake.webhooks[hook_id] = {"id": str(hook_id), "type": 1, "guild_id": channel["guild_id"],
                              "channel_id": str(channel_id), "name": body["name"],
                              "avatar": None, "token": f"webhook-token-{hook_id}",
                              "application_id": str(APPLICATION_ID),
                              "user": user_payload(BOT_USER_ID, "townbot", bot=True)}
    return fake.webhooks[hook_id]


@route("POST", r"/channels/(\d+)/messages")
def _send(fake: FakeDiscord, channel_id: int, *, body: Any, **_: Any) -> Any:
    fake._channel(channel_id)
    bot = user_payload(BOT_USER_ID, "townbot", bot=True)
    return _public(fake._store(channel_id, fake.new_message(channel_id, bot, body)))


@route("GET", r"/channels/(\d+)/messages")
def _history(fake: FakeDiscord, channel_id: int, *, params: Any, **_: Any) -> Any:
    fake._channel(channel_id)
    messages = [m for m in fake.messages(channel_id) if not m["flags"] & EPHEMERAL]
    limit = int(params.get("limit", 50))
    if "after" in params:
        chosen = [m for m in messages if int(m["id"]) > int(params["after"])][:limit]
        return [_public(m) for m in reversed(chosen)]  # newest first, as Discord answers
    if "before" in params:
        messages = [m for m in messages if int(m["id"]) < int(params["before"])]
    return [_public(m) for m in list(reversed(messages))[:limit]]


@route("DELETE", r"/channels/(\d+)/messages/(\d+)")
def _delete(fake: FakeDiscord, channel_id: int, message_id: int, **_: Any) -> Any:
    fake._message(channel_id, message_id)["x_deleted"] = True
    return None


@route("PATCH", r"/channels/(\d+)/messages/(\d+)")
def _edit(fake: FakeDiscord, channel_id: int, message_id: int, *, body: Any, **_: Any) -> Any:
    """The bot edits its own message: the fields sent change, the rest stay (its buttons)."""
    message = fake._message(channel_id, message_id)
    if message["author"]["id"] != str(BOT_USER_ID):
        fake._raise(403, 50005, "Cannot edit a message authored by another user", webhook=False)
    changes = {k: v for k, v in body.items() if k in ("content", "embeds", "components")}
    fake._check_message(changes.get("content", message["content"]),
                        changes.get("embeds", message["embeds"]))
    message.update(changes, edited_timestamp=now_iso())
    return _public(message)


@route("PUT", r"/channels/(\d+)/messages/(\d+)/reactions/([^/]+)/@me")
def _react(fake: FakeDiscord, channel_id: int, message_id: int, emoji: str, **_: Any) -> Any:
    message = fake._message(channel_id, message_id)
    message["reactions"].append({"count": 1, "me": True, "emoji": {"id": None, "name": emoji}})
    return None


@route("POST", r"/channels/(\d+)/typing")
def _typing(fake: FakeDiscord, channel_id: int, **_: Any) -> Any:
    fake._channel(channel_id)
    return None


@route("PUT", r"/channels/(\d+)/messages/pins/(\d+)")
def _pin(fake: FakeDiscord, channel_id: int, message_id: int, **_: Any) -> Any:
    fake._message(channel_id, message_id)["pinned"] = True
    return None


@route("GET", r"/channels/(\d+)/messages/pins")
def _pins(fake: FakeDiscord, channel_id: int, **_: Any) -> Any:
    return {"items": [{"pinned_at": now_iso(), "message": _public(m)}
                      for m in reversed(fake.pins(channel_id))], "has_more": False}


def _thread(fake: FakeDiscord, parent_id: int, thread_id: int, name: str, minutes: int) -> Any:
    parent = fake._channel(parent_id)
    if parent["type"] != 0:
        fake._raise(400, 50024, "Cannot execute action on this channel type", webhook=False)
    thread = {"id": str(thread_id), "type": 11, "guild_id": parent["guild_id"],
              "parent_id": str(parent_id), "owner_id": str(BOT_USER_ID), "name": name[:100],
              "message_count": 0, "member_count": 1, "rate_limit_per_user": 0, "flags": 0,
              "last_message_id": None,
              "thread_metadata": {"archived": False, "auto_archive_duration": minutes,
                                  "archive_timestamp": now_iso(), "locked": False}}
    fake.channels[thread_id] = thread
    fake.gateway("THREAD_CREATE", {**thread, "newly_created": True})
    return thread


@route("POST", r"/channels/(\d+)/messages/(\d+)/threads")
def _thread_on_message(fake: FakeDiscord, channel_id: int, message_id: int, *, body: Any,
                       **_: Any) -> Any:
    message = fake._message(channel_id, message_id)
    if message["flags"] & EPHEMERAL:
        fake._raise(404, 10008, "Unknown Message", webhook=False)
    return _thread(fake, channel_id, message_id, body["name"],  # a thread takes the message's id
                   body.get("auto_archive_duration", 1440))


@route("POST", r"/channels/(\d+)/threads")
def _thread_in_channel(fake: FakeDiscord, channel_id: int, *, body: Any, **_: Any) -> Any:
    return _thread(fake, channel_id, fake.next_id(), body["name"],
                   body.get("auto_archive_duration", 1440))


def _synced(fake: FakeDiscord, guild_id: int | None, body: Any) -> Any:
    stored = []
    for command in body:
        stored.append({**command, "id": str(fake.next_id()), "version": "1",
                       "application_id": str(APPLICATION_ID),
                       "guild_id": str(guild_id) if guild_id else None,
                       "default_member_permissions": command.get("default_member_permissions"),
                       "type": command.get("type", 1)})
    fake.commands[guild_id] = stored
    return stored


@route("PUT", r"/applications/(\d+)/commands")
def _sync_global(fake: FakeDiscord, app_id: int, *, body: Any, **_: Any) -> Any:
    return _synced(fake, None, body)


@route("PUT", r"/applications/(\d+)/guilds/(\d+)/commands")
def _sync_guild(fake: FakeDiscord, app_id: int, guild_id: int, *, body: Any, **_: Any) -> Any:
    return _synced(fake, guild_id, body)


# --- webhooks and interactions (through the adapter) --------------------------------------------

@route("POST", r"/webhooks/(\d+)/([^/]+)")
def _execute(fake: FakeDiscord, hook_id: int, token: str, *, body: Any, params: Any) -> Any:
    if hook_id == APPLICATION_ID:
        return _followup(fake, token, body)
    hook = fake.webhooks.get(hook_id)
    if hook is None or hook["token"] != token:
        fake._raise(404, 10015, "Unknown Webhook", webhook=True)
    assert hook is not None
    username = body.get("username") or hook["name"]
    if not 1 <= len(username) <= 80 or re.search("discord|clyde", username, re.IGNORECASE):
        fake._raise(400, 50035, "Invalid Form Body", webhook=True)
    if body.get("components") and not int(params.get("with_components", 0)):
        fake._raise(400, 50035, "Invalid Form Body", webhook=True)
    where = int(params["thread_id"]) if params.get("thread_id") else int(hook["channel_id"])
    channel = fake._channel(where)
    if where != int(hook["channel_id"]) and channel.get("parent_id") != hook["channel_id"]:
        fake._raise(400, 220001, "thread is not in the webhook's channel", webhook=True)
    author = {**user_payload(hook_id, username, bot=True), "discriminator": "0000"}
    message = fake._store(where, fake.new_message(where, author, body, webhook_id=hook_id))
    return _public(message) if int(params.get("wait", 0)) else None


def _exchange(fake: FakeDiscord, token: str) -> Exchange:
    exchange = fake.exchanges.get(token)
    if exchange is None:
        fake._raise(404, 10015, "Unknown Webhook", webhook=True)
    assert exchange is not None
    return exchange


def _interaction_message(fake: FakeDiscord, exchange: Exchange, body: Any, flags: int) -> Any:
    channel_id = exchange.channel_id
    bot = user_payload(BOT_USER_ID, "townbot", bot=True)
    message = fake.new_message(channel_id, bot, body, webhook_id=APPLICATION_ID, flags=flags)
    message["interaction_metadata"] = {"id": str(exchange.id), "type": exchange.kind,
                                       "user": bot}
    exchange.messages.append(message)
    if not flags & EPHEMERAL:
        fake._store(channel_id, message)
    return message


@route("POST", r"/interactions/(\d+)/([^/]+)/callback")
def _callback(fake: FakeDiscord, interaction_id: int, token: str, *, body: Any, **_: Any) -> Any:
    exchange = _exchange(fake, token)
    if exchange.responses:
        fake._raise(400, 40060, "Interaction has already been acknowledged", webhook=True)
    exchange.responses.append(body)
    data = body.get("data") or {}
    answer = {"interaction": {"id": str(interaction_id), "type": exchange.kind}}
    if body["type"] in (4, 5):
        flags = (data.get("flags") or 0) & EPHEMERAL | (LOADING if body["type"] == 5 else 0)
        message = _interaction_message(fake, exchange, data, flags)
        answer["interaction"].update(response_message_id=message["id"],
                                     response_message_loading=body["type"] == 5,
                                     response_message_ephemeral=bool(flags & EPHEMERAL))
        answer["resource"] = {"type": body["type"], "message": _public(message)}
    return answer


def _followup(fake: FakeDiscord, token: str, body: Any) -> Any:
    exchange = _exchange(fake, token)
    if not exchange.responses:
        fake._raise(404, 10015, "Unknown Webhook", webhook=True)
    original = exchange.messages[0] if exchange.messages else None
    if original is not None and original["flags"] & LOADING and not original.get("x_deleted"):
        # The first follow-up after "thinking..." becomes the original response (and keeps
        # the deferral's visibility, whatever the follow-up asked for).
        fake._check_message(body.get("content") or "", body.get("embeds") or [])
        original.update(content=body.get("content") or "", embeds=body.get("embeds") or [],
                        components=body.get("components") or [],
                        attachments=attachments_of(fake, body),
                        flags=original["flags"] & ~LOADING)
        return _public(original)
    return _public(_interaction_message(fake, exchange, body, (body.get("flags") or 0) & EPHEMERAL))


@route("PATCH", r"/webhooks/(\d+)/([^/]+)/messages/@original")
def _edit_original(fake: FakeDiscord, app_id: int, token: str, *, body: Any, **_: Any) -> Any:
    exchange = _exchange(fake, token)
    if not exchange.messages or exchange.messages[0].get("x_deleted"):
        fake._raise(404, 10008, "Unknown Message", webhook=True)
    original = exchange.messages[0]
    original.update({k: v for k, v in body.items() if k in ("content", "embeds", "components")})
    original["flags"] &= ~LOADING
    return _public(original)


@route("DELETE", r"/webhooks/(\d+)/([^/]+)/messages/@original")
def _delete_original(fake: FakeDiscord, app_id: int, token: str, **_: Any) -> Any:
    exchange = _exchange(fake, token)
    if not exchange.messages or exchange.messages[0].get("x_deleted"):
        fake._raise(404, 10008, "Unknown Message", webhook=True)
    exchange.messages[0]["x_deleted"] = True
    return None


@route("GET", r"/webhooks/(\d+)/([^/]+)/messages/@original")
def _get_original(fake: FakeDiscord, app_id: int, token: str, **_: Any) -> Any:
    exchange = _exchange(fake, token)
    if not exchange.messages or exchange.messages[0].get("x_deleted"):
        fake._raise(404, 10008, "Unknown Message", webhook=True)
    return _public(exchange.messages[0])
