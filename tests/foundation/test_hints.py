"""Hints a user copies run as written, and logging options work wherever people put them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.cli import ROOT
from tests.cli import reconciler as run

QUICKSTART = ROOT / "examples" / "quickstart.yaml"


def _hint(stderr: str, prefix: str) -> list[str]:
    """The command a hint line prints after `prefix`, split as a shell would."""
    (line,) = [line for line in stderr.splitlines() if prefix in line]
    return shlex.split(line.split(prefix, 1)[1])


def test_the_saved_plan_hint_applies_the_plan_as_written(tmp_path: Path) -> None:
    sandbox = ["--sandbox", "--sandbox-db", str(tmp_path / "my sandbox.db")]
    saved = run("plan", *sandbox, str(QUICKSTART), "--out", "plan.json", cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    command = _hint(saved.stderr, "apply it with: ")
    assert command[:2] == ["reconciler", "apply"] and "--sandbox" in command
    applied = run(*command[1:], cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert "Apply complete: 3 applied." in applied.stdout


def test_the_export_hint_plans_the_same_account(tmp_path: Path) -> None:
    sandbox = ["--sandbox", "--sandbox-db", str(tmp_path / "sandbox.db")]
    exported = run("export", *sandbox, "--out", "people.yaml", cwd=tmp_path)
    assert exported.returncode == 2, exported.stderr  # placeholders to fill
    *_, plan = " ".join(_hint(exported.stderr, "Next: ")).split(" && ")
    assert shlex.split(plan)[:3] == ["reconciler", "plan", "--sandbox"]
    assert "--sandbox-db" in plan


def test_log_options_work_after_the_command_too(tmp_path: Path) -> None:
    for args in (
        ["--log-level", "info", "validate", str(QUICKSTART)],
        ["validate", str(QUICKSTART), "--log-level", "info"],
        ["validate", "--log-format", "json", str(QUICKSTART), "--log-level", "INFO"],
    ):
        result = run(*args, cwd=tmp_path)
        assert result.returncode == 0, (args, result.stderr)
    planned = run(
        "plan", "--sandbox", "--sandbox-db", str(tmp_path / "s.db"), str(QUICKSTART),
        "--log-level", "info", "--log-format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    assert re.search(r'"event": "planned"', planned.stderr), planned.stderr
    quiet = run("plan", "--sandbox", "--sandbox-db", str(tmp_path / "s.db"), str(QUICKSTART))
    assert '"planned"' not in quiet.stderr


def test_every_hint_that_says_report_it_says_where() -> None:
    """'and report it' stopped short (issue 50): each such hint names the issue tracker."""
    from reconciler._version import ISSUE_TRACKER

    assert "issue tracker" in ISSUE_TRACKER and "https://" in ISSUE_TRACKER
    found = []
    for path in sorted((ROOT / "reconciler").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if re.search(r"report (it|this)\b", line):
                found.append(path.name)
                near = "\n".join(lines[number : number + 2])
                assert "{ISSUE_TRACKER}" in near, f"{path}:{number + 1}: {line.strip()}"
    assert len(found) >= 2  # the internal error's hint, and adopt's
