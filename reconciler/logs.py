"""Logging, configured once at the edge: structlog to stderr, secrets removed from every event.

Human-readable on a terminal, JSON lines otherwise. Every value registered with
`register_secret` (tokens, webhook header values) is replaced in every event, in plain form and
in the encodings a value typically leaks through (base64, hex, URL encoding), and keys that name
credentials are masked whatever their value.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any, Literal

import structlog

from reconciler import logconfig
from reconciler.redaction import (
    REDACTED,
    guard_output,
    register_secret,
    scrub,
)

LogFormat = Literal["auto", "console", "json"]
_SENSITIVE_KEYS = frozenset(
    {"authorization", "token", "access_token", "bearer", "cookie", "password", "secret"}
)

__all__ = ["REDACTED", "configure", "get_logger", "guard_output", "register_secret", "scrub"]


def _scrub_value(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {key: _scrub_item(key, item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_scrub_value(item) for item in value]
    if isinstance(value, bytes):
        return scrub(value.decode("utf-8", "replace"))
    if isinstance(value, int | float | bool) or value is None:
        return value
    return scrub(str(value))


def _scrub_item(key: Any, value: Any) -> Any:
    if isinstance(key, str) and key.lower() in _SENSITIVE_KEYS and value is not None:
        return REDACTED
    if isinstance(key, str) and key.lower() == "headers":
        return _mask_headers(value)
    return _scrub_value(value)


def _mask_headers(value: Any) -> Any:
    """Webhook headers (`[{name, value}]`) and HTTP header maps keep their names only."""
    if isinstance(value, list | tuple):
        return [
            {**item, "value": REDACTED} if isinstance(item, dict) and "value" in item else item
            for item in value
        ]
    if isinstance(value, dict | MutableMapping):
        return {name: REDACTED for name in value}
    return _scrub_value(value)


def redact_secrets(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> Any:
    """structlog processor: removes tokens, Authorization headers and header values."""
    for key in list(event_dict):
        event_dict[key] = _scrub_item(key, event_dict[key])
    return event_dict


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever `sys.stderr` is when a line is logged: while a progress bar is on
    screen, rich has taken stderr over, and the line prints above the bar, not through it."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def configure(log_format: LogFormat = "auto", level: str = "warning") -> None:
    """Set up structlog and the standard library's logging for the whole program, once."""
    numeric_level = logging.getLevelNamesMapping().get(level.upper(), logging.WARNING)
    use_console = log_format == "console" or (log_format == "auto" and sys.stderr.isatty())
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
        if use_console
        else structlog.processors.JSONRenderer()
    )
    stamps: list[Any] = [
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.filter_by_level,
            *stamps,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    handler = _CurrentStderr()
    # Redaction runs in the formatter, so it covers structlog events and the standard
    # library's records (httpx, uvicorn) alike, after exceptions have been turned into text.
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=stamps,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                redact_secrets,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric_level)
    # The HTTP libraries log every request at INFO; keep them at the chosen level or above.
    for noisy in ("httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(max(numeric_level, logging.INFO))


def get_logger(name: str | None = None) -> Any:
    return structlog.stdlib.get_logger(name)


def _configure_default() -> None:
    """Until `configure` runs (a library user, a test), events still lose their secrets.

    structlog's own default prints every event, unfiltered and unredacted, to stdout. This one
    sends them through the standard library's logging instead: nothing below WARNING, nothing
    on stdout, and the redaction applied.
    """
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            redact_secrets,
            structlog.processors.KeyValueRenderer(key_order=["event"]),
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )


if logconfig.requested is not None:  # the command line asked before this module loaded
    configure(*logconfig.requested)  # type: ignore[arg-type]
else:
    _configure_default()
