"""The workflows of examples/github/accounts/, run as they are against the sandbox and a fake
GitHub: a pull request planned one job per account, one comment; the merge applied per
account; the drift check over every account, one issue per account.

Two clients of the sandbox are the accounts `eu` and `us`; each job is given only the secrets
of the environment its `environment:` names (tests/gitops/workflow_runner.py), and the
sandbox's request log shows which client each request came from.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.sandbox import SandboxServer
from tests.gitops.fake_github import FakeGitHub, pull_request, workflow_run
from tests.gitops.workflow_runner import JobRun, Runner
from tests.sandbox.support import ClientAccess, Controls, invitation, service_client

pytest.importorskip(
    "reconciler.accounts", reason="the accounts file (issue 31) is not in this tree yet"
)

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "github" / "accounts"
TOKEN = "ghs_" + secrets.token_urlsafe(27)
PR = 31
KEYS = {"eu": "e" * 40, "us": "u" * 40}
GIT = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull,
}  # fmt: skip


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True, text=True, check=True, env={**os.environ, **GIT},
    )  # fmt: skip
    return done.stdout.strip()


def state(workers: list[str]) -> str:
    body = "".join(
        f"  - externalId: {external_id}\n    typeOfWorker: Worker\n    workerName: Ada\n"
        f"    workerSurname: Lovelace\n    workerEmail: {external_id.lower()}@example.com\n"
        "    countryIso: GB\n"
        for external_id in workers
    )
    workers = body or "  []\n"
    return f'version: 1\nscope:\n  externalIdPrefix: "W-"\nworkers:\n{workers}'


CLIENT_IDS: dict[str, int] = {}  # the accounts' client ids, as the `clients` fixture made them


def accounts_file(eu_url: str, us_url: str) -> str:
    """A saved plan names its client (issue 30): each entry says it (`clientId`)."""
    return (
        f"version: 1\naccounts:\n"
        f"  - name: eu\n    path: accounts/eu\n    baseUrl: {eu_url}\n"
        f"    tokenEnv: RECONCILER_TOKEN_EU\n    clientId: {CLIENT_IDS['eu']}\n"
        f"  - name: us\n    path: accounts/us\n    baseUrl: {us_url}\n"
        f"    tokenEnv: RECONCILER_TOKEN_US\n    clientId: {CLIENT_IDS['us']}\n"
    )


def unowned_worker(
    sandbox: SandboxServer, client: ClientAccess, external_id: str | None = None
) -> None:
    """A worker invited in the account in the service's screens, in no file: by default one
    its files do not own (no externalId in their scope), else with `external_id`."""
    item = invitation()
    if external_id is not None:
        item |= {"externalId": external_id, "workerEmail": f"{external_id.lower()}@example.com"}
    with service_client(sandbox.base_url, client.token) as api:
        answer = api.post("/contract/workers/inviteWorkersBulkLocked", json=[item])
    assert answer.is_success, answer.text


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN) as fake:
        yield fake


@pytest.fixture
def clients(controls: Controls) -> dict[str, ClientAccess]:
    made = {name: controls.create_client(name=name.upper()) for name in ("eu", "us")}
    CLIENT_IDS.update({name: access.client_id for name, access in made.items()})
    return made


@pytest.fixture
def repo(tmp_path: Path, sandbox: SandboxServer, clients: dict[str, ClientAccess]) -> Path:
    """The repository: main with both accounts, empty; nothing checked out of it but clones."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    commit(repo, {
        "reconciler.yaml": accounts_file(sandbox.base_url, sandbox.base_url),
        "accounts/eu/workforce.yaml": state([]),
        "accounts/us/workforce.yaml": state([]),
    }, "two accounts")  # fmt: skip
    return repo


@pytest.fixture
def runner(
    tmp_path: Path, repo: Path, clients: dict[str, ClientAccess], github: FakeGitHub
) -> Runner:
    environments = {
        f"{kind}-{name}": secrets_of(
            {f"RECONCILER_TOKEN_{name.upper()}": clients[name].token}, KEYS[name]
        )
        for kind in ("reconciler", "production")
        for name in ("eu", "us")
    }
    applied(github, git(repo, "rev-parse", "main"), "eu", "us")
    github.state.remote = repo  # where GitHub says the default branch is
    return Runner(tmp_path / "runs", repo, environments, TOKEN, github.api_url)


def secrets_of(variables: dict[str, str], plan_key: str) -> dict[str, str]:
    """An account environment's secrets as an administrator sets them: the account's variables
    in the one secret RECONCILER_SECRETS (a JSON object), and the plan key."""
    return {"RECONCILER_SECRETS": json.dumps(variables), "RECONCILER_PLAN_KEY": plan_key}


def variables_in(runner: Runner, environment: str) -> dict[str, str]:
    """The account's variables the environment's RECONCILER_SECRETS holds."""
    found = json.loads(runner.environments[environment]["RECONCILER_SECRETS"])
    assert isinstance(found, dict)
    return found


def set_variables(runner: Runner, environment: str, variables: dict[str, str]) -> None:
    runner.environments[environment]["RECONCILER_SECRETS"] = json.dumps(variables)


#: Who makes a record: the apply job, with its workflow's GITHUB_TOKEN.
ACTIONS = {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}


def applied(github: FakeGitHub, sha: str, *names: str) -> None:
    """Record `names` as applied at `sha`: each a deployment of task deploy:reconciler in
    production-<name> with a success status, as an earlier apply run leaves it."""
    for name in names:
        deployment_id = 8_000_000 + len(github.state.deployments)
        github.state.deployments.append({
            "id": deployment_id, "sha": sha, "ref": sha, "task": "deploy:reconciler",
            "environment": f"production-{name}", "payload": {"pull_request": None},
            "created_at": "2026-11-20T12:00:00Z", "creator": ACTIONS,
        })  # fmt: skip
        github.state.deployment_statuses[deployment_id] = [
            {"id": deployment_id + 1, "state": "success", "description": "applied: at start",
             "creator": ACTIONS}
        ]  # fmt: skip


def clients_seen(controls: Controls, since: int) -> set[int | None]:
    return {entry["client_id"] for entry in controls.requests(since)}


def live(sandbox: SandboxServer, client: ClientAccess) -> list[str]:
    with service_client(sandbox.base_url, client.token) as api:
        answer = api.get("/contract/workers/list")
    answer.raise_for_status()
    return sorted(w["externalId"] for w in answer.json()["content"] if w.get("externalId"))


PLAN_WORKFLOW = ".github/workflows/reconciler-accounts-plan.yml"


def plan_pull_request(
    github: FakeGitHub,
    runner: Runner,
    repo: Path,
    branch: str,
    files: dict[str, str],
    *,
    pr: int = PR,
    run_id: str = "5001",
    pull_state: str = "open",
    pull_head: str | None = None,
) -> tuple[str, dict[str, list[JobRun]]]:
    """Push `branch` with `files` as pull request `pr`, and dispatch the plan workflow on main
    for its head, as run `run_id`; GitHub says the pull request is `pull_state`, at its head
    (or at `pull_head`, a newer push)."""
    main = git(repo, "rev-parse", "main")
    git(repo, "checkout", "--quiet", "-b", branch)
    head = commit(repo, files, branch)
    git(repo, "checkout", "--quiet", "main")
    github.state.pulls[pr] = pull_request(pr, pull_head or head, state=pull_state)
    event = {"repository": {"default_branch": "main"}}
    inputs = {"pull-request": str(pr), "head-sha": head}
    return head, runner.run(FOLDER / "reconciler-accounts-plan.yml", sha=main, event=event,
                            inputs=inputs, run_id=run_id)  # fmt: skip


def merge(
    runner: Runner,
    repo: Path,
    github: FakeGitHub,
    branch: str,
    head: str,
    *,
    more_artifacts: tuple[dict[str, Any], ...] = (),
) -> dict[str, list[JobRun]]:
    """Merge `branch` (planned at `head`) into main, and run the apply workflow for the push:
    GitHub knows the pull request of the merge, the plan run (5001, dispatched on main at the
    commit before the merge) and its joined artifact (and `more_artifacts`)."""
    before = git(repo, "rev-parse", "main")
    git(repo, "merge", "--quiet", "--no-ff", branch, "-m", "merge")
    merged = git(repo, "rev-parse", "main")
    github.state.commit_pulls[merged] = [
        {"number": PR, "merged_at": "2026-11-26T10:00:00Z", "merge_commit_sha": merged,
         "head": {"sha": head}}
    ]  # fmt: skip
    github.state.runs[5001] = workflow_run(5001, before, path=PLAN_WORKFLOW)
    github.state.default_branch_commits |= {before, merged}
    github.state.artifacts = [
        {"id": 1, "name": f"reconciler-plans-{head}", "expired": False,
         "created_at": "2026-11-26T09:00:00Z",
         "workflow_run": {"id": 5001, "head_branch": "main", "head_sha": before}},
        *more_artifacts,
    ]  # fmt: skip
    event = {"before": before, "repository": {"default_branch": "main"}}
    return runner.run(FOLDER / "reconciler-accounts-apply.yml", sha=merged, event=event, inputs={})


def test_a_pull_request_is_planned_per_account_in_its_environment_and_applied_at_merge(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    since = controls.last_seq()
    head, runs = plan_pull_request(github, runner, repo, "hire", {"accounts/eu/workforce.yaml":
                                                          state(["W-1"])})  # fmt: skip

    assert [run.returncode for runs_ in runs.values() for run in runs_] == [0, 0, 0], runs
    assert runs["accounts"][0].outputs["names"] == "eu"  # us is not changed
    assert [run.environment for run in runs["plan"]] == ["reconciler-eu"]
    assert clients_seen(controls, since) == {clients["eu"].client_id}
    (comment,) = github.state.comments[PR]
    assert comment["body"].startswith('<!-- reconciler:plan key="accounts" -->\n')
    assert "W-1" in comment["body"] and "eu" in comment["body"]
    assert f"Planned at commit {head} of pull request #{PR}." in comment["body"]
    joined = runner.artifacts[f"reconciler-plans-{head}"]
    assert sorted(p.name for p in (joined / "plans").iterdir()) == ["eu.json"]
    review = json.loads((joined / "plans" / "eu.json").read_text())["review"]
    assert (review["pull_request"], review["head_sha"]) == (PR, head)
    for kept in joined.rglob("*.*"):  # the artifact outlives the run: no token in it
        text = kept.read_text()
        assert all(client.token not in text for client in clients.values()) and TOKEN not in text

    # The merge: the reviewed plan of eu is applied in production-eu, us is left alone.
    since = controls.last_seq()
    runs = merge(runner, repo, github, "hire", head)

    assert [run.returncode for runs_ in runs.values() for run in runs_] == [0, 0, 0], runs
    (apply,) = runs["apply"]
    assert apply.environment == "production-eu"
    assert "eu: the reviewed plan was applied" in apply.logs[-1]
    assert clients_seen(controls, since) == {clients["eu"].client_id}
    assert live(sandbox, clients["eu"]) == ["W-1"] and live(sandbox, clients["us"]) == []


@pytest.mark.parametrize(
    ("pull_state", "moved", "said"),
    [
        ("closed", False, "pull request #31 is closed, not open: nothing was planned"),
        ("open", True, "is not the head of pull request #31 (its head is " + "f" * 40),
    ],
    ids=["closed", "a newer push"],
)
def test_only_the_open_pull_request_s_head_is_planned(
    runner: Runner,
    repo: Path,
    controls: Controls,
    github: FakeGitHub,
    pull_state: str,
    moved: bool,
    said: str,
) -> None:
    """The plan workflow checks the head with `reconciler github pull-head`, as the
    single-account one does: a closed pull request, or a head a newer push replaced, is
    refused before any account's job runs."""
    since = controls.last_seq()
    _, runs = plan_pull_request(
        github, runner, repo, "hire", {"accounts/eu/workforce.yaml": state(["W-1"])},
        pull_state=pull_state, pull_head="f" * 40 if moved else None,
    )  # fmt: skip

    (accounts,) = runs["accounts"]
    assert accounts.returncode == 1
    assert said in accounts.logs[-1], accounts.logs
    assert runs["plan"] == [] and runs["comment"] == []
    assert controls.requests(since) == [] and PR not in github.state.comments


def test_a_signed_plan_uploaded_by_another_branch_s_run_is_not_applied(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """A branch's own workflow run (6001) uploads, under the reviewed artifact's name and
    after it, a validly signed plan of eu made for another pull request (W-666): the merge
    takes the plan workflow's run on main only, and applies the reviewed W-1."""
    sneak = {"accounts/eu/workforce.yaml": state(["W-666"])}
    other, _ = plan_pull_request(github, runner, repo, "sneak", sneak, pr=32, run_id="5002")
    head, _ = plan_pull_request(github, runner, repo, "hire", {"accounts/eu/workforce.yaml":
                                                       state(["W-1"])})  # fmt: skip
    name = f"reconciler-plans-{head}"
    forged = runner.workdir / "forged" / name
    shutil.copytree(runner.uploaded[("5002", f"reconciler-plans-{other}")], forged)
    runner.uploaded[("6001", name)] = forged
    github.state.runs[6001] = workflow_run(6001, other, branch="sneak", path=PLAN_WORKFLOW)
    forged_artifact = {
        "id": 2, "name": name, "expired": False, "created_at": "2026-11-26T09:30:00Z",
        "workflow_run": {"id": 6001, "head_branch": "sneak", "head_sha": other},
    }  # fmt: skip

    runs = merge(runner, repo, github, "hire", head, more_artifacts=(forged_artifact,))

    (apply,) = runs["apply"]
    assert apply.matrix["run-id"] == "5001"
    assert apply.returncode == 0, apply.logs
    assert "eu: the reviewed plan was applied" in apply.logs[-1]
    assert live(sandbox, clients["eu"]) == ["W-1"]


def test_another_pull_request_s_signed_plan_in_the_reviewed_folder_is_not_applied(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """eu's plan in the reviewed artifact is replaced by eu's validly signed plan of pull
    request 32 (W-666): planned for another pull request, commit and files, it is not applied
    as saved; the merged files' plan (W-1) makes other changes, so nothing is applied and the
    pull request is told why."""
    sneak = {"accounts/eu/workforce.yaml": state(["W-666"])}
    other, _ = plan_pull_request(github, runner, repo, "sneak", sneak, pr=32, run_id="5002")
    head, _ = plan_pull_request(github, runner, repo, "hire", {"accounts/eu/workforce.yaml":
                                                       state(["W-1"])})  # fmt: skip
    swapped = runner.uploaded[("5002", f"reconciler-plans-{other}")] / "plans" / "eu.json"
    shutil.copy(swapped, runner.uploaded[("5001", f"reconciler-plans-{head}")] / "plans")

    runs = merge(runner, repo, github, "hire", head)

    (apply,) = runs["apply"]
    assert apply.returncode == 1
    assert "pull request #32 at commit " + other in apply.logs[-1]
    assert "eu: the plan at merge differs from the reviewed plan" in apply.logs[-1]
    refused = [c for c in github.state.comments[PR] if c["body"].startswith(
        '<!-- reconciler:apply key="eu" -->')]  # fmt: skip
    assert len(refused) == 1 and "W-666" in refused[0]["body"]
    assert live(sandbox, clients["eu"]) == []


def test_the_pull_request_s_reconciler_yaml_cannot_send_a_token_elsewhere(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """A pull request points eu at a server of its own: the plan uses the default branch's
    entry, so eu's token goes to eu's service only, and the pull request is warned."""
    since = controls.last_seq()
    _, runs = plan_pull_request(github, runner, repo, "elsewhere", {
        "reconciler.yaml": accounts_file(github.api_url, sandbox.base_url),
        "accounts/eu/workforce.yaml": state(["W-2"]),
    })  # fmt: skip

    assert runs["accounts"][0].outputs["names"] == "eu"
    assert "This pull request changes reconciler.yaml" in runs["accounts"][0].logs[-1]
    assert [run.returncode for run in runs["plan"]] == [0]
    assert all(clients["eu"].token not in str(request) for request in github.requests)
    assert clients_seen(controls, since) == {clients["eu"].client_id}
    assert "W-2" in github.state.comments[PR][0]["body"]


def test_drift_of_a_chunked_fleet_opens_one_issue_per_account(
    runner: Runner,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """RECONCILER_CHUNK: both accounts in one job, in the fleet's environment `reconciler`."""
    unowned_worker(sandbox, clients["us"])  # drift with --strict
    runner.variables["RECONCILER_CHUNK"] = "2"
    runner.environments["reconciler"] = secrets_of(
        {**variables_in(runner, "reconciler-eu"), **variables_in(runner, "reconciler-us")},
        KEYS["us"],
    )
    main = subprocess.run(["git", "-C", str(runner.remote), "rev-parse", "main"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip

    runs = runner.run(FOLDER / "reconciler-accounts-drift.yml", sha=main, event={}, inputs={})

    (drift,) = runs["drift"]
    assert drift.matrix == {"accounts": "eu us"} and drift.environment == "reconciler"
    assert drift.returncode == 0, drift.logs
    (issue,) = github.state.issues
    assert issue["body"].startswith('<!-- reconciler:drift key="us" -->')
    assert "us" in issue["title"]


def test_the_drift_mode_is_the_workflow_s_strict_setting(
    runner: Runner,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
    tmp_path: Path,
) -> None:
    """STRICT "false" in the drift step (the single action's `strict: false`): us's worker its
    files do not own is reported, and opens no issue; the workflow as shipped runs --strict,
    and it does (test_drift_of_a_chunked_fleet_opens_one_issue_per_account)."""
    unowned_worker(sandbox, clients["us"])
    shipped = (FOLDER / "reconciler-accounts-drift.yml").read_text()
    assert shipped.count('STRICT: "true"\n') == 1 and '--strict "$STRICT"' in shipped
    lenient = tmp_path / "reconciler-accounts-drift.yml"
    lenient.write_text(shipped.replace('STRICT: "true"\n', 'STRICT: "false"\n'))
    main = subprocess.run(["git", "-C", str(runner.remote), "rev-parse", "main"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip

    runs = runner.run(lenient, sha=main, event={}, inputs={})

    assert [run.returncode for run in runs["drift"]] == [0, 0], [r.logs for r in runs["drift"]]
    assert github.state.issues == []


def test_an_account_whose_environment_lacks_its_secret_fails_alone(
    runner: Runner, sandbox: SandboxServer, controls: Controls, clients: dict[str, ClientAccess]
) -> None:
    """Without its secret in its environment, eu's job fails, naming the variable, and never
    borrows us's token (which another environment holds)."""
    set_variables(runner, "reconciler-eu", {})
    since = controls.last_seq()
    main = subprocess.run(["git", "-C", str(runner.remote), "rev-parse", "main"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip

    runs = runner.run(FOLDER / "reconciler-accounts-drift.yml", sha=main, event={}, inputs={})

    by_account = {run.matrix["account"]: run for run in runs["drift"]}
    assert by_account["eu"].returncode == 1 and by_account["us"].returncode == 0
    assert "RECONCILER\\_TOKEN\\_EU" in by_account["eu"].logs[-1]  # Markdown-escaped
    assert clients_seen(controls, since) <= {clients["us"].client_id}


def push(runner: Runner, repo: Path, files: dict[str, str]) -> dict[str, list[JobRun]]:
    """A push to main of `files` with no pull request: nothing was reviewed."""
    before = git(repo, "rev-parse", "main")
    after = commit(repo, files, "a direct push")
    event = {"before": before, "repository": {"default_branch": "main"}}
    return runner.run(FOLDER / "reconciler-accounts-apply.yml", sha=after, event=event, inputs={})


def test_a_push_with_no_reviewed_plan_applies_nothing_and_fails_only_with_changes(
    runner: Runner, repo: Path, sandbox: SandboxServer, clients: dict[str, ClientAccess]
) -> None:
    nothing = push(runner, repo, {"accounts/us/workforce.yaml": state([]) + "# a comment\n"})
    (us,) = nothing["apply"]
    assert us.matrix["account"] == "us" and us.returncode == 0, us.logs

    changes = push(runner, repo, {"accounts/us/workforce.yaml": state(["W-9"])})
    (us,) = changes["apply"]
    assert us.returncode == 1
    assert "us: no plan reviewed on a pull request" in us.logs[-1]
    assert live(sandbox, clients["us"]) == []


def test_a_merge_whose_plan_changed_is_refused_on_the_pull_request(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    head, _ = plan_pull_request(github, runner, repo, "hire", {"accounts/eu/workforce.yaml":
                                                       state(["W-1", "W-2"])})  # fmt: skip
    with service_client(sandbox.base_url, clients["eu"].token) as api:  # meanwhile, by hand
        answer = api.post(
            "/contract/workers/inviteWorkersBulkLocked",
            json=[invitation(externalId="W-1", workerEmail="w-1@example.com", jobTitle=None)],
        )
    assert answer.is_success
    runs = merge(runner, repo, github, "hire", head)

    (apply,) = runs["apply"]
    assert apply.returncode == 1
    assert "eu: the plan at merge differs from the reviewed plan" in apply.logs[-1]
    refused = [c for c in github.state.comments[PR] if c["body"].startswith(
        '<!-- reconciler:apply key="eu" -->')]  # fmt: skip
    assert len(refused) == 1 and "W-1" in refused[0]["body"]
    assert live(sandbox, clients["eu"]) == ["W-1"]  # W-2 was not invited: nothing applied


def test_a_chunked_fleet_is_planned_and_applied_several_accounts_a_job(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """RECONCILER_CHUNK=2: one job plans eu and us in `reconciler`, one applies both in
    `production`; still one comment, and each account's plan in the joined artifact."""
    runner.variables["RECONCILER_CHUNK"] = "2"
    for kind in ("reconciler", "production"):
        runner.environments[kind] = secrets_of(
            {
                "RECONCILER_TOKEN_EU": clients["eu"].token,
                "RECONCILER_TOKEN_US": clients["us"].token,
            },
            KEYS["eu"],
        )
    head, runs = plan_pull_request(github, runner, repo, "both", {
        "accounts/eu/workforce.yaml": state(["W-1"]), "accounts/us/workforce.yaml": state(["W-2"]),
    })  # fmt: skip

    (plan,) = runs["plan"]
    assert plan.matrix == {"accounts": "eu us"} and plan.environment == "reconciler"
    assert plan.returncode == 0 and runs["comment"][0].returncode == 0, plan.logs
    joined = runner.artifacts[f"reconciler-plans-{head}"]
    assert sorted(p.name for p in (joined / "plans").iterdir()) == ["eu.json", "us.json"]
    (comment,) = github.state.comments[PR]
    assert "W-1" in comment["body"] and "W-2" in comment["body"]

    runs = merge(runner, repo, github, "both", head)

    (apply,) = runs["apply"]
    assert apply.environment == "production" and apply.returncode == 0, apply.logs
    assert live(sandbox, clients["eu"]) == ["W-1"] and live(sandbox, clients["us"]) == ["W-2"]


def test_the_plan_tells_hr_s_invitation_from_the_files_history(
    runner: Runner, sandbox: SandboxServer, clients: dict[str, ClientAccess], github: FakeGitHub
) -> None:
    """HR invited W-9 in eu's service; no version of eu's files listed it. The plan job reads
    the files' history (a checkout of the whole history, as the single action's): its comment
    says W-9 was made in the service and leaves it, never that it will be inactivated."""
    unowned_worker(sandbox, clients["eu"], "W-9")  # in scope, in no version of the files

    _, runs = plan_pull_request(github, runner, runner.remote, "hire", {
        "accounts/eu/workforce.yaml": state(["W-1"]),
    })  # fmt: skip

    assert [run.returncode for run in runs["plan"]] == [0], [r.logs for r in runs["plan"]]
    body = " ".join(github.state.comments[PR][0]["body"].split())
    assert 'worker["W-9"]' in body and "was made in the service" in body
    assert "cannot be told" not in body and "shallow clone" not in body
    assert '- worker["W-9"]' not in body


def test_a_shallow_plan_checkout_says_it_cannot_tell(
    tmp_path: Path,
    runner: Runner,
    github: FakeGitHub,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
) -> None:
    """The plan job's checkout of one commit (as actions/checkout's default): its comment says
    the files' history cannot be told, naming the shallow clone, beside the old rule's
    inactivation of HR's W-9."""
    unowned_worker(sandbox, clients["eu"], "W-9")  # in scope, in no version of the files
    shipped = (FOLDER / "reconciler-accounts-plan.yml").read_text()
    head, plan_job = shipped.split("\n  plan:\n", 1)
    assert plan_job.count("          fetch-depth: 0\n") == 1
    shallow = tmp_path / "reconciler-accounts-plan.yml"
    shallow.write_text(head + "\n  plan:\n" + plan_job.replace("          fetch-depth: 0\n", ""))
    main = git(runner.remote, "rev-parse", "main")
    git(runner.remote, "checkout", "--quiet", "-b", "hire")
    head_sha = commit(runner.remote, {"accounts/eu/workforce.yaml": state(["W-1"])}, "hire")
    git(runner.remote, "checkout", "--quiet", "main")
    github.state.pulls[PR] = pull_request(PR, head_sha)
    event = {"repository": {"default_branch": "main"}}
    inputs = {"pull-request": str(PR), "head-sha": head_sha}

    runs = runner.run(shallow, sha=main, event=event, inputs=inputs)

    assert [run.returncode for run in runs["plan"]] == [0], [r.logs for r in runs["plan"]]
    body = " ".join(github.state.comments[PR][0]["body"].split())
    assert '- worker["W-9"] will be inactivated' in body
    assert "cannot be told (the checkout is a shallow clone (fetch-depth: 0 fetches it))" in body
