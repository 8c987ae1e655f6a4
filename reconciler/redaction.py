"""The one registry of secrets every output goes through: values never to be printed.

Every value registered with `register_secret` (tokens, passwords, webhook header values, the
values of `${VAR}`) is replaced, in plain form and in the encodings a value typically leaks
through (base64, hex, URL encoding), in every log event (`reconciler.logs`), every error snippet,
and, once `guard_output` runs, every line written to stdout or stderr. It imports no logging
library, so a command that logs nothing (`validate`) starts fast.
"""

from __future__ import annotations

import base64
import sys
import threading
import urllib.parse
from typing import Any

REDACTED = "[redacted]"
_MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words; such a secret is no secret

_lock = threading.Lock()
_needles: tuple[str, ...] = ()


def encodings(value: str) -> set[str]:
    """`value` as it is and in the encodings it typically travels or leaks in (URL, hex,
    base64 and URL-safe base64 with and without padding), each at least 4 characters long."""
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
        merged = set(_needles) | encodings(value)
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
