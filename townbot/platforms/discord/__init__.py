"""The town on Discord: one town per server, slash commands, webhooks and a paced outbox.

`cli.py` imports the rest only when `townbot run` runs, so the other commands start as before.
"""
