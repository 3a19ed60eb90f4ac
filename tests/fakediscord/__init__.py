"""An in-memory Discord under discord.py, for tests: only the HTTP layer is replaced.

discord.py's own objects run unchanged: `Client`, `ConnectionState`, `CommandTree` with its
checks, transformers and autocomplete, `Interaction.response`/`followup`, `Webhook`, `Message`,
`Thread`. What is replaced is what would cross the network:

- `discord.http.HTTPClient.request` (the bot's REST calls, login included), and
- the webhook adapter (`AsyncWebhookAdapter.request`, which carries webhook posts and every
  interaction response and follow-up), installed through discord.py's `async_context`;

both answer from `FakeDiscord`, which holds guilds, roles, members, channels, threads, webhooks,
messages, reactions, pins and synced application commands, and answers with real Discord JSON
payloads. The gateway is not connected: events enter the client's connection state as the
gateway would deliver them (`fake.gateway("MESSAGE_CREATE", payload)` calls
`ConnectionState.parse_message_create`), and interactions arrive as real `INTERACTION_CREATE`
payloads built from the commands the bot synced (a command that was never synced cannot be
used, exactly as on Discord).

Typical use (see tests/test_discord_*.py)::

    async with FakeDiscord.running(monkeypatch) as fake:
        guild = fake.add_guild("Test server")
        ada = fake.add_member(guild, "Ada")
        bot = make_client()
        await fake.connect(bot)                          # login + READY + the guilds
        exchange = await fake.slash(bot, guild, ada, "town join", name="Ada", description="...")
        exchange.text                                    # what the person saw
        exchange.ephemeral                               # shown only to them?
        choices = await fake.autocomplete(bot, guild, ada, "town profile", "resident", "is")
        message = await fake.write(bot, channel_id, ada, "Hello Klaus")   # a person writes
        pressed = await fake.click(bot, guild, ada, message, custom_id)  # a button
        sent = await fake.submit(bot, guild, ada, pressed, **{"Field label": "value"})  # a form
        fake.messages(channel_id)                        # what the channel shows, as payloads

Faults on demand: `fake.fail("POST", r"/webhooks/", 503)` makes the next matching request
answer 503 (`times=`, `after=True` to let it land first, `error=` to raise a connection
error instead); 429 answers carry Retry-After. `fake.requests` records every call as
(method, path). `fake.settle()` waits until the events and commands discord.py started
have finished.
"""

from fakediscord.server import (
    APPLICATION_ID,
    BOT_USER_ID,
    Exchange,
    FakeDiscord,
    Fault,
)

__all__ = ["APPLICATION_ID", "BOT_USER_ID", "Exchange", "FakeDiscord", "Fault"]
