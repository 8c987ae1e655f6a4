"""The drift report names whatever makes `drift` exit non-zero: under `--strict`, unmanaged
workers too (the drift issue once said "The account matches the file" and named nobody)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from tests.gitops.support import reconciler

SEED = """\
workers:
  - {externalId: REV-001, firstName: Ada, lastName: Lovelace, email: ada@example.com,
     country: GB, jobTitle: Engineer, status: ACTIVE}
  - {firstName: Fred, lastName: Free, email: freelance@example.com, country: US, status: ACTIVE}
  - {externalId: OPS-001, firstName: Linus, lastName: Ops, email: linus@example.com,
     country: FI, status: ACTIVE}
"""
DESIRED = """\
version: 1
scope:
  externalIdPrefix: "REV-"
workers:
  - {externalId: REV-001, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,
     workerEmail: ada@example.com, countryIso: GB, jobTitle: Engineer}
"""


@pytest.mark.parametrize("fmt", ["markdown", "text"])
def test_strict_drift_names_the_unmanaged_workers(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "seed.yaml").write_text(SEED)
    (tmp_path / "desired.yaml").write_text(DESIRED)
    with SandboxServer(seed=tmp_path / "seed.yaml", process_delay_ms=0) as server:
        lenient = reconciler("drift", str(tmp_path / "desired.yaml"), server=server)
        strict = reconciler(
            "drift", str(tmp_path / "desired.yaml"), "--strict", "--format", fmt, server=server
        )

    assert lenient.returncode == 0, lenient.stderr  # without --strict: in sync
    assert strict.returncode == 2, strict.stderr
    report = strict.stdout
    assert "The account matches the file" not in report
    assert "2 open agreements not owned by the file" in report
    for email in ("freelance@example.com", "linus@example.com"):
        assert email in report
    assert '"OPS-001"' in report
