"""The corpus of broken desired-state files: each gives exit 1 and the expected located message.

Every case is a folder under `tests/corpus/desired/` holding the input and an `expected.yaml`
written by hand beside it (file, line, column and a fragment of each message).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from reconciler.cli import main

REPOSITORY = Path(__file__).resolve().parents[2]
CORPUS = REPOSITORY / "tests" / "corpus" / "desired"
CASES = sorted(folder.name for folder in CORPUS.iterdir() if folder.is_dir())
# The corpus's missing variables must stay missing, whatever the machine has set.
UNSET = ("CORPUS_UNSET_HOST", "CORPUS_UNSET_TOKEN")


def _expected(case: str) -> dict[str, Any]:
    expected: dict[str, Any] = yaml.safe_load((CORPUS / case / "expected.yaml").read_text())
    return expected


def _check(case: str, exit_code: int, output: str) -> None:
    expected = _expected(case)
    assert "Traceback" not in output
    assert exit_code == 1, output
    reported = json.loads(output)
    assert len(reported) == len(expected["problems"]), output
    for want, got in zip(expected["problems"], reported, strict=True):
        assert (got["file"], got["line"], got["column"]) == (
            want["file"],
            want["line"],
            want["column"],
        ), got
        assert want["message"] in got["message"], got


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", CASES)
def test_broken_file_is_refused_at_its_place(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS / case)
    for name in UNSET:
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(main, ["validate", _expected(case)["path"], "--format", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    _check(case, result.exit_code, result.output)


SUBPROCESS_CASES = [case for case in CASES if _expected(case).get("subprocess")]


@pytest.mark.parametrize("case", SUBPROCESS_CASES)
def test_broken_file_is_refused_by_the_real_command(case: str) -> None:
    environment = {key: value for key, value in os.environ.items() if key not in UNSET}
    environment["PYTHONPATH"] = str(REPOSITORY)
    completed = subprocess.run(
        [sys.executable, "-m", "reconciler", "validate", _expected(case)["path"], "--format=json"],
        cwd=CORPUS / case,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in completed.stderr
    _check(case, completed.returncode, completed.stdout)


def test_some_cases_run_as_real_subprocesses() -> None:
    assert len(SUBPROCESS_CASES) >= 4
