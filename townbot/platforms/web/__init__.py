"""The town's read-only web page (`townbot web`, or beside the bot with TOWNBOT_WEB_PORT)."""
