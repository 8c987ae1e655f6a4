"""An externalId in styled characters (full-width, mathematical, circled) reads as its plain
form to a reviewer, but would be another worker to the service: refused at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import reconciler

WORKER = """version: 1
workers:
  - externalId: "{external_id}"
    typeOfWorker: Worker
    workerName: Ada
    workerSurname: Lovelace
    workerEmail: ada@example.com
    countryIso: GB
"""


@pytest.mark.parametrize(
    ("external_id", "code", "plain"),
    [
        ("ENG-\U0001d7ce\U0001d7ce1", "U+1D7CE", "ENG-001"),  # mathematical bold digits
        ("ENG-\uff10\uff102", "U+FF10", "ENG-002"),  # full-width digits
        ("\uff25NG-003", "U+FF25", "ENG-003"),  # a full-width letter
        ("ENG-\u2460", "U+2460", "ENG-1"),  # a circled digit
    ],
)
def test_a_styled_external_id_is_refused_at_its_line(
    tmp_path: Path, external_id: str, code: str, plain: str
) -> None:
    path = tmp_path / "team.yaml"
    path.write_text(WORKER.format(external_id=external_id), encoding="utf-8")

    result = reconciler("validate", str(path))

    assert result.returncode == 1, result.stdout + result.stderr
    assert "team.yaml:3:" in result.stdout + result.stderr
    assert code in result.stdout + result.stderr
    assert f"reads as '{plain}'" in result.stdout + result.stderr


def test_an_accented_external_id_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "team.yaml"
    path.write_text(WORKER.format(external_id="ENG-\u00e9003"), encoding="utf-8")

    result = reconciler("validate", str(path))

    assert result.returncode == 0, result.stdout + result.stderr
