"""An externalId in styled characters (full-width, mathematical, circled) reads as its plain
form to a reviewer, but would be another worker to the service: refused at its line. So does
one that mixes scripts as look-alikes do (`ENG-А01` with a Cyrillic `А`), or digits of two
numbering systems (Unicode TS #39's restriction levels, through ICU)."""

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


@pytest.mark.parametrize(
    ("external_id", "named"),
    [
        ("ENG-\u041001", "U+0410 CYRILLIC CAPITAL LETTER A among Latin letters"),
        ("ENG-\u03bf01", "U+03BF GREEK SMALL LETTER OMICRON among Latin letters"),
        ("\u0415NG-001", "U+0415 CYRILLIC CAPITAL LETTER IE among Latin letters"),
        ("ENG-0\u09661", "U+0966 DEVANAGARI DIGIT ZERO"),
    ],
    ids=["Cyrillic A", "Greek omicron", "Cyrillic E first", "Devanagari zero"],
)
def test_an_external_id_mixing_scripts_as_look_alikes_do_is_refused_at_its_line(
    tmp_path: Path, external_id: str, named: str
) -> None:
    path = tmp_path / "team.yaml"
    path.write_text(WORKER.format(external_id=external_id), encoding="utf-8")

    result = reconciler("validate", str(path))

    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert f"team.yaml:3:17: externalId {external_id!r} mixes " in said, said
    assert named in said and "Unicode TS #39" in said, said


@pytest.mark.parametrize(
    "external_id",
    ["ENG-\u7530\u4e2d", "\u0418\u041d\u0416-001", "ENG-M\u00fcller", "ENG-\u0661\u0662"],
    ids=["Latin and Han", "Cyrillic alone", "Latin with an umlaut", "Arabic-Indic digits"],
)
def test_an_external_id_in_one_script_or_a_safe_mix_is_kept(
    tmp_path: Path, external_id: str
) -> None:
    path = tmp_path / "team.yaml"
    path.write_text(WORKER.format(external_id=external_id), encoding="utf-8")

    result = reconciler("validate", str(path))

    assert result.returncode == 0, result.stdout + result.stderr
