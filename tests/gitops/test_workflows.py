"""The workflow files users copy, the action, and the pre-commit hook are valid and safe.

GitHub's schemas come with check-jsonschema (`vendor.github-workflows`, `vendor.github-actions`);
the check runs with every proxy pointed at a closed port, so it cannot be fetching anything.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gitops.action_runner import ACTION, action
from tests.gitops.support import ROOT

EXAMPLES = sorted((ROOT / "examples" / "github").glob("*.yml"))
ACCOUNTS_EXAMPLES = sorted((ROOT / "examples" / "github" / "accounts").glob("*.yml"))
WORKFLOWS = EXAMPLES + ACCOUNTS_EXAMPLES + sorted((ROOT / ".github" / "workflows").glob("*.yml"))
_CLOSED = "http://127.0.0.1:9"
OFFLINE = {name: _CLOSED for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
SECRET_REFERENCE = re.compile(r"\$\{\{ secrets\.[A-Z][A-Z0-9_]* \}\}")


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", f"vendor.{schema}"]
        + [str(file) for file in files],
        capture_output=True,
        text=True,
        env={**os.environ, **OFFLINE, "NO_PROXY": "", "no_proxy": ""},
        timeout=120,
    )


def load(path: Path) -> dict[Any, Any]:
    document = yaml.safe_load(path.read_text())
    assert isinstance(document, dict)
    return document


def test_there_are_examples_for_the_three_jobs() -> None:
    # The pull request's plan is two: a request with no secret, and the default branch's plan;
    # a review sets the approvals' status again, with no secret.
    assert [path.name for path in EXAMPLES] == [
        "reconciler-apply.yml",
        "reconciler-approvals.yml",
        "reconciler-drift.yml",
        "reconciler-plan.yml",
        "reconciler-pull-request.yml",
    ]


def test_workflows_match_githubs_schema() -> None:
    result = check_jsonschema("github-workflows", *WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_action_matches_githubs_schema() -> None:
    result = check_jsonschema("github-actions", ACTION)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ("github-workflows", "on: push\njobs:\n  a:\n    steps: not-a-list\n"),
        ("github-actions", "name: x\ndescription: y\nruns:\n  using: composite\n  steps:\n"
         "    - run: echo missing shell\n"),
    ],
)  # fmt: skip
def test_the_schema_check_does_fail_a_broken_file(schema: str, text: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(text)
    assert check_jsonschema(schema, broken).returncode != 0


def _strings(node: Any, key: str = "") -> list[tuple[str, str]]:
    if isinstance(node, dict):
        return [pair for k, v in node.items() for pair in _strings(v, str(k))]
    if isinstance(node, list):
        return [pair for item in node for pair in _strings(item, key)]
    return [(key, node)] if isinstance(node, str) else []


@pytest.mark.parametrize("path", EXAMPLES + ACCOUNTS_EXAMPLES, ids=lambda path: path.name)
def test_tokens_come_only_from_repository_secrets(path: Path) -> None:
    pairs = _strings(load(path))
    credentials = [(k, v) for k, v in pairs if re.search(r"token|secret|password", k, re.I)]
    assert credentials, "every example passes the service and GitHub tokens"
    for key, value in credentials:
        assert SECRET_REFERENCE.fullmatch(value), f"{key}: {value!r} is not a repository secret"
    assert not any("github.token" in value for _, value in pairs)


def test_the_action_has_no_default_token_and_no_expression_in_a_script() -> None:
    spec = action()
    for name in ("service-token", "github-token"):
        assert spec["inputs"][name]["required"] is True and "default" not in spec["inputs"][name]
    for step in spec["runs"]["steps"]:
        # Inputs reach scripts as environment variables only: no injection, and testable as is.
        assert "${{" not in step.get("run", ""), step.get("name")


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in EXAMPLES
        if p.name not in ("reconciler-pull-request.yml", "reconciler-approvals.yml")
    ],
    ids=lambda p: p.name,
)
def test_examples_give_every_required_input(path: Path) -> None:
    required = {name for name, spec in action()["inputs"].items() if spec.get("required")}
    (job,) = load(path)["jobs"].values()
    (call,) = [
        step
        for step in job["steps"]
        if "reconciler/.github/actions/reconciler@" in str(step.get("uses"))
    ]
    assert required <= set(call["with"]), required - set(call["with"])


def test_applies_and_drift_checks_run_one_at_a_time_per_account() -> None:
    groups = []
    for name in ("reconciler-apply.yml", "reconciler-drift.yml"):
        (job,) = load(ROOT / "examples" / "github" / name)["jobs"].values()
        assert job["concurrency"]["cancel-in-progress"] is False  # never stop an apply midway
        groups.append(job["concurrency"]["group"])
    assert groups[0] == groups[1] and "RECONCILER_ACCOUNT" in groups[0]


@pytest.mark.parametrize(
    ("name", "permissions"),
    [
        ("reconciler-pull-request.yml", {"actions": "write"}),
        # no secret: the reviews, the head's reviewed plan, and the status on the head
        (
            "reconciler-approvals.yml",
            {"actions": "read", "pull-requests": "read", "statuses": "write"},
        ),
        (
            "reconciler-plan.yml",
            {"contents": "read", "pull-requests": "write", "statuses": "write"},
        ),
        (
            # contents: the records of the payruns paid, on the branch reconciler/records
            "reconciler-apply.yml",
            {
                "contents": "write",
                "actions": "read",
                "pull-requests": "write",
                "deployments": "write",
            },
        ),
        # contents and pull-requests: the adoption pull request (docs/adopt.md); statuses:
        # its plan's status, which the drift job sets (no plan workflow runs on it)
        (
            "reconciler-drift.yml",
            {
                "contents": "write",
                "issues": "write",
                "pull-requests": "write",
                "statuses": "write",
                "deployments": "read",
            },
        ),
    ],
)
def test_each_job_asks_only_the_permissions_it_needs(
    name: str, permissions: dict[str, str]
) -> None:
    workflow = load(ROOT / "examples" / "github" / name)
    assert workflow["permissions"] == {}  # nothing by default: each job says what it needs
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == permissions


def validate_manifest(path: Path) -> subprocess.CompletedProcess[str]:
    """pre-commit's own check of a hooks file (`pre-commit validate-manifest`)."""
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_pre_commit_hook_is_what_pre_commit_reads(tmp_path: Path) -> None:
    result = validate_manifest(ROOT / ".pre-commit-hooks.yaml")
    assert result.returncode == 0, result.stdout + result.stderr

    broken = tmp_path / "hooks.yaml"
    broken.write_text("- id: reconciler-validate\n  entry: reconciler validate\n")
    refused = validate_manifest(broken)
    assert refused.returncode == 1 and "Missing required key: name" in refused.stdout

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["entry"] == "reconciler validate --no-env" and hook["language"] == "python"
    assert hook["pass_filenames"] is False  # the path comes from `args`: the state is a whole
    assert re.compile(hook["files"]).search("workforce/team.yaml")


def test_the_pre_commit_hook_validates_a_directory(tmp_path: Path) -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    command = hook["entry"].split()[1:]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    good = subprocess.run(
        [sys.executable, "-m", "reconciler", *command, str(ROOT / "examples" / "large-company")],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    (tmp_path / "bad.yaml").write_text("version: 1\nworkers:\n  - externalId: X\n")
    bad = subprocess.run(
        [sys.executable, "-m", "reconciler", *command, str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert good.returncode == 0, good.stdout + good.stderr
    assert bad.returncode == 1 and "bad.yaml:3:" in bad.stdout


def _hook(*arguments: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The hook's entry as pre-commit runs it (`PRE_COMMIT=1`), with `args` appended."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    command = [*hook["entry"].split()[1:], *hook.get("args", []), *arguments]
    environ = {
        key: value for key, value in os.environ.items() if not key.startswith("WEBHOOK_")
    } | {"PYTHONPATH": str(ROOT), "PRE_COMMIT": "1", **env}
    return subprocess.run(
        [sys.executable, "-m", "reconciler", *command],
        capture_output=True, text=True, env=environ, timeout=60,
    )  # fmt: skip


def test_the_hook_without_args_says_what_to_add() -> None:
    result = _hook()
    assert result.returncode == 1
    assert "the reconciler-validate hook needs the path of your desired state" in result.stderr
    assert "args: [workforce/]" in result.stderr and "Usage:" not in result.stderr


def test_the_hook_checks_variable_names_without_their_values(tmp_path: Path) -> None:
    example = ROOT / "examples" / "webhook-secret-headers.yaml"
    assert _hook(str(example)).returncode == 0  # no WEBHOOK_* variable is set
    broken = tmp_path / "desired.yaml"
    broken.write_text(
        example.read_text().replace("${WEBHOOK_TOKEN}", "${WEBHOOK TOKEN}", 1), encoding="utf-8"
    )
    result = _hook(str(broken))
    assert result.returncode == 1 and "desired.yaml:13:" in result.stdout
