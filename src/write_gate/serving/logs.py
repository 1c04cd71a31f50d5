"""Logs: one JSON object per line on stderr, for every logger in the process (the gate's, the MCP SDK's,
uvicorn's, Python warnings). stdout is never touched: over stdio it carries the MCP protocol."""

import logging
import sys
from typing import Literal

from pythonjsonlogger.json import JsonFormatter

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


class _DropConsoleFields(logging.Filter):
    """uvicorn attaches a copy of its message with terminal colour codes; a JSON line has no use for it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.__dict__.pop("color_message", None)
        return True


def json_formatter() -> JsonFormatter:
    # {"time": ..., "level": ..., "logger": ..., "message": ..., then whatever the call passed as extra}
    return JsonFormatter(
        ["levelname", "name", "message"],
        rename_fields={"levelname": "level", "name": "logger"},
        timestamp="time",
    )


def configure(level: LogLevel | str = "INFO") -> None:
    """Route every logger through one stderr handler that writes JSON lines, replacing any earlier setup."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(json_formatter())
    handler.addFilter(_DropConsoleFields())
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    logging.captureWarnings(True)
