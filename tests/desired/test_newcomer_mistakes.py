"""Two mistakes a newcomer makes, each said once and with what to do: a sandbox seed among the
desired-state files, and a country written as a name ("Britain") instead of its code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli import ROOT, reconciler

SEED = ROOT / "examples" / "sandbox-seed.yaml"
QUICKSTART = ROOT / "examples" / "quickstart.yaml"


def test_a_seed_among_the_desired_state_files_is_named_once_at_its_path(tmp_path: Path) -> None:
    folder = tmp_path / "workforce"
    folder.mkdir()
    shutil.copy(QUICKSTART, folder / "quickstart.yaml")
    shutil.copy(SEED, folder / "sandbox-seed.yaml")

    result = reconciler("plan", "--sandbox", "--sandbox-db", str(tmp_path / "s.db"), str(folder))

    assert result.returncode == 1
    seed = str(folder / "sandbox-seed.yaml")
    assert result.stderr.splitlines()[1:] == [
        f"{seed}:5:1: this is a sandbox seed (workers with firstName, lastName, email, country, "
        "status), not a desired state: the sandbox loads it (`reconciler sandbox serve --seed "
        "FILE`), plan and validate do not; keep it out of the desired-state folder, or name the "
        "desired-state file itself",
        "1 problem found",
    ]
    # the examples folder itself: the seed is one problem, not one per key of it
    examples = reconciler("validate", str(ROOT / "examples"), cwd=ROOT)
    assert "examples/sandbox-seed.yaml:5:1: this is a sandbox seed" in examples.stdout
    assert "unknown key 'firstName'" not in examples.stdout


WORKER = """\
version: 1
workers:
  - externalId: ENG-001
    typeOfWorker: Worker
    workerName: Ada
    workerSurname: Lovelace
    workerEmail: ada@example.com
    countryIso: {country}
"""


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("Britain", "GB"), ("Great Britain", "GB"), ("UK", "GB"), ("England", "GB"),
        ("United Kingdom", "GB"), ("Holland", "NL"), ("the Netherlands", "NL"),
        ("USA", "US"), ("U.S.A.", "US"), ("America", "US"), ("Germany", "DE"),
        ("Federal Republic of Germany", "DE"), ("gb", "GB"), ("FRA", "FR"), ("Russia", "RU"),
        ("Viet Nam", "VN"), ("Vietnam", "VN"),
    ],
)  # fmt: skip
def test_a_country_name_or_alias_gets_its_code_suggested(
    tmp_path: Path, written: str, meant: str
) -> None:
    path = tmp_path / "workforce.yaml"
    path.write_text(WORKER.format(country=f'"{written}"'))
    result = reconciler("validate", str(path))
    assert result.returncode == 1
    assert f"(did you mean {meant!r}?)" in result.stdout, result.stdout


@pytest.mark.parametrize("written", ["Atlantis", "XX", "Xx"])
def test_no_suggestion_for_what_is_no_country(tmp_path: Path, written: str) -> None:
    path = tmp_path / "workforce.yaml"
    path.write_text(WORKER.format(country=written))
    result = reconciler("validate", str(path))
    assert result.returncode == 1 and "did you mean" not in result.stdout, result.stdout


def test_a_desired_state_with_a_seed_like_key_is_not_called_a_seed(tmp_path: Path) -> None:
    """`email` for `workerEmail` in a desired state is a typo, reported as one."""
    path = tmp_path / "workforce.yaml"
    text = WORKER.format(country="GB").replace("version: 1\n", "")  # a file of workers only
    path.write_text(text.replace("workerEmail:", "email:").replace("countryIso:", "country:"))
    result = reconciler("validate", str(path))
    assert result.returncode == 1
    assert "sandbox seed" not in result.stdout and "unknown key 'email'" in result.stdout
