"""The forms a service or a log carries a secret in, each masked: a table of cases.

A registered value is masked as sent, URL-escaped, JSON-escaped and in base64 (alone, and in an
Authorization header: `Basic user:secret`, `Basic secret:x`, `Bearer secret`), by the stream
guard (`scrub`, exact), by every log event (`mask_known`, in any case and across white space)
and by what text from outside goes through (`shown`).
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Callable

import pytest

from reconciler import redaction

#: Values whose forms differ from one another: reserved characters of a URL, of JSON, non-ASCII
#: letters, base64's `+` and `/`, and lengths at each place in a group of three bytes.
VALUES = {
    "token": "tok_7Hq2Zx9Lm4Vp8Rk3Wn6Ys1Bd5",
    "password": 'p@ss/w\u00f6rd"x+y z&k=v;\\',
    "short": "s3cr",
    "five": "s3cr7",
    "base64 bytes": "\u00fb\u00ff\u00bf?>~",
}
B64 = base64.b64encode
URLSAFE = base64.urlsafe_b64encode


def _b64(text: str) -> str:
    return B64(text.encode()).decode()


FORMS: dict[str, Callable[[str], str]] = {
    "as sent": lambda value: value,
    "URL-escaped, a query's value": lambda value: urllib.parse.quote(value, safe=""),
    "URL-escaped, a path": lambda value: urllib.parse.quote(value),
    "URL-escaped, a path's sub-delimiters kept": lambda value: urllib.parse.quote(
        value, safe="/:@!$&'()*+,;="
    ),
    "URL-escaped, a form's body": lambda value: urllib.parse.urlencode({"p": value})[2:],
    "URL-escaped, lower-case escapes": lambda value: re.sub(
        "%[0-9A-F]{2}", lambda escape: escape[0].lower(), urllib.parse.quote(value, safe="")
    ),
    "JSON-escaped": lambda value: json.dumps(value)[1:-1],
    "JSON-escaped, not ASCII kept": lambda value: json.dumps(value, ensure_ascii=False)[1:-1],
    "JSON-escaped, slash escaped": lambda value: json.dumps(value)[1:-1].replace("/", "\\/"),
    "base64": lambda value: _b64(value),
    "base64 without padding": lambda value: _b64(value).rstrip("="),
    "URL-safe base64": lambda value: URLSAFE(value.encode()).decode(),
    "Basic user:secret": lambda value: "Basic " + _b64(f"ada@example.com:{value}"),
    "Basic of a one-letter user": lambda value: "Basic " + _b64(f"a:{value}"),
    "Basic of a two-letter user": lambda value: "Basic " + _b64(f"ab:{value}"),
    "Basic secret:x": lambda value: "Basic " + _b64(f"{value}:x-oauth-basic"),
    "Bearer in base64": lambda value: _b64(f"Bearer {value}"),
}
CASES = [(value, form) for value in VALUES for form in FORMS]


def _said(form: str, value: str) -> str:
    return FORMS[form](VALUES[value])


@pytest.fixture(autouse=True)
def _registered() -> None:
    for value in VALUES.values():
        redaction.register_secret(value)


def _own_part(form: str, value: str) -> str:
    """The part of the form only the value decides (for base64 inside a header, the middle)."""
    said = _said(form, value).removeprefix("Basic ")
    if "Basic" in form or "Bearer" in form:
        return said[4:-4] if len(said) > 12 else said[3:-3]
    return said


@pytest.mark.parametrize(("value", "form"), CASES)
def test_the_stream_guard_masks_each_form(value: str, form: str) -> None:
    line = f"answer: <{_said(form, value)}> end"
    scrubbed = redaction.scrub(line)
    assert _own_part(form, value) not in scrubbed, scrubbed
    assert redaction.REDACTED in scrubbed and scrubbed.startswith("answer: <")


@pytest.mark.parametrize("form", list(FORMS))
def test_a_long_output_is_scrubbed_as_a_line_is(form: str) -> None:
    """A long write (the JSON plan's) looks for each form's probe first: the same result."""
    said = [_said(form, value) for value in VALUES]
    text = "".join(f"{'x' * 700} <{each}>\n" for each in said) * 2
    scrubbed = redaction.scrub(text)
    assert scrubbed == "".join(redaction.scrub(line) for line in text.splitlines(keepends=True))
    assert redaction.scrub_bytes(text.encode()) == scrubbed.encode()
    for value in VALUES:
        assert _own_part(form, value) not in scrubbed


def test_a_secret_holding_another_is_masked_whole_in_a_long_output() -> None:
    redaction.register_secret("outer-" + VALUES["token"] + "-outer")
    text = ("y" * 3000) + f" outer-{VALUES['token']}-outer " + ("y" * 3000)
    assert redaction.scrub(text) == ("y" * 3000) + " [redacted] " + ("y" * 3000)


@pytest.mark.parametrize(("value", "form"), CASES)
def test_a_log_event_masks_each_form_in_any_case_and_split(value: str, form: str) -> None:
    said = _said(form, value)
    for written in (said, said.upper() if "base64" not in form else said, "\n".join(said)):
        masked = redaction.mask_known(f"event {written} done")
        assert _own_part(form, value) not in "".join(masked.split()), masked
        assert redaction.REDACTED in masked


@pytest.mark.parametrize(("value", "form"), CASES)
def test_text_from_outside_masks_each_form(value: str, form: str) -> None:
    shown = redaction.shown(f"denied for {_said(form, value)}", 500)
    assert _own_part(form, value) not in shown, shown
    assert shown.startswith("denied for ")


def test_ordinary_text_is_kept() -> None:
    text = "worker ENG-001 (ada@example.com) jobTitle: Engineer -> Senior Engineer"
    assert redaction.scrub(text) == text
    assert redaction.mask_known(text) == text
