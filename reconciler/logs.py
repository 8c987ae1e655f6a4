"""Logging, configured once at the edge: structlog to stderr, secrets removed from every event.

Human-readable on a terminal, JSON lines otherwise. Every value registered with
`register_secret` (tokens, webhook header values) is replaced in every event, in plain form and
in the encodings a value typically leaks through (base64, hex, URL encoding), and keys that name
credentials are masked whatever their value.
"""

from __future__ import annotations

import base64
import logging
import sys
import threading
import urllib.parse
from collections.abc import MutableMapping
from typing import Any, Literal

import structlog

LogFormat = Literal["auto", "console", "json"]

REDACTED = "[redacted]"
_SENSITIVE_KEYS = frozenset(
    {"authorization", "token", "access_token", "bearer", "cookie", "password", "secret"}
)
_MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words; such a secret is no secret

_lock = threading.Lock()
_needles: tuple[str, ...] = ()


def _encodings(value: str) -> set[str]:
    raw = value.encode()
    forms = {
        value,
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value),
        raw.hex(),
        raw.hex().upper(),
    }
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(raw).decode()
        forms.add(encoded)
        forms.add(encoded.rstrip("="))
    return {form for form in forms if len(form) >= _MIN_SECRET_LENGTH}


def register_secret(value: str | None) -> None:
    """Make `value` (and its usual encodings) disappear from every later log event."""
    global _needles
    if not value or len(value) < _MIN_SECRET_LENGTH:
        return
    with _lock:
        merged = set(_needles) | _encodings(value)
        # Longest first, so a value is removed before any shorter form inside it.
        _needles = tuple(sorted(merged, key=len, reverse=True))


def scrub(text: str) -> str:
    """`text` with every registered secret replaced."""
    for needle in _needles:
        if needle in text:
            text = text.replace(needle, REDACTED)
    return text


class _ScrubbedStream:
    """A text stream whose every write loses the registered secrets first."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: Any) -> Any:
        if _needles and isinstance(text, str):
            text = scrub(text)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_output() -> None:
    """Send stdout and stderr through the redaction: the one registry every output meets.

    The renderers mask what they know is secret; this catches what they cannot know, such
    as a variable's value inside a live URL, or a service that echoes a header value.
    """
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, _ScrubbedStream):
            setattr(sys, name, _ScrubbedStream(stream))


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
    handler = logging.StreamHandler(sys.stderr)
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


_configure_default()
