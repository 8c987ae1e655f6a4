"""The one registry of secrets every output goes through: values never to be printed.

Every value registered with `register_secret` (tokens, passwords, webhook header values, the
values of `${VAR}`) is replaced, in plain form and in the encodings a value typically leaks
through (base64, hex, URL encoding), in every log event (`reconciler.logs`), every error snippet,
and, once `guard_output` runs, every line written to stdout or stderr. It imports no logging
library, so a command that logs nothing (`validate`) starts fast.
"""

from __future__ import annotations

import base64
import itertools
import re
import sys
import threading
import unicodedata
import urllib.parse
from typing import Any

from reconciler.text_safety import UNSAFE_GAPS, escape_unsafe

REDACTED = "[redacted]"
_MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words; such a secret is no secret

_lock = threading.Lock()
_needles: tuple[str, ...] = ()
_folded: tuple[str, ...] = ()  # every `leak_forms`, folded (`mask_known`)
_letters: tuple[str, ...] = ()  # the long ones, letters and digits only (`_decoded_spans`)
_in_bytes: tuple[tuple[str, ...], tuple[bytes, ...]] = ((), ())  # _needles, then in UTF-8
_registered: set[str] = set()  # the values themselves, each registered once


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


def leak_forms(value: str) -> set[str]:
    """Every form `mask_known` looks for (in any case, across white space): the `encodings`,
    and every byte URL-encoded, base32, `Bearer <value>` in base64 or base32, each reversed.

    The stream guard (`scrub`, over every byte written) keeps to the `encodings`: a form is a
    search of the whole output, and these cost it five times more on a plan of 100,000 workers.
    """
    raw = value.encode()
    forms = encodings(value) | {"".join(f"%{byte:02x}" for byte in raw)}
    for data in (raw, b"Bearer " + raw):
        for encode in (base64.b64encode, base64.urlsafe_b64encode, base64.b32encode):
            encoded = encode(data).decode()
            forms |= {encoded, encoded.rstrip("=")}
    forms.add("".join(str(byte) for byte in raw))  # decimal bytes (`116 111 107`)
    forms |= {form[::-1] for form in forms}
    return {form for form in forms if len(form) >= _MIN_SECRET_LENGTH}


def register_secret(value: str | None) -> None:
    """Make `value` (and its usual encodings) disappear from every later log event."""
    global _needles, _folded, _letters
    if not value or len(value) < _MIN_SECRET_LENGTH or value in _registered:
        return
    with _lock:
        if value in _registered:
            return
        # Only the new value's forms are made: fifty accounts' tokens, each registered by
        # every account's run, cost no more than registering them once each.
        merged = set(_needles) | encodings(value)
        # Longest first, so a value is removed before any shorter form inside it.
        _needles = tuple(sorted(merged, key=len, reverse=True))
        new = {_fold(form) for form in leak_forms(value)}
        _folded = tuple(sorted(set(_folded) | new, key=len, reverse=True))
        letters = {"".join(c for c in form if c.isalnum()) for form in new}
        letters = {form for form in letters if len(form) >= _MIN_LETTERS}
        _letters = tuple(sorted(set(_letters) | letters, key=len, reverse=True))
        _registered.add(value)


def registered() -> frozenset[str]:
    """The values registered so far (a forked process tells its parent those it added)."""
    with _lock:
        return frozenset(_registered)


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


def _fold(text: str) -> str:
    """`text` as `mask_known` compares it: no white space or invisible character, lower case."""
    return "".join(char for char in text if char.isprintable() and not char.isspace()).lower()


#: How much of a text `shown` looks at beyond what it shows: a secret that starts before the
#: cut is masked whole, never shown in part.
_MARGIN = 1024
#: A run of the characters credentials are written with (base64, base32, hex, URL-safe, JWT).
_RUN = re.compile(r"[A-Za-z0-9+/_.~=-]{13,}")
#: A run holding percent-escapes (`%2F`, `%2f`), which may hide anything.
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9+/_.~=-])*%[0-9A-Fa-f]{2}[%\w.~+/=-]*")
_PIECES = re.compile(r"[-_./=~]+")
MASKED = "[masked]"


def shown(text: str, limit: int = 200) -> str:
    """Text that came from outside (a service's answer, a value echoed from a file) as an
    output may show it: the one function every such text goes through.

    Every registered secret is masked, in any of its encodings (`leak_forms`), in any case,
    reversed, split by white space or line breaks, or written with escapes or separators
    (`\\u0074`, `&#116;`, `74:6f`, full-width; `_decoded_spans`); then every run that could be a
    credential (a long base64, base32, hex or URL-safe run holding letters and digits, a JWT,
    a run of percent-escapes) is masked too, whether or not it is known; control and invisible
    characters show as `\\uXXXX`, white space as one space; and at most `limit` characters are
    kept, the cut said.
    """
    # Runs of white space or invisible characters are one space first: padded out by them,
    # a secret would reach past the margin and show its first half, the padding folded.
    window = (UNSAFE_GAPS.sub(" ", text) if len(text) > limit else text)[: limit + _MARGIN]
    window = mask_known(window)
    window = _PERCENT_RUN.sub(_mask_percent_run, window)
    window = _RUN.sub(_mask_run, window)
    window = " ".join(window.split())
    window = escape_unsafe(window)
    if len(window) <= limit and len(text) <= limit + _MARGIN:
        return window
    return f"{window[:limit]}... (cut at {limit} of {len(text):,} characters)"


def mask_known(text: str) -> str:
    """`text` with every registered secret masked, in any of its encodings, whatever its case
    and white space (a log line; `shown` does this and more for text from outside)."""
    if not _folded:
        return text
    # The text without white space or invisible characters (a token split by a newline or a
    # zero-width space), lower case, and where each of its characters came from.
    places = [index for index, char in enumerate(text) if char.isprintable() and not char.isspace()]
    folded = "".join(text[index] for index in places).lower()
    if len(folded) != len(places):  # a character whose lower case is longer: compare as is
        folded = "".join(text[index] for index in places)
    spans: list[tuple[int, int]] = []
    for needle in _folded:
        start = folded.find(needle)
        while start >= 0:
            spans.append((places[start], places[start + len(needle) - 1] + 1))
            start = folded.find(needle, start + 1)
    spans += _decoded_spans(text)
    if not spans:
        return text
    kept: list[str] = []
    end = 0
    for start, stop in sorted(spans):
        if start >= end:
            kept.append(text[end:start] + REDACTED)
        end = max(end, stop)
    return "".join(kept) + text[end:]


#: The shortest secret form (letters and digits only) searched for in `_decoded_spans`: a
#: shorter one would mask ordinary words and numbers once the punctuation between them is gone.
_MIN_LETTERS = 12
#: One character of a text as `_decoded_spans` reads it: an escape (JSON or Python `\\u00XX`,
#: `\\xXX`, an HTML character reference) or a letter or digit (any script, full-width too).
_UNIT = re.compile(
    r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|&#(\d{1,7});|&#[xX]([0-9a-fA-F]{1,6});"
    # Read as nothing: a written escape of white space (`\\n`), the `0x` before a hex byte.
    r"|\\[nrt]|\b0[xX](?=[0-9a-fA-F]{2}\b)|[^\W_]"
)


_ONLY_LETTERS = {c: None for c in range(128) if not chr(c).isalnum()}


def _decoded_spans(text: str) -> list[tuple[int, int]]:
    """Where a registered secret hides in `text` behind escapes or separators: the text read
    with its escapes decoded (`\\u0074`, `\\x74`, `&#116;`, `&#x74;`), in NFKC (full-width and
    mathematical letters), keeping only letters and digits (so hex bytes between colons, a token
    with a dot or a combining mark after each character, decimal bytes between commas), lower
    case, compared with every long form of the secrets reduced alike."""
    if not _letters:
        return []
    if text.isascii() and "\\" not in text and "&#" not in text and "0x" not in text.lower():
        letters = text.translate(_ONLY_LETTERS).lower()  # in C: the usual (log) line ends here
        if not any(needle in letters for needle in _letters):
            return []
    units: list[tuple[str, int, int]] = []
    for found in _UNIT.finditer(text):
        code = found[1] or found[2] or found[4]
        number = int(code, 16) if code else int(found[3]) if found[3] else None
        char = found[0] if number is None else chr(min(number, 0x10FFFF))
        if len(char) > 1 and number is None:  # `\\n`, `0x`
            continue
        if not char.isascii():
            char = unicodedata.normalize("NFKC", char)
        for piece in char:
            if piece.isalnum():
                units.append((piece.lower(), found.start(), found.end()))
    folded = "".join(unit[0] for unit in units)
    if len(folded) != len(units):  # a character whose lower case is longer: compare as is
        return []
    spans: list[tuple[int, int]] = []
    for needle in _letters:
        start = folded.find(needle)
        while start >= 0:
            spans.append((units[start][1], units[start + len(needle) - 1][2]))
            start = folded.find(needle, start + 1)
    return spans


def _mask_percent_run(found: re.Match[str]) -> str:
    run = found[0]
    escapes = run.count("%")
    decoded = urllib.parse.unquote(run)
    if escapes >= 4 or _could_be_credential(decoded) or mask_known(decoded) != decoded:
        return MASKED
    return run


def _mask_run(found: re.Match[str]) -> str:
    return MASKED if _could_be_credential(found[0]) else found[0]


def could_be_credential(text: str) -> bool:
    """Whether `text` (a word, a host's label) looks like a credential rather than a name."""
    return _could_be_credential(text)


def _could_be_credential(run: str) -> bool:
    """Whether a run of base64/hex/base32 characters could be a credential rather than a word,
    a path or an id: some piece of it (between `-`, `_`, `.`, `/`, `=`) mixes letters with
    digits (or `+`), 24 characters or more, or 13 or more switching between letters and digits
    three times; or is 32 hex digits or more; or is 20 random-looking letters. A UUID, a date,
    `worker1000000@example.com`, `contractor-ada-lovelace` or `MethodArgumentNotValidException`
    stay."""
    for piece in _PIECES.split(run):
        if len(piece) < 13:
            continue
        has_digit = any(char.isdigit() for char in piece)
        has_letter = any(char.isalpha() for char in piece)
        if has_letter and "+" in piece:
            return True
        if has_letter and has_digit and (len(piece) >= 24 or _switches(piece) >= 3):
            return True
        if len(piece) >= 32 and all(char in "0123456789abcdefABCDEF" for char in piece):
            return True
        if len(piece) >= 20 and _case_changes(piece) * 4 >= len(piece):
            return True  # random letters (base64 without a digit): case changes every 2 or 3
    return False


def _switches(piece: str) -> int:
    return sum(1 for a, b in itertools.pairwise(piece) if a.isdigit() != b.isdigit())


def _case_changes(piece: str) -> int:
    return sum(1 for a, b in itertools.pairwise(piece) if a.islower() and b.isupper())
