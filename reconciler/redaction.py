"""The one registry of secrets every output goes through: values never to be printed.

Every value registered with `register_secret` (tokens, passwords, webhook header values, the
values of `${VAR}`) is replaced in every log event (`reconciler.logs`), every error snippet,
and, once `guard_output` runs, every line written to stdout or stderr, in each form a service
or a log carries it (`leak_forms`): as sent, URL-escaped, JSON-escaped, and in base64, alone or
inside an Authorization header's `Basic user:secret` or `Bearer secret`. It imports no logging
library, so a command that logs nothing (`validate`) starts fast.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import sys
import threading
import urllib.parse
from typing import Any, AnyStr

from reconciler.text_safety import UNSAFE_GAPS, escape_unsafe

REDACTED = "[redacted]"
_MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words; such a secret is no secret

_lock = threading.Lock()
_needles: tuple[str, ...] = ()  # every `leak_forms`, longest first (`scrub`)
#: The same, each with the part of it `scrub` looks for first in a long text (`_probes`).
_probed: tuple[tuple[str, str], ...] = ()
_folded: tuple[str, ...] = ()  # the forms, folded (`mask_known`)
#: `_probed` (the key), then its forms in UTF-8, and each with its probe.
_in_bytes: tuple[tuple[tuple[str, str], ...], tuple[bytes, ...], tuple[tuple[bytes, bytes], ...]]
_in_bytes = ((), (), ())
_registered: set[str] = set()  # the values themselves, each registered once

#: The characters a URL keeps unescaped in a path besides the unreserved ones (RFC 3986's
#: sub-delimiters, `:` and `@`): how an HTTP client writes a value into a path.
_IN_A_PATH = "/:@!$&'()*+,;="
#: Of the base64 of a value that starts 0, 1 or 2 bytes into a group of three, where the
#: characters that the value alone decides begin (the others mix in the bytes before it).
_FIRST_OWN = (0, 2, 3)
_ESCAPE = re.compile("%[0-9A-F]{2}")


def leak_forms(value: str) -> set[str]:
    """`value` in each form a service or a log carries it, each at least 4 characters long:

    - as sent;
    - URL-escaped: every reserved character escaped (a query's value; its escapes in upper or
      lower case), `/` kept (a path, as Python writes it), a path's sub-delimiters kept (as an
      HTTP client writes it), and spaces as `+` (a form's body);
    - JSON-escaped: non-ASCII as `\\u` escapes or as it is, and `/` as `\\/` (a JSON body,
      a JSON log line);
    - base64, standard and URL-safe: the value alone, whole, and wherever it sits inside other
      bytes (`user:secret` and `secret:x` of HTTP Basic, `Bearer secret`): for each of the
      three places in a group of three bytes it can start at, the run of characters the value
      alone decides.
    """
    escaped = urllib.parse.quote(value, safe="", errors="surrogatepass")
    forms = {value, escaped, _ESCAPE.sub(lambda escape: escape[0].lower(), escaped)}
    for safe in ("/", _IN_A_PATH):
        forms.add(urllib.parse.quote(value, safe=safe, errors="surrogatepass"))
    forms.add(urllib.parse.quote_plus(value, safe="", errors="surrogatepass"))
    escaped = json.dumps(value)[1:-1]
    forms |= {escaped, escaped.replace("/", "\\/"), json.dumps(value, ensure_ascii=False)[1:-1]}
    raw = value.encode(errors="surrogatepass")
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode()
        forms |= {whole, whole.rstrip("=")}
        for offset, first in enumerate(_FIRST_OWN):
            end = offset + len(raw)
            last = 4 * (end // 3) + end % 3  # a partial group's last character mixes what follows
            forms.add(encode(bytes(offset) + raw).decode()[first:last])
    return {form for form in forms if len(form) >= _MIN_SECRET_LENGTH}


def register_secret(value: str | None) -> None:
    """Make `value` (in each of its `leak_forms`) disappear from every later output."""
    global _needles, _probed, _folded
    if not value or len(value) < _MIN_SECRET_LENGTH or value in _registered:
        return
    with _lock:
        if value in _registered:
            return
        # Only the new value's forms are made: fifty accounts' tokens, each registered by
        # every account's run, cost no more than registering them once each.
        forms = leak_forms(value)
        merged = _probes(forms) | dict(_probed)  # a form already known keeps its probe
        # Longest first, so a value is removed before any shorter form inside it.
        _probed = tuple(sorted(merged.items(), key=lambda pair: len(pair[0]), reverse=True))
        _needles = tuple(form for form, _ in _probed)
        folded = {_fold(form) for form in forms}
        _folded = tuple(sorted(set(_folded) | folded, key=len, reverse=True))
        _registered.add(value)


#: The length from which `scrub` looks for probes first, rather than for every form.
_LONG = 2048
#: A run of letters and digits long enough to stand for a form in `_probes`.
_PROBE = re.compile("[A-Za-z0-9]{8,}")


def _probes(forms: set[str]) -> dict[str, str]:
    """For each of a value's forms, a part of it to look for first: a probe of a shorter form
    that it holds (its base64 whole holds the part the value alone decides), else its longest
    run of letters and digits (which its base64 in the other alphabet holds too), else the
    form itself. The eleven forms of a token are four searches of a text that holds none."""
    probes: dict[str, str] = {}
    for form in sorted(forms, key=len):
        held = [probe for probe in set(probes.values()) if probe in form]
        runs = _PROBE.findall(form)
        probes[form] = max(held or runs or [form], key=len)
    return probes


def registered() -> frozenset[str]:
    """The values registered so far (a forked process tells its parent those it added)."""
    with _lock:
        return frozenset(_registered)


def scrub(text: str) -> str:
    """`text` with every registered secret replaced, the longest form first.

    In a long text a form is looked for only where its probe is: a probe not in the text (since
    the last replacement) rules out every form that holds it, so the output is the same as
    looking for every form."""
    if len(text) < _LONG:  # a line: looking is cheaper than keeping count
        for needle in _needles:
            if needle in text:
                text = text.replace(needle, REDACTED)
        return text
    return _scrub_long(text, _probed, REDACTED)


def scrub_bytes(data: bytes) -> bytes:
    """`data` (UTF-8) with every registered secret replaced, as `scrub` replaces them in text."""
    needles, probed = _needles_in_bytes()
    if len(data) < _LONG:
        for needle in needles:
            if needle in data:
                data = data.replace(needle, _REDACTED_BYTES)
        return data
    return _scrub_long(data, probed, _REDACTED_BYTES)


def _scrub_long(text: AnyStr, probed: tuple[tuple[AnyStr, AnyStr], ...], mask: AnyStr) -> AnyStr:
    absent: set[AnyStr] = set()
    for needle, probe in probed:
        if probe in absent:
            continue
        if probe not in text:
            absent.add(probe)
        elif needle in text:
            text = text.replace(needle, mask)
            absent.clear()
    return text


def _needles_in_bytes() -> tuple[tuple[bytes, ...], tuple[tuple[bytes, bytes], ...]]:
    global _in_bytes
    key, needles, probed = _in_bytes
    if key is not _probed:
        # A lone surrogate (an undecodable byte of the environment) never fails here, and its
        # bytes are no UTF-8, so they match nothing: the output is valid UTF-8.
        key = _probed
        probed = tuple(
            (needle.encode(errors="surrogatepass"), probe.encode(errors="surrogatepass"))
            for needle, probe in key
        )
        needles = tuple(needle for needle, _ in probed)
        _in_bytes = key, needles, probed
    return needles, probed


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

    Every registered secret is masked, in any of its `leak_forms`, in any case, split by white
    space, line breaks or invisible characters (`mask_known`); then every run that could be a
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
    """`text` with every registered secret masked, in any of its `leak_forms`, whatever its case
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
    if not spans:
        return text
    kept: list[str] = []
    end = 0
    for start, stop in sorted(spans):
        if start >= end:
            kept.append(text[end:start] + REDACTED)
        end = max(end, stop)
    return "".join(kept) + text[end:]


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
