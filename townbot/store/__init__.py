"""aiosqlite persistence: versioned migrations, WAL, one transaction per tick."""
