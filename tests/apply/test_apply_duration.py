"""`--plan-ttl DURATION`: what it accepts and what it refuses."""

from __future__ import annotations

from datetime import timedelta

import click
import pytest

from reconciler.cli.apply import Duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90", 90),
        ("0.5", 0.5),
        ("90s", 90),
        ("30m", 1800),
        ("1h", 3600),
        ("1h30m", 5400),
        ("2d", 172800),
        (" 1H ", 3600),
    ],
)
def test_durations(text: str, seconds: float) -> None:
    assert Duration().convert(text, None, None) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "0", "0s", "-5m", "1 hour", "h", "1w", "1h30"])
def test_bad_durations_say_what_is_expected(text: str) -> None:
    with pytest.raises(click.BadParameter, match="positive duration such as 90s"):
        Duration().convert(text, None, None)
