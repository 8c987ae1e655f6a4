"""A file with thousands of problems gives the first ones and a count, not thousands of lines.

CI size: 6,000 broken workers (each with two problems), past the point where the schema is
checked worker by worker; `benchmarks/` is where sizes are measured.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import reconciler

BROKEN = 6_000


@pytest.fixture(scope="module")
def broken_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("broken") / "many.yaml"
    lines = ["version: 1", "workers:"]
    for index in range(BROKEN):
        lines += [
            f"  - externalId: ENG-{index}",
            "    typeOfWorker: Worker",
            "    workerName: A",
            "    workerSurname: B",
            f"    workerEmail: not-an-email-{index}",
            "    countryIso: XX",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_text_lists_the_first_hundred_and_counts_the_rest(broken_file: Path) -> None:
    result = reconciler("validate", str(broken_file))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 101
    assert lines[0].startswith(f"{broken_file}:7:")  # the first problem, in file order
    assert lines[-1] == "at least 11,001 problems found (the first 100 are shown)"


@pytest.mark.parametrize(("fmt", "listed"), [("json", 1000), ("github", 50)])
def test_machine_formats_are_bounded_too(broken_file: Path, fmt: str, listed: int) -> None:
    result = reconciler("validate", str(broken_file), "--format", fmt)
    assert result.returncode == 1
    rows = json.loads(result.stdout) if fmt == "json" else result.stdout.splitlines()
    assert len(rows) == listed
    assert f"(the first {listed:,} are shown)" in result.stderr
