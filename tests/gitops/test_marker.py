"""The hidden marker: only a body whose first line is exactly the marker is ours."""

from __future__ import annotations

import pytest

from reconciler.render.marker import DRIFT, PLAN, InvalidMarkerKey, Marker

PLAIN = Marker(PLAN)
KEYED = Marker(PLAN, "prod")


@pytest.mark.parametrize(
    ("marker", "body", "ours"),
    [
        (PLAIN, "<!-- reconciler:plan -->\n### reconciler plan", True),
        (PLAIN, "<!-- reconciler:plan -->\r\n### reconciler plan", True),
        (PLAIN, "<!-- reconciler:plan -->", True),
        (KEYED, '<!-- reconciler:plan key="prod" -->\nbody', True),
        (PLAIN, '<!-- reconciler:plan key="prod" -->\nbody', False),  # another account's
        (KEYED, "<!-- reconciler:plan -->\nbody", False),
        (PLAIN, "> <!-- reconciler:plan -->\n> quoted", False),
        (PLAIN, "Plan failed.\n<!-- reconciler:plan -->", False),
        (PLAIN, " <!-- reconciler:plan -->\nbody", False),
        (PLAIN, "<!-- reconciler:plan-old -->\nbody", False),
        (PLAIN, "<!-- reconciler:drift -->\nbody", False),
        (PLAIN, "", False),
        (PLAIN, None, False),
    ],
)
def test_matches_only_the_first_line_exactly(marker: Marker, body: str | None, ours: bool) -> None:
    assert marker.matches(body) is ours


@pytest.mark.parametrize("body", ["### plan\n", "<!-- reconciler:plan -->\n### plan\n", ""])
def test_stamp_puts_the_marker_once_on_the_first_line(body: str) -> None:
    stamped = PLAIN.stamp(body)
    assert stamped.split("\n")[0] == "<!-- reconciler:plan -->"
    assert stamped.count("<!-- reconciler:plan -->") == 1
    assert PLAIN.stamp(stamped) == stamped


def test_kinds_and_keys_give_different_markers() -> None:
    texts = {Marker(PLAN).text, Marker(DRIFT).text, Marker(PLAN, "a").text, Marker(PLAN, "b").text}
    assert len(texts) == 4


@pytest.mark.parametrize("key", ["", 'a" -->', "two words", "x" * 101, "naïve"])
def test_a_key_that_cannot_sit_in_the_marker_is_refused(key: str) -> None:
    with pytest.raises(InvalidMarkerKey, match="marker key"):
        Marker(PLAN, key)
