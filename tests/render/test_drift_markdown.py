"""`reconciler drift --format markdown` reads as a drift report: its title and its money table."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import ROOT, reconciler

QUICKSTART = ROOT / "examples" / "quickstart.yaml"


@pytest.fixture(scope="module")
def demo_sandbox() -> Iterator[SandboxServer]:
    """The quickstart's demo account (read only here)."""
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml") as server:
        yield server


def test_the_drift_report_is_titled_as_one_and_its_money_table_reads(
    demo_sandbox: SandboxServer,
) -> None:
    since = reconciler(
        "drift", str(QUICKSTART), "--format", "markdown", "--money-since", "2026-10-01",
        server=demo_sandbox,
    )  # fmt: skip
    assert since.returncode == 2, since.stderr  # the quickstart's account has drifted
    assert since.stdout.startswith("### reconciler drift report\n")
    assert "| money since 2026-10-01 | count | total |" in since.stdout

    plan = reconciler("plan", str(QUICKSTART), "--format", "markdown", server=demo_sandbox)
    assert plan.stdout.startswith("### reconciler plan\n")
