"""Log lines as text for people, or as one JSON object per line for a log collector
(TOWNBOT_LOG_FORMAT=json): time, level, logger, message, and the traceback when there is one."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {"time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
                 "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def formatter(kind: str) -> logging.Formatter:
    """'json' or 'text'."""
    return JsonLines() if kind == "json" else logging.Formatter(TEXT)
