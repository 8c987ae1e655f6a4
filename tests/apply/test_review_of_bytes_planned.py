"""A saved plan's review is of the bytes its plan was made from, not of the files when saved.

`plan --out` recorded the digest of the files as it read them again when saving: a file changed
while the account was read (the plan reflecting the earlier text) was signed as reviewed in its
new form, and the merge's `apply PLAN --expect-files` took the plan for the merged files.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import httpx

from reconciler.sandbox import SandboxServer
from tests.apply.support import QUICKSTART, cli, cli_env, request_seq
from tests.cli import ROOT

PLAN_KEY = "review-of-bytes-plan-key-0123456789abcdef"
LATENCY_MS = 1500  # each request: the plan reads the account for seconds after the load


def _plan_while_the_file_changes(server: SandboxServer, file: Path, out: Path, new: str) -> None:
    """`plan FILE --out OUT`, with FILE rewritten as `new` once the plan has loaded it."""
    httpx.post(f"{server.base_url}/_sandbox/faults", json={"latency_ms": LATENCY_MS})
    command = [sys.executable, "-m", "reconciler", "--log-level", "info", "--log-format", "json"]
    command += ["plan", str(file), "--out", str(out)]
    env = cli_env(server, RECONCILER_PLAN_KEY=PLAN_KEY)
    with subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as running:
        assert running.stderr is not None
        said = []
        for line in running.stderr:
            said.append(line)
            if '"loaded"' in line:
                file.write_text(new, encoding="utf-8")  # the account is still being read
                break
        rest = running.communicate(timeout=120)
    httpx.post(f"{server.base_url}/_sandbox/faults", json={})
    assert running.returncode == 0, "".join(said) + rest[1]
    assert file.read_text(encoding="utf-8") == new, "the file was not changed during the plan"


def test_a_file_changed_while_planned_is_not_signed_as_reviewed(
    demo: SandboxServer, tmp_path: Path
) -> None:
    planned = QUICKSTART.read_text(encoding="utf-8")
    changed = planned.replace("Katherine", "Kathryn")
    assert changed != planned
    folder = tmp_path / "workforce"
    folder.mkdir()
    shutil.copy(QUICKSTART, folder / "workforce.yaml")
    out = tmp_path / "plan.json"

    _plan_while_the_file_changes(demo, folder / "workforce.yaml", out, changed)
    before = request_seq(demo)
    merged = cli(
        "apply", str(out), "--expect-files", str(folder),
        server=demo, RECONCILER_PLAN_KEY=PLAN_KEY,
    )  # fmt: skip

    said = merged.stdout + merged.stderr
    assert merged.returncode != 0, said
    assert "desired-state files differ" in said, said
    writes = httpx.get(f"{demo.base_url}/_sandbox/requests", params={"since": before}).json()
    assert [entry for entry in writes if entry["method"] != "GET"] == [], said

    # The plan is of the bytes it read: the files as planned pass the same check.
    (folder / "workforce.yaml").write_text(planned, encoding="utf-8")
    same = cli(
        "apply", str(out), "--expect-files", str(folder), "--auto-approve",
        server=demo, RECONCILER_PLAN_KEY=PLAN_KEY,
    )  # fmt: skip
    assert same.returncode == 0, same.stdout + same.stderr
    assert "desired-state files differ" not in same.stdout + same.stderr
