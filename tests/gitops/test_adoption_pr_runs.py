"""The drift workflow proposes what changed live as a pull request, run as it is
(examples/github/accounts/reconciler-accounts-drift.yml) against the sandbox and a fake GitHub:
opened on `reconciler/adopt-<account>`, linked from the drift issue, updated when the account
changes again, closed (its branch deleted) when there is nothing left to adopt."""

from __future__ import annotations

from pathlib import Path

from reconciler.sandbox import SandboxServer
from tests.gitops import test_accounts_workflow_runs as github_runs
from tests.gitops.fake_github import FakeGitHub
from tests.gitops.test_accounts_workflow_runs import FOLDER, commit, git, state
from tests.gitops.workflow_runner import Runner
from tests.sandbox.support import ClientAccess, Controls, invitation, service_client

DRIFT = FOLDER / "reconciler-accounts-drift.yml"
github, clients, repo, runner = (
    github_runs.github,
    github_runs.clients,
    github_runs.repo,
    github_runs.runner,
)
BRANCH = "reconciler/adopt-us"


def hire(
    sandbox: SandboxServer, controls: Controls, client: ClientAccess, external_id: str
) -> None:
    """A worker invited in the service's own screens, who has answered: in no file."""
    email = f"{external_id.lower()}@example.com"
    with service_client(sandbox.base_url, client.token) as api:
        item = invitation(externalId=external_id, workerEmail=email, jobTitle=None)
        assert api.post("/contract/workers/inviteWorkersBulkLocked", json=[item]).is_success
        listed = api.get("/contract/workers/list").json()["content"]
    (agreement,) = [w for w in listed if w["externalId"] == external_id]
    controls.move_agreement(
        agreement["agreementId"], "ACTIVE", firstName="Ada", lastName="Lovelace", countryIso="GB"
    )


def drift_run(runner: Runner, repo: Path) -> None:
    main = git(repo, "rev-parse", "main")
    runs = runner.run(DRIFT, sha=main, event={}, inputs={})
    assert [run.returncode for run in runs["drift"]] == [0, 0], [r.logs for r in runs["drift"]]


def test_the_drift_job_opens_updates_and_closes_one_adoption_pull_request(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    hire(sandbox, controls, clients["us"], "W-7")

    drift_run(runner, repo)

    (pull,) = github.state.pulls.values()
    assert pull["head"]["ref"] == BRANCH and pull["base"]["ref"] == "main"
    assert pull["body"].startswith('<!-- reconciler:adopt key="us" -->')
    body = pull["body"]
    assert body.index("Who is added or removed") < body.index("The diff")
    assert '**added** `worker["W-7"]`' in body
    files = github.branch_files(BRANCH)
    assert list(files) == ["accounts/us/workforce.yaml"]
    assert "  - externalId: W-7\n    typeOfWorker: Worker\n" in files["accounts/us/workforce.yaml"]
    (issue,) = github.state.issues
    assert f"**Proposed:** #{pull['number']}" in issue["body"] and "us" in issue["title"]
    assert "reconciler/adopt-eu" not in github.state.refs  # eu is in sync: nothing proposed
    first_commit = github.state.refs[BRANCH]

    # Nothing changed: the next run leaves the pull request and its branch alone.
    drift_run(runner, repo)
    assert github.state.refs[BRANCH] == first_commit and len(github.state.pulls) == 1

    hire(sandbox, controls, clients["us"], "W-8")
    drift_run(runner, repo)

    (again,) = github.state.pulls.values()
    assert again["number"] == pull["number"] and again["state"] == "open"
    assert '`worker["W-8"]`' in again["body"]
    assert "W-8" in github.branch_files(BRANCH)["accounts/us/workforce.yaml"]
    assert github.state.refs[BRANCH] != first_commit

    # The pull request is merged (its files land on main): the account matches them again.
    commit(repo, github.branch_files(BRANCH), "adopt what changed live")
    drift_run(runner, repo)

    (closed,) = github.state.pulls.values()
    assert closed["state"] == "closed" and BRANCH not in github.state.refs
    assert "Nothing is left to adopt" in github.state.comments[closed["number"]][-1]["body"]
    assert issue["state"] == "closed"
    assert state([]) in (repo / "accounts" / "eu" / "workforce.yaml").read_text()


def _push_onto(github: FakeGitHub, branch: str, path: str, added: str) -> str:
    """Someone who can push branches adds `added` to `path` on `branch`: a commit of theirs."""
    files = dict(github.branch_files(branch))
    files[path] += added
    tree, sha = "7" * 40, "9" * 40
    github.state.trees[tree] = files
    github.state.commits[sha] = {"tree": tree, "parents": [github.state.refs[branch]],
                                 "message": "more pay"}  # fmt: skip
    github.state.refs[branch] = sha
    return sha


def test_a_commit_pushed_onto_the_adoption_branch_is_replaced_and_said(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """Issue 49, item 4: a 9,000.00 payrun pushed onto `reconciler/adopt-<account>` does not
    survive the next drift run under the bot's body: the job puts its own content back, and
    says on the pull request which commit it replaced."""
    hire(sandbox, controls, clients["us"], "W-7")
    drift_run(runner, repo)
    (pull,) = github.state.pulls.values()
    path = "accounts/us/workforce.yaml"
    payrun = (
        "payruns:\n  - id: extra\n    description: extra\n    payments:\n"
        '      - {email: w-7@example.com, amount: "9000.00", description: "bonus"}\n'
    )
    pushed = _push_onto(github, BRANCH, path, payrun)

    drift_run(runner, repo)

    head = github.state.refs[BRANCH]
    assert head != pushed  # the job's own content again (the fake's SHAs have no dates)
    assert "9000.00" not in github.branch_files(BRANCH)[path]
    assert "W-7" in github.branch_files(BRANCH)[path]
    (again,) = github.state.pulls.values()
    assert f"The drift job's commit on `{BRANCH}`: {head}." in again["body"]
    (note,) = [c["body"] for c in github.state.comments[pull["number"]] if "did not" in c["body"]]
    assert f"A commit the drift job did not make was on `{BRANCH}`: {pushed}" in note
    assert f"its commit {head}" in note

    drift_run(runner, repo)  # its own commit again: left alone, nothing more said
    assert github.state.refs[BRANCH] == head
    assert len(github.state.comments[pull["number"]]) == 2  # that note, and the plan note


def test_the_drift_job_plans_the_adoption_pull_request_it_opens(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """Issue 49, item 2: the workflow's token's pull request starts no plan workflow, so the
    drift job posts its plan note (the plan workflow's marker) and its `reconciler/plan`
    status itself, of the branch's commit: the adopted files, planned against the account."""
    hire(sandbox, controls, clients["us"], "W-7")

    drift_run(runner, repo)

    (pull,) = github.state.pulls.values()
    head = github.state.refs[BRANCH]
    (note,) = [c["body"] for c in github.state.comments[pull["number"]]]
    assert note.startswith('<!-- reconciler:plan key="accounts" -->\n'), note
    assert f"Planned at commit {head} of pull request #{pull['number']}, by the drift job" in note
    assert "### reconciler plan: 1 account" in note
    assert "| `us` | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | - | - |" in note  # W-7 is in its files
    (status,) = github.state.statuses[head]
    assert (status["context"], status["state"]) == ("reconciler/plan", "success")
    assert status["description"] == "planned by the drift job"


def keep_bom_and_mode(repo: Path, path: str) -> None:
    """The account's file on main starts with a byte-order mark and is executable."""
    commit(repo, {path: "\ufeff" + state([])}, "a BOM")
    (repo / path).chmod(0o755)
    git(repo, "add", path)
    git(repo, "commit", "--quiet", "-m", "executable")


def test_the_adoption_commit_keeps_a_files_bom_and_its_executable_bit(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """Issue 49, item 7: the pull request's commit keeps the file's BOM and its mode."""
    path = "accounts/us/workforce.yaml"
    keep_bom_and_mode(repo, path)
    hire(sandbox, controls, clients["us"], "W-7")

    drift_run(runner, repo)

    text = github.branch_files(BRANCH)[path]
    assert text.startswith("\ufeffversion: 1\n") and "  - externalId: W-7\n" in text
    assert github.branch_modes(BRANCH)[path] == "100755"
