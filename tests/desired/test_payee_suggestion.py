"""An unknown payee's externalId names the nearest one of the files (a typo's likely fix),
and suggests paying by email only when no externalId is near."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import reconciler


def _file(tmp_path: Path, payee: str) -> Path:
    workers = "".join(
        f"  - {{externalId: CW-{n:04}, typeOfWorker: Worker, workerName: A, workerSurname: B,"
        f" workerEmail: w{n}@example.com, countryIso: GB}}\n"
        for n in (100, 998, 999)
    )
    path = tmp_path / "payroll.yaml"
    path.write_text(
        'version: 1\nscope:\n  externalIdPrefix: "CW-"\nworkers:\n'
        + workers
        + "payruns:\n  - id: 2026-12\n    description: December\n    payments:\n"
        + f'      - {{worker: {payee}, amount: "10.00", description: December}}\n'
    )
    return path


@pytest.mark.parametrize(
    ("payee", "step"),
    [
        (
            "CW-9999",
            "did you mean 'CW-0999'? (a worker the files do not manage is paid by `email`)",
        ),
        ("ENG-001", "pay a worker this file does not manage by `email`"),
    ],
)
def test_an_unknown_payee_names_the_nearest_external_id(
    tmp_path: Path, payee: str, step: str
) -> None:
    done = reconciler("validate", str(_file(tmp_path, payee)))
    assert done.returncode == 1
    assert f"worker '{payee}' is not an externalId of the files: {step}" in done.stdout
