"""The single action's drift mode plans the adoption pull request it opens (issue 49, item 2):
a pull request opened with the workflow's own token starts no plan workflow, so the drift step
posts its plan note (the note `reconciler comment PATH [--key KEY]` gives, with its marker) and
sets its plan status (`reconciler/plan`, `reconciler/plan/<key>` with a key) on the pull
request's head. The composite action's drift mode run as it is, in a checkout of a repository
(its `workforce/` folder, as examples/github/reconciler-drift.yml names it), against the
sandbox and the fake GitHub.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from tests.gitops.action_runner import History, Job, run_action
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
from tests.gitops.test_action_apply_order import state
from tests.gitops.test_adoption_pr_runs import hire
from tests.sandbox.support import ClientAccess, Controls

TOKEN = "ghs_" + secrets.token_urlsafe(27)
FILE = "workforce/workforce.yaml"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN) as fake:
        yield fake


@pytest.mark.parametrize("key", ["", "eu"], ids=["no-key", "keyed"])
def test_the_drift_mode_plans_the_adoption_pull_request_it_opens(
    sandbox: SandboxServer, controls: Controls, github: FakeGitHub, tmp_path: Path, key: str
) -> None:
    history = History(tmp_path / "history")
    main = history.commit({FILE: state([])}, "start")
    github.state.remote = history.remote
    checkout = history.checkout(main, tmp_path / "checkout")
    demo = ClientAccess(sandbox.client_id, sandbox.token, 0)
    hire(sandbox, controls, demo, "W-7")  # invited in the service's screens: in no file
    drift = Job(
        inputs={"mode": "drift", "path": "workforce/", "key": key,
                "base-url": sandbox.base_url, "service-token": sandbox.token,
                "github-token": TOKEN, "client-id": str(sandbox.client_id)},
        workdir=tmp_path / "job",
        env={"GITHUB_REPOSITORY": OWNER_REPO, "GITHUB_API_URL": github.api_url,
             "GITHUB_SHA": main},
        cwd=checkout,
    )  # fmt: skip

    done = run_action(drift)

    assert done.failed is None, done.failed
    said = done.step("Check for drift and keep the drift issue")
    assert "was left as it was" not in said.stdout, said.stdout + said.stderr
    (pull,) = github.state.pulls.values()
    branch = f"reconciler/adopt-{key or 'default'}"
    assert pull["head"]["ref"] == branch
    head = github.state.refs[branch]
    assert "W-7" in github.branch_files(branch)[FILE]
    (note,) = [c["body"] for c in github.state.comments[pull["number"]]]
    marker = f'<!-- reconciler:plan key="{key}" -->' if key else "<!-- reconciler:plan -->"
    assert note.startswith(marker + "\n"), note
    assert f"Planned at commit {head} of pull request #{pull['number']}, by the drift job" in note
    assert "### reconciler plan" in note and "No changes" in note  # W-7 is in its files
    (status,) = github.state.statuses[head]
    context = f"reconciler/plan/{key}" if key else "reconciler/plan"
    assert (status["context"], status["state"]) == (context, "success")
    assert status["description"] == "planned by the drift job"
    assert status["target_url"] == f"https://github.com/{OWNER_REPO}/actions/runs/7001"
    assert (checkout / FILE).read_text() == state([])  # the checkout is left as it was
