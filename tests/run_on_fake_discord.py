"""`townbot run` in a process of its own on the in-memory Discord, for tests that send it real
signals: `python tests/run_on_fake_discord.py DATA_DIR`.

Only discord.py's transports are replaced: its HTTP requests go to the fake (FakeDiscord), and
its gateway websocket is an open connection that delivers READY and then stays open until
someone closes it, as Discord's does. Each time discord.py opens the gateway, a line
`gateway: connect N` goes to standard output, so a test sees a reconnect.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import discord
from discord.gateway import DiscordWebSocket
from fakediscord import FakeDiscord
from pytest import MonkeyPatch

from townbot.cli import main


class OpenGateway:
    """The part of DiscordWebSocket that discord.py's connection loop uses."""

    def __init__(self, client: discord.Client, shard_id: int | None) -> None:
        self.client, self.shard_id = client, shard_id
        self.sequence, self.session_id, self.gateway = None, "fake-session", "wss://gateway.invalid"
        self.latency = 0.0
        self._closed = asyncio.Event()
        self.close_code: int | None = None

    @property
    def open(self) -> bool:
        return not self._closed.is_set()

    async def poll_event(self) -> None:
        await self._closed.wait()
        raise discord.ConnectionClosed(self, shard_id=self.shard_id,  # type: ignore[arg-type]
                                       code=self.close_code)

    async def close(self, code: int = 1000) -> None:
        self.close_code = code
        self._closed.set()


def install(fake: FakeDiscord, patch: MonkeyPatch) -> None:
    connects = [0]

    async def from_client(cls: Any, client: discord.Client, *, shard_id: int | None = None,
                          **_: Any) -> OpenGateway:
        connects[0] += 1
        print(f"gateway: connect {connects[0]}", flush=True)
        state = client._connection
        for guild_id in fake.guilds:
            state._add_guild_from_data(fake.guild_payload(guild_id))
        fake.client = client
        client._ready.set()  # type: ignore[union-attr]
        client.dispatch("ready")
        return OpenGateway(client, shard_id)

    patch.setattr(DiscordWebSocket, "from_client", classmethod(from_client))


def run(data_dir: Path) -> int:
    patch = MonkeyPatch()
    fake = FakeDiscord.install(patch)
    guild = fake.add_guild("Test server")
    fake.add_member(guild, "Ada")
    install(fake, patch)
    patch.setenv("DISCORD_TOKEN", fake.token)
    patch.setenv("TOWNBOT_DATA_DIR", str(data_dir))
    patch.setenv("TOWNBOT_TICK_SECONDS", "1")
    sys.argv = ["townbot", "run", "--env-file", str(data_dir / "no.env")]
    return main()  # as the `townbot` program: the process ends with the command


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1])))
