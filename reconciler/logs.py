"""Logging, configured once at the edge: structlog to stderr, secrets removed from every event.

Human-readable on a terminal, JSON lines otherwise. Every value registered with
`register_secret` (tokens, webhook header values) is replaced in every event, in each form a
service or a log carries it (as sent, URL- and JSON-escaped, base64: `redaction.leak_forms`),
and keys that name credentials are masked whatever their value.

structlog (and the rich it loads) costs a fifth of a quick command's start-up, and most runs
log nothing at their level: it is loaded with the first event that passes the level (the
standard library's test, the one structlog's own filter makes), or at once for a program that
loaded it already.

Context: within `bound(account=...)` every line logged carries the field, whichever logger
wrote it (the reconciler's or an HTTP library's); the context is stamped on each record as it
is made, so a line held and written later still names the work that logged it. Threads do not
inherit it by themselves: the threads the reconciler starts are made by `reconciler.threads`,
which carries it into them.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from reconciler import logconfig
from reconciler.redaction import (
    REDACTED,
    guard_output,
    mask_known,
    register_secret,
    scrub,
)

LogFormat = Literal["auto", "console", "json"]
_SENSITIVE_KEYS = frozenset(
    {"authorization", "token", "access_token", "bearer", "cookie", "password", "secret"}
)

__all__ = [
    "REDACTED",
    "bound",
    "configure",
    "context",
    "context_of",
    "get_logger",
    "guard_output",
    "register_secret",
    "scrub",
]

#: The fields every line logged in this context carries (`bound`), such as the account's name.
_context: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("reconciler_log", default=())
#: The attribute of a `logging.LogRecord` that holds the context it was logged in.
_RECORD_FIELD = "reconciler_context"


@contextmanager
def bound(**fields: str) -> Iterator[None]:
    """Every line logged inside (in this thread, and in the threads `reconciler.threads`
    starts from it) carries `fields`, e.g. `bound(account="eu")`."""
    merged = dict(_context.get())
    merged.update(fields)
    token = _context.set(tuple(merged.items()))
    try:
        yield
    finally:
        _context.reset(token)


def context() -> tuple[tuple[str, str], ...]:
    """The fields bound where this is called (empty: none)."""
    return _context.get()


def context_of(record: logging.LogRecord) -> tuple[tuple[str, str], ...]:
    """The fields bound where `record` was logged."""
    fields: tuple[tuple[str, str], ...] = getattr(record, _RECORD_FIELD, ())
    return fields


def _stamped_factory(base: Any) -> Any:
    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record: logging.LogRecord = base(*args, **kwargs)
        setattr(record, _RECORD_FIELD, _context.get())
        return record

    make.reconciler_stamps = True  # type: ignore[attr-defined]
    return make


def _stamp_records() -> None:
    """Every record made from now on carries the context it was logged in (once per process)."""
    base = logging.getLogRecordFactory()
    if not getattr(base, "reconciler_stamps", False):
        logging.setLogRecordFactory(_stamped_factory(base))


def add_context(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> Any:
    """structlog processor: the fields bound where the line was logged (the record's stamp
    when the line is formatted from a record; else the context of the call)."""
    record = event_dict.get("_record")
    fields = context_of(record) if isinstance(record, logging.LogRecord) else _context.get()
    for key, value in fields:
        event_dict.setdefault(key, value)
    return event_dict


def _scrub_value(value: Any) -> Any:
    if isinstance(value, str):
        return mask_known(value)
    if isinstance(value, dict):
        return {key: _scrub_item(key, item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_scrub_value(item) for item in value]
    if isinstance(value, bytes):
        return mask_known(value.decode("utf-8", "replace"))
    if isinstance(value, int | float | bool) or value is None:
        return value
    return mask_known(str(value))


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
    screen, rich has taken stderr over, and the line prints above the bar, not through it.

    Its formatter (structlog's) is made for the first record it writes."""

    def __init__(self, use_console: bool) -> None:
        super().__init__()
        self._use_console = use_console

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass

    def format(self, record: logging.LogRecord) -> str:
        if self.formatter is None:
            self.setFormatter(_formatter(self._use_console))
        return super().format(record)


#: What `configure` asked for (format, level), applied to structlog when it loads; None: the
#: default below.
_settings: tuple[bool, int] | None = None
_structlog_ready = False


def configure(log_format: LogFormat = "auto", level: str = "warning") -> None:
    """Set up structlog and the standard library's logging for the whole program, once."""
    global _settings, _structlog_ready
    numeric_level = logging.getLevelNamesMapping().get(level.upper(), logging.WARNING)
    use_console = log_format == "console" or (log_format == "auto" and sys.stderr.isatty())
    _settings = (use_console, numeric_level)
    _structlog_ready = False
    # Redaction runs in the handler's formatter, so it covers structlog events and the
    # standard library's records (httpx, uvicorn) alike, after exceptions became text.
    root = logging.getLogger()
    root.handlers[:] = [_CurrentStderr(use_console)]
    root.setLevel(numeric_level)
    # The HTTP libraries log every request at INFO; keep them at the chosen level or above.
    for noisy in ("httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(max(numeric_level, logging.INFO))
    if "structlog" in sys.modules:
        _structlog()


def _stamps(structlog: Any) -> list[Any]:
    return [
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]


def _formatter(use_console: bool) -> logging.Formatter:
    structlog = _structlog()
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
        if use_console
        else structlog.processors.JSONRenderer()
    )
    formatter: logging.Formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_stamps(structlog),
        processors=[
            add_context,  # before the record (`_record`) is removed from the event
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            redact_secrets,
            renderer,
        ],
    )
    return formatter


def _structlog() -> Any:
    """structlog, configured as asked (or by the default below) on its first use."""
    global _structlog_ready
    import structlog

    if not _structlog_ready:
        _structlog_ready = True
        if _settings is None:
            _configure_default(structlog)
        else:
            structlog.configure(
                processors=[
                    structlog.contextvars.merge_contextvars,
                    structlog.stdlib.filter_by_level,
                    *_stamps(structlog),
                    structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
                ],
                logger_factory=structlog.stdlib.LoggerFactory(),
                wrapper_class=structlog.stdlib.BoundLogger,
                cache_logger_on_first_use=False,
            )
    return structlog


def _configure_default(structlog: Any) -> None:
    """Until `configure` runs (a library user, a test), events still lose their secrets.

    structlog's own default prints every event, unfiltered and unredacted, to stdout. This one
    sends them through the standard library's logging instead: nothing below WARNING, nothing
    on stdout, and the redaction applied.
    """
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            add_context,
            redact_secrets,
            structlog.processors.KeyValueRenderer(key_order=["event"]),
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )


class _Logger:
    """A structlog logger, made for the first event its level lets through."""

    __slots__ = ("_levels", "_logger", "_name")

    def __init__(self, name: str | None) -> None:
        self._name = name
        self._levels = logging.getLogger(name)
        self._logger: Any = None

    def _log(self, level: int, method: str, event: str, fields: dict[str, Any]) -> None:
        if not self._levels.isEnabledFor(level):
            return
        if self._logger is None:
            self._logger = _structlog().stdlib.get_logger(self._name)
        getattr(self._logger, method)(event, **fields)

    def debug(self, event: str, **fields: Any) -> None:
        self._log(logging.DEBUG, "debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log(logging.INFO, "info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log(logging.WARNING, "warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, "error", event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, "exception", event, fields)


def get_logger(name: str | None = None) -> _Logger:
    return _Logger(name)


_stamp_records()
if logconfig.requested is not None:  # the command line asked before this module loaded
    configure(*logconfig.requested)  # type: ignore[arg-type]
elif "structlog" in sys.modules:
    _structlog()
