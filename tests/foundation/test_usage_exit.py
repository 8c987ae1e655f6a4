"""A command line the reconciler cannot run exits 1, never 2: 2 means changes or drift."""

from __future__ import annotations

import pytest

from tests.cli import reconciler


@pytest.mark.parametrize(
    "args",
    [
        ["drift", "examples/quickstart.yaml", "--strict", "--money-since", "garbage"],
        ["drift", "examples/quickstart.yaml", "--no-such-option"],
        ["plan", "examples/quickstart.yaml", "--detailed-exitcode", "--format", "yaml"],
        ["plan-compare"],
        ["export", "--out"],
        ["github", "drift-issue", "--no-such-option"],
        ["--no-such-option", "plan", "examples/quickstart.yaml"],
        ["no-such-command"],
    ],
)
def test_a_usage_error_is_exit_1_with_the_usage(args: list[str]) -> None:
    result = reconciler(*args)

    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Error:" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""
