"""Free text a plan quotes (refusal and conflict reasons, warnings) shows hidden characters as
escapes, as values do: a reason quoting a name with a bidi override drew other text."""

from __future__ import annotations

import pytest

from reconciler.render.base import clean


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("payee ada@example.com is not ACTIVE", "payee ada@example.com is not ACTIVE"),
        ("René's agreement", "René's agreement"),  # a letter stays itself
        ("line\nbreak\x1b[31m", "line\nbreak\\x1b[31m"),  # control characters, as before
        ("name \u202eevil\u202c", "name \\u202eevil\\u202c"),  # a bidi override
        ("Jan\u200buary", "Jan\\u200buary"),  # a zero-width space
        ("Jan\u00a0uary", "Jan\\u00a0uary"),  # white space other than a space
        ("Jan\u3164uary", "Jan\\u3164uary"),  # a Hangul filler
        ("tag\U000e0041", "tag\\U000e0041"),  # a tag character
        ("ok \u2028 next", "ok \\u2028 next"),  # a line separator
    ],
)
def test_hidden_characters_of_a_reason_are_shown_as_escapes(text: str, shown: str) -> None:
    assert clean(text) == shown
