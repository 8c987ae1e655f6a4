"""What docs/apply.md says a second apply of a saved plan does, for workers and for payruns:
a plan with worker changes is refused as stale (exit 1, nothing sent); a plan of payruns
alone is judged again, its payruns now paid, and ends `Apply complete: nothing to do.`
(exit 0), paying nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

from reconciler.sandbox import SandboxServer
from tests.apply.support import cli, paylist_posts, request_seq
from tests.cli import ROOT

PLAN_KEY = "second-apply-plan-key-0123456789abcdefgh"
APPLY = (ROOT / "docs" / "apply.md").read_text(encoding="utf-8")


def _twice(server: SandboxServer, folder: Path, path: Path) -> tuple[str, int, str]:
    saved = folder / "plan.json"
    made = cli("plan", str(path), "--out", str(saved), server=server, RECONCILER_PLAN_KEY=PLAN_KEY)
    assert made.returncode == 0, made.stderr
    first = cli("apply", str(saved), server=server, RECONCILER_PLAN_KEY=PLAN_KEY)
    assert first.returncode == 0, first.stdout + first.stderr
    since = request_seq(server)
    again = cli("apply", str(saved), server=server, RECONCILER_PLAN_KEY=PLAN_KEY)
    assert paylist_posts(server, since) == []
    return again.stdout, again.returncode, again.stderr


def test_a_saved_plan_applied_twice_does_what_docs_apply_says(tmp_path: Path) -> None:
    said = " ".join(APPLY.split())
    assert "so it is refused, nothing is sent, and the exit status is 1" in said
    assert "ends `Apply complete: nothing to do.` with exit status 0" in said
    folder = tmp_path / "payroll"
    shutil.copytree(ROOT / "examples" / "payroll", folder)
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml", process_delay_ms=0) as server:
        stdout, status, stderr = _twice(server, tmp_path, folder)  # workers and a payrun
        assert status == 1, stdout + stderr
        assert "Error: the live account changed since the plan was made" in stderr
        # The workers are as the files say now: a new payrun makes a plan of payruns alone.
        payrun = folder / "payruns-2026-11.yaml"
        payrun.write_text(payrun.read_text().replace("2026-11-contractors", "2026-12-contractors"))
        stdout, status, stderr = _twice(server, tmp_path, folder)
        assert status == 0, stdout + stderr
        assert stdout.splitlines()[-1] == "Apply complete: nothing to do."
