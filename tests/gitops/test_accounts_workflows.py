"""The workflows for several accounts (examples/github/accounts/) keep each account's secrets in
that account's environment, and run nothing of a pull request where a secret can be read.

The reading of a workflow is in tests/gitops/workflow_trust.py; the table below is what it must
catch and what it must let through, then the real files are read with it, and read again after
each break a careless edit could make, to show the reading catches it there too.
"""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.gitops.gitlab.pipeline import child_pipeline
from tests.gitops.support import ROOT
from tests.gitops.workflow_trust import (
    environment_of,
    findings,
    secrets_in,
    secrets_outside_account_environment,
)

FOLDER = ROOT / "examples" / "github" / "accounts"
WORKFLOWS = sorted(FOLDER.glob("*.yml"))
INSTALL = ROOT / ".github" / "actions" / "reconciler-install" / "action.yml"
PER_ACCOUNT = "${{{{ vars.RECONCILER_CHUNK && '{0}' || format('{0}-{{0}}', matrix.account) }}}}"
SECRET = re.compile(r"\$\{\{ secrets\.([A-Z][A-Z0-9_]*) \}\}")
_RUNS_RECONCILER = re.compile(r"(^|[(\s])reconciler (accounts|validate|plan|comment|apply|drift)\b")


def load(name: str) -> dict[Any, Any]:
    document = yaml.safe_load((FOLDER / name).read_text())
    assert isinstance(document, dict)
    return document


def job(environment: Any = None, **env: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"runs-on": "ubuntu-latest", "steps": [{"run": "true", "env": env}]}
    if environment is not None:
        spec["environment"] = environment
    return spec


TOKEN = {"RECONCILER_TOKEN_EU": "${{ secrets.RECONCILER_TOKEN_EU }}"}
GITHUB = {"GITHUB_TOKEN": "${{ secrets.GITHUB_TOKEN }}"}

CASES = [
    ("the account's plan environment", True, job(PER_ACCOUNT.format("reconciler"), **TOKEN)),
    ("the account's apply environment", True, job(PER_ACCOUNT.format("production"), **TOKEN)),
    ("the account's environment, as a mapping", True,
     job({"name": "${{ format('production-{0}', matrix.account) }}"}, **TOKEN)),
    ("no secret, no environment", True, job(**GITHUB)),
    ("a secret and no environment", False, job(**TOKEN)),
    ("one environment for every account", False, job("production", **TOKEN)),
    ("an environment the pull request's input names", False,
     job("${{ format('production-{0}', inputs.account) }}", **TOKEN)),
    ("a fleet fallback into another prefix", False,
     job("${{ vars.RECONCILER_CHUNK && 'production' || format('reconciler-{0}', matrix.account) }}",
         **TOKEN)),
    ("an account's environment of another kind", False,
     job("${{ format('staging-{0}', matrix.account) }}", **TOKEN)),
]  # fmt: skip


@pytest.mark.parametrize(("case", "safe", "spec"), CASES, ids=[c[0] for c in CASES])
def test_the_reading_tells_an_account_s_environment(case: str, safe: bool, spec: Any) -> None:
    workflow = {"on": "push", "jobs": {"j": spec}}
    assert (secrets_outside_account_environment(workflow) == []) is safe


def test_a_secret_in_the_workflow_s_env_is_in_every_job() -> None:
    workflow = {"on": "push", "env": TOKEN, "jobs": {"j": job(**GITHUB)}}
    assert secrets_outside_account_environment(workflow) != []


def test_the_folder_holds_the_pull_request_plan_apply_and_drift_workflows() -> None:
    assert [path.name for path in WORKFLOWS] == [
        "reconciler-accounts-apply.yml",
        "reconciler-accounts-approvals.yml",  # a review: the approvals' status again
        "reconciler-accounts-drift.yml",
        "reconciler-accounts-plan.yml",
        "reconciler-accounts-pull-request.yml",
    ]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_every_secret_is_in_its_account_s_environment(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text())
    assert secrets_outside_account_environment(workflow) == []
    assert findings(workflow) == []  # and no code of a pull request runs beside one


def _break(name: str, how: str) -> dict[Any, Any]:
    workflow = copy.deepcopy(load(name))
    jobs = workflow["jobs"]
    if how == "no environment":
        del jobs["plan"]["environment"]
    elif how == "one environment":
        jobs["plan"]["environment"] = "reconciler"
    elif how == "a token in the comment job":
        jobs["comment"]["steps"][-2]["env"].update(TOKEN)
    elif how == "a token in the accounts job":
        jobs["accounts"]["steps"][-1]["env"].update(TOKEN)
    return workflow


@pytest.mark.parametrize(
    "how",
    [
        "no environment",
        "one environment",
        "a token in the comment job",
        "a token in the accounts job",
    ],
)
def test_the_reading_catches_a_break_of_the_real_plan_workflow(how: str) -> None:
    assert secrets_outside_account_environment(load("reconciler-accounts-plan.yml")) == []
    assert secrets_outside_account_environment(_break("reconciler-accounts-plan.yml", how)) != []


@pytest.mark.parametrize(
    ("name", "jobs"),
    [
        ("reconciler-accounts-plan.yml", {"plan": "reconciler"}),
        ("reconciler-accounts-apply.yml", {"apply": "production"}),
        ("reconciler-accounts-drift.yml", {"drift": "reconciler"}),
        ("reconciler-accounts-pull-request.yml", {}),
    ],
)
def test_only_the_account_jobs_hold_secrets_and_each_in_its_kind_of_environment(
    name: str, jobs: dict[str, str]
) -> None:
    workflow = load(name)
    for job_name, spec in workflow["jobs"].items():
        if job_name in jobs:
            assert environment_of(spec) == PER_ACCOUNT.format(jobs[job_name])
            assert secrets_in(spec), job_name
            assert "matrix" in spec["strategy"] and spec["strategy"]["fail-fast"] is False
        else:  # finding the accounts, joining the comment: no environment, no secret
            assert "environment" not in spec and secrets_in(spec) == set(), job_name


def _accounts_file_in_the_docs() -> dict[str, Any]:
    text = (ROOT / "docs" / "accounts-ci.md").read_text()
    block = re.search(r"```yaml\n(# reconciler\.yaml.*?)```", text, re.S)
    assert block, "docs/accounts-ci.md shows the reconciler.yaml the workflows are written for"
    document = yaml.safe_load(block[1])
    assert isinstance(document, dict)
    return document


def _variables(accounts: dict[str, Any]) -> set[str]:
    names = {"RECONCILER_PLAN_KEY"}
    for entry in accounts["accounts"]:
        names |= {value for key, value in entry.items() if key.endswith("Env")}
    return names


@pytest.mark.parametrize(
    ("name", "job_name"),
    [
        ("reconciler-accounts-plan.yml", "plan"),
        ("reconciler-accounts-apply.yml", "apply"),
        ("reconciler-accounts-drift.yml", "drift"),
    ],
)
def test_no_workflow_names_an_account_s_secret_only_the_environment_s_one_bundle(
    name: str, job_name: str
) -> None:
    """Adding an account edits reconciler.yaml only (issue 37): the step passes the one secret
    RECONCILER_SECRETS of the job's environment (the account's variables, under the names
    reconciler.yaml gives), the plan key and the GitHub token, and names no account's
    variable; nor does it reach the whole secrets context (`toJSON(secrets)`, `secrets[...]`)."""
    text = (FOLDER / name).read_text()
    assert "toJSON(secrets)" not in text and "secrets[" not in text
    assert set(SECRET.findall(text)) <= {
        "GITHUB_TOKEN",
        "RECONCILER_SECRETS",
        "RECONCILER_PLAN_KEY",
    }
    (step,) = [s for s in load(name)["jobs"][job_name]["steps"] if "RECONCILER_PLAN_KEY" in str(s)]
    assert step["env"]["RECONCILER_SECRETS"] == "${{ secrets.RECONCILER_SECRETS }}"
    assert not (_variables(_accounts_file_in_the_docs()) - {"RECONCILER_PLAN_KEY"}) & set(
        step["env"]
    )


def _scripts(workflow: dict[Any, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(name, step) for name, spec in workflow["jobs"].items() for step in spec["steps"]]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_scripts_take_values_from_env_and_are_valid_bash(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text())
    assert workflow["defaults"]["run"]["shell"] == "bash"  # -o pipefail
    for job_name, step in _scripts(workflow):
        script = step.get("run")
        if script is None:
            continue
        assert "${{" not in script, f"{job_name}: an expression inside a script"
        parsed = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
        assert parsed.returncode == 0, f"{job_name}: {parsed.stderr}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_checkouts_keep_no_credentials(path: Path) -> None:
    for job_name, step in _scripts(yaml.safe_load(path.read_text())):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False, job_name


def test_the_plan_reads_the_pull_request_as_data_with_the_default_branch_s_accounts_file() -> None:
    workflow = load("reconciler-accounts-plan.yml")
    assert set(workflow[True]) == {"workflow_dispatch"}  # the default branch's workflow
    for job_name in ("accounts", "plan"):
        steps = workflow["jobs"][job_name]["steps"]
        trusted, pull_request = [s for s in steps if "checkout@" in str(s.get("uses"))]
        assert "ref" not in trusted["with"]  # the commit this workflow runs at
        assert trusted["with"]["sparse-checkout"] == "/reconciler.yaml"  # the root's only
        assert pull_request["with"]["ref"] == "${{ inputs.head-sha }}"
        assert pull_request["with"]["path"] == "pull-request"
        # The script that reads the pull request's files (the head check reads none of them)
        # writes its reconciler.yaml from the default branch's before anything else runs
        # (reconciler.accounts.pull_request, tests/gitops/test_account_jobs.py).
        (script,) = [
            s["run"]
            for s in steps
            if "run" in s and "reconciler " in s["run"]
            and not any(f"github {name}" in s["run"] for name in ("pull-head", "commit-status"))
        ]  # fmt: skip
        commands = [line for line in script.splitlines() if line.startswith("reconciler ")]
        command = "matrix" if job_name == "accounts" else "plan-accounts"
        assert len(commands) == 1 and commands[0].startswith(f"reconciler github {command} ")
        assert "--pull-request-files pull-request" in script


@pytest.mark.parametrize(
    ("name", "permissions"),
    [
        ("reconciler-accounts-pull-request.yml", {"request": {"actions": "write"}}),
        ("reconciler-accounts-approvals.yml", {
            "approvals": {"actions": "read", "pull-requests": "read", "statuses": "write"}}),
        ("reconciler-accounts-plan.yml", {
            "accounts": {"contents": "read", "pull-requests": "read", "statuses": "write"},
            # pull-requests: the approvals so far (plan --approvals-from)
            "plan": {"contents": "read", "pull-requests": "read"},
            "comment": {"contents": "read", "pull-requests": "write", "statuses": "write"}}),
        ("reconciler-accounts-apply.yml", {
            "accounts": {"contents": "read", "actions": "read", "pull-requests": "read",
                         "deployments": "read"},
            # contents: each payrun's record, on the branch reconciler/records
            "apply": {"contents": "write", "actions": "read", "pull-requests": "write",
                      "deployments": "write"},
            "outcome": {"pull-requests": "write", "deployments": "read"}}),
        ("reconciler-accounts-drift.yml", {
            "accounts": {"contents": "read", "deployments": "read", "pull-requests": "read",
                         "actions": "read"},
            # contents and pull-requests: the adoption pull request (docs/adopt.md); statuses:
            # its plan's status, which the job sets (its token's pull request runs no workflow)
            "drift": {"contents": "write", "issues": "write", "pull-requests": "write",
                      "statuses": "write"}}),
    ],
)  # fmt: skip
def test_each_job_asks_only_the_permissions_it_needs(
    name: str, permissions: dict[str, dict[str, str]]
) -> None:
    workflow = load(name)
    assert workflow["permissions"] == {}
    assert {job_name: spec["permissions"] for job_name, spec in workflow["jobs"].items()} == (
        permissions
    )


def test_applies_and_drift_checks_run_one_at_a_time_per_account() -> None:
    apply = load("reconciler-accounts-apply.yml")["jobs"]["apply"]["concurrency"]
    drift = load("reconciler-accounts-drift.yml")["jobs"]["drift"]["concurrency"]
    assert apply == drift
    assert apply["cancel-in-progress"] is False  # never stop an apply midway
    assert apply["group"].startswith("reconciler-apply-${{ matrix.account || ")
    # Chunked jobs hold several accounts: then whole apply runs go one at a time.
    whole = load("reconciler-accounts-apply.yml")["concurrency"]
    assert "vars.RECONCILER_CHUNK" in whole["group"] and whole["cancel-in-progress"] is False


@pytest.mark.parametrize("name", ["reconciler-accounts-plan.yml", "reconciler-accounts-drift.yml"])
def test_the_matrix_comes_from_one_command_that_reads_the_chunk_variable(name: str) -> None:
    """The names of either shape of the matrix: `reconciler github matrix` prints them
    (tests/gitops/test_account_jobs.py), reading RECONCILER_CHUNK itself."""
    steps = load(name)["jobs"]["accounts"]["steps"]
    (step,) = [step for step in steps if step.get("id") in ("all", "changed")]
    assert step["run"].lstrip().startswith("reconciler github matrix")
    assert step["run"].rstrip().endswith('| tee -a "$GITHUB_OUTPUT"')
    assert step["env"]["RECONCILER_CHUNK"] == "${{ vars.RECONCILER_CHUNK }}"


def test_the_install_action_runs_nothing_of_the_workspace_and_installs_by_hash() -> None:
    spec = yaml.safe_load(INSTALL.read_text())
    installs = []
    for step in spec["runs"]["steps"]:
        assert not str(step.get("uses", "")).startswith("./"), step
        script = step.get("run", "")
        assert "${{" not in script and "GITHUB_WORKSPACE" not in script, step
        assert "working-directory" not in step, step
        installs += [line for line in script.replace("\\\n", " ").splitlines() if "install" in line]
    locked, own = installs
    assert "--require-hashes" in locked
    assert '-r "$GITHUB_ACTION_PATH/../reconciler/requirements.lock"' in locked
    assert "--no-deps" in own and "--no-index" in own and '"$GITHUB_ACTION_PATH/../../.."' in own
    assert set(spec["inputs"]) == {"python-version"}  # no way to install something else


GITLAB = ROOT / "examples" / "gitlab" / "accounts.gitlab-ci.yml"


def _gitlab_schema(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["check-jsonschema", "--builtin-schema", "vendor.gitlab-ci", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_gitlab_pipeline_matches_gitlab_s_schema(tmp_path: Path) -> None:
    result = _gitlab_schema(GITLAB)
    assert result.returncode == 0, result.stdout + result.stderr
    child = tmp_path / "accounts.gitlab-ci.yml"
    child.write_text(child_pipeline(["eu", "us"]))
    result = _gitlab_schema(child)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "broken.gitlab-ci.yml"
    broken.write_text("plan:\n  parallel:\n    matrix: eu\n  script: [true]\n")
    assert _gitlab_schema(broken).returncode != 0


def test_the_gitlab_pipeline_runs_each_account_in_its_own_environment() -> None:
    """The parent lists no account: its child pipeline, written from reconciler.yaml, has one
    job per account and purpose, each in the account's own environment."""
    assert "ACCOUNT" not in GITLAB.read_text()
    accounts = _accounts_file_in_the_docs()["accounts"]
    pipeline = yaml.safe_load(child_pipeline([entry["name"] for entry in accounts]))
    kinds = {"plan": "reconciler", "drift": "reconciler", "apply": "production"}
    for name, kind in kinds.items():
        job = pipeline[name]
        assert job["extends"] == ".every-account"
        assert job["environment"]["name"] == f"{kind}-$ACCOUNT"
    assert pipeline["apply"]["resource_group"] == pipeline["drift"]["resource_group"]
    assert pipeline["apply"]["resource_group"] == "reconciler-$ACCOUNT"
    assert "environment" not in pipeline["comment"] and pipeline["comment"]["needs"] == ["plan"]
    assert "environment" not in pipeline["outcome"]
    (matrix,) = pipeline[".every-account"]["parallel"]["matrix"]
    assert matrix["ACCOUNT"] == [entry["name"] for entry in accounts]
    # Every job reads reconciler.yaml from the default branch before anything else runs.
    for spec in (pipeline, yaml.safe_load(GITLAB.read_text())):
        before = spec["default"]["before_script"]
        assert before[-1].startswith("rm -f reconciler.yaml && git show ")
        assert '"origin/$CI_DEFAULT_BRANCH:reconciler.yaml"' in before[-1]
    scripts = "\n".join(
        str(line) for name in kinds for line in pipeline[name]["script"] if isinstance(line, str)
    )
    for line in scripts.splitlines():
        if re.search(r"(^|\s)reconciler (validate|plan|apply|drift) ", line):
            assert '--account "$ACCOUNT"' in line, line
