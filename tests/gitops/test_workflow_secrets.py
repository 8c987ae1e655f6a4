"""No secret in reach of code a pull request can change: the example workflows and the action.

The reading of a workflow is in tests/gitops/workflow_trust.py; the table below is what it
must catch and what it must let through, then the real files are read with it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gitops.action_runner import ACTION, action
from tests.gitops.support import ROOT
from tests.gitops.workflow_trust import findings

WORKFLOWS = sorted((ROOT / "examples" / "github").rglob("*.yml")) + sorted(
    (ROOT / ".github" / "workflows").glob("*.yml")
)
CHECKOUT = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1"
REMOTE = "OWNER/reconciler/.github/actions/reconciler@ed05d077b570b3be604873be816128011600ac5c"
TOKEN = {"service-token": "${{ secrets.RECONCILER_TOKEN }}"}


def workflow(on: Any, *steps: dict[str, Any], **job: Any) -> dict[str, Any]:
    return {"on": on, "jobs": {"j": {"runs-on": "ubuntu-latest", **job, "steps": list(steps)}}}


def head_checkout(**settings: str) -> dict[str, Any]:
    return {"uses": CHECKOUT, "with": {"ref": "${{ github.event.pull_request.head.sha }}",
                                       **settings}}  # fmt: skip


CASES = [
    # The pull request workflow as it was (issue 22): the branch can edit it and read the token.
    ("pull_request with a secret", False,
     workflow({"pull_request": {}}, {"uses": CHECKOUT}, {"uses": REMOTE, "with": TOKEN})),
    ("pull_request with GITHUB_TOKEN only", True,
     workflow("pull_request", {"run": "gh workflow run x", "env": {
         "GH_TOKEN": "${{ secrets.GITHUB_TOKEN }}"}})),
    ("review trigger with a secret in env", False,
     workflow(["pull_request_review"], {"run": "true"},
              env={"T": "${{ secrets.RECONCILER_TOKEN }}"})),
    ("pull_request_target, head in the root, then run", False,
     workflow("pull_request_target", head_checkout(), {"run": "make plan"},
              {"uses": REMOTE, "with": TOKEN})),
    ("pull_request_target, head as data, pinned action", True,
     workflow("pull_request_target", head_checkout(path="pr", **{"sparse-checkout": "workforce"}),
              {"uses": REMOTE, "with": {**TOKEN, "path": "pr/workforce/"}})),
    ("head as data, then pip install of it", False,
     workflow("pull_request_target", head_checkout(path="pr"),
              {"run": "pip install ./pr", "env": {"T": "${{ secrets.RECONCILER_TOKEN }}"}})),
    ("head as data, then a script inside it", False,
     workflow("pull_request_target", head_checkout(path="pr"),
              {"run": "./plan.sh", "working-directory": "pr"}, {"uses": REMOTE, "with": TOKEN})),
    ("dispatched input ref, then a local action of it", False,
     workflow("workflow_dispatch",
              {"uses": CHECKOUT, "with": {"ref": "${{ inputs.head-sha }}"}},
              {"uses": "./.github/actions/reconciler", "with": TOKEN})),
    ("workflow_run head in the root, then a script", False,
     workflow("workflow_run",
              {"uses": CHECKOUT, "with": {"ref": "${{ github.event.workflow_run.head_sha }}"}},
              {"run": "python build.py", "env": {"T": "${{ secrets.RECONCILER_TOKEN }}"}})),
    ("default branch checkout, local action", True,
     workflow("push", {"uses": CHECKOUT}, {"uses": "./.github/actions/reconciler", "with": TOKEN})),
]  # fmt: skip


@pytest.mark.parametrize(("case", "safe", "document"), CASES, ids=[c[0] for c in CASES])
def test_the_reading_tells_safe_from_unsafe(case: str, safe: bool, document: Any) -> None:
    assert (findings(document) == []) is safe, findings(document)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_no_workflow_lets_pull_request_code_read_a_secret(path: Path) -> None:
    found = findings(yaml.safe_load(path.read_text()))
    assert found == [], "\n".join(f"{path.name}: job {f.job}: {f.why}" for f in found)


def test_the_plan_of_a_pull_request_reads_its_files_as_data_only() -> None:
    plan = yaml.safe_load((ROOT / "examples" / "github" / "reconciler-plan.yml").read_text())
    assert set(plan[True]) == {"workflow_dispatch"}  # the default branch's workflow
    (job,) = plan["jobs"].values()
    assert job["environment"] == "reconciler"  # secrets the default branch alone can use
    checkout, call = job["steps"]
    assert checkout["with"]["path"] == "pull-request"
    assert checkout["with"]["persist-credentials"] is False
    assert call["with"]["path"].startswith("pull-request/")
    assert re.fullmatch(r"OWNER/reconciler/\S+@[0-9a-f]{40}", call["uses"])


def test_the_action_runs_nothing_of_the_workspace_and_installs_by_hash() -> None:
    """The action runs in jobs that hold the token, beside a pull request's files: it never
    executes from the workspace, and installs only what the lock file's hashes allow."""
    installs = []
    for step in action()["runs"]["steps"]:
        assert not str(step.get("uses", "")).startswith("./"), step
        script = step.get("run", "")
        assert "GITHUB_WORKSPACE" not in script and "working-directory" not in step, step
        installs += [line for line in _joined(script) if "pip install" in line]
    assert len(installs) == 2, installs
    locked, own = installs
    assert "--require-hashes" in locked and '-r "$GITHUB_ACTION_PATH/requirements.lock"' in locked
    assert "--no-deps" in own and "--no-index" in own and '"$GITHUB_ACTION_PATH/../../.."' in own
    assert "install" not in action()["inputs"]  # no way to install something else


def _joined(script: str) -> list[str]:
    return script.replace("\\\n", " ").splitlines()


def test_the_apply_job_stays_behind_its_environment() -> None:
    apply = yaml.safe_load((ROOT / "examples" / "github" / "reconciler-apply.yml").read_text())
    (job,) = apply["jobs"].values()
    assert job["environment"] == "production"
    assert str(ACTION).endswith("action.yml")
