"""The town on Discord: one town per server, slash commands, webhooks and a paced outbox."""
