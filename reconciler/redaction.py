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
_in_bytes: tuple[tuple[str, ...], tuple[bytes, ...]] = ((), ())  # _needles, then in UTF-8


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


def scrub_bytes(data: bytes) -> bytes:
    """`data` (UTF-8) with every registered secret replaced, as `scrub` replaces them in text."""
    for needle in _needles_in_bytes():
        if needle in data:
            data = data.replace(needle, _REDACTED_BYTES)
    return data


def _needles_in_bytes() -> tuple[bytes, ...]:
    global _in_bytes
    needles, encoded = _in_bytes
    if needles is not _needles:
        # A lone surrogate (an undecodable byte of the environment) never fails here, and its
        # bytes are no UTF-8, so they match nothing: the output is valid UTF-8.
        needles = _needles
        encoded = tuple(needle.encode(errors="surrogatepass") for needle in needles)
        _in_bytes = needles, encoded
    return encoded


_REDACTED_BYTES = REDACTED.encode()


class ScrubbedBytes:
    """A binary stream (stdout's buffer, for an output written in UTF-8 as it is made) whose
    every write loses the registered secrets first, as `guard_output` does for text: each
    write is filtered alone, so a writer cuts them where no secret can be cut in two (the
    JSON plan, at new lines: JSON text has none inside a string)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, data: bytes) -> int:
        self._stream.write(scrub_bytes(data) if _needles else data)
        return len(data)

    def flush(self) -> None:
        self._stream.flush()


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
