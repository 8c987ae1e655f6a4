"""A reader that leaves early (`reconciler ... | head`) ends the command quietly: no traceback
and no "internal error", whether the pipe breaks while the command writes or at its exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

COMMANDS = {
    "validate": ["validate", "examples/quickstart.yaml"],
    "schema (a large output)": ["schema"],
    "--help": ["--help"],
    "export against the embedded sandbox": ["export", "--sandbox"],
    "the JSON plan, written as it is made": [
        "plan",
        "--sandbox",
        str(ROOT / "examples" / "quickstart.yaml"),
        "--format",
        "json",
    ],
}


@pytest.mark.parametrize("arguments", list(COMMANDS.values()), ids=list(COMMANDS))
def test_a_closed_output_is_no_error(arguments: list[str], tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte is written
    try:
        result = subprocess.run(
            [sys.executable, "-m", "reconciler", *arguments],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path if "--sandbox" in arguments else ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
    finally:
        os.close(write)
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
    assert "BrokenPipe" not in result.stderr
    assert result.returncode in (0, 1), result.stderr
