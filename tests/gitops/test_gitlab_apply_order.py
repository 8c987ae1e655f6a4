"""Merges land in order and none is lost on GitLab: the pipeline of
examples/gitlab/accounts.gitlab-ci.yml and its child pipeline run as they are, several merges
one after the other, against the sandbox and the fake GitLab (tests/gitops/gitlab_runner.py).

Each account's last successful apply is GitLab's own record: the newest successful deployment
of `production-<name>`, which the runner makes of each apply job as GitLab does (its status the
job's). A pipeline applies each account from there to its commit, not from the push's before; a
retried or late apply whose commit's files are not the default branch's head's is superseded,
applies nothing, and exits 3, so its deployment is not a success. The fixtures (eu and us,
applied at main's first commit) are those of tests/gitops/test_gitlab_accounts_runs.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from tests.gitops import test_gitlab_accounts_runs as gitlab_runs
from tests.gitops.fake_gitlab import FakeGitLab
from tests.gitops.gitlab_runner import GitLabJob, GitLabRunner
from tests.gitops.test_accounts_apply_order import PAYRUN, activate, paylists
from tests.gitops.test_accounts_workflow_runs import commit, git, live, state
from tests.gitops.test_gitlab_accounts_runs import (
    MARKER,
    _branch,
    _common,
    child,
    merge,
    merge_request_pipeline,
    push_pipeline,
)
from tests.sandbox.support import ClientAccess, Controls

gitlab, clients, repo, runner = (
    gitlab_runs.gitlab,
    gitlab_runs.clients,
    gitlab_runs.repo,
    gitlab_runs.runner,
)
OUTCOME = '<!-- reconciler:outcome key="accounts" -->\n'


def propose(
    runner: GitLabRunner, gitlab: FakeGitLab, repo: Path, branch: str, files: dict[str, str],
    iid: int,
) -> None:  # fmt: skip
    """Open merge request `iid` from main with `files`, and run its pipeline (planned)."""
    head = _branch(repo, branch, files)
    plans, comment = merge_request_pipeline(runner, gitlab, head, iid)
    assert all(job.returncode == 0 for job in plans.values()), plans
    assert comment.returncode == 0, comment.log


def note(gitlab: FakeGitLab, iid: int) -> str:
    """The merge request's one outcome note."""
    (found,) = [n for n in gitlab.state.notes.get(iid, []) if n["body"].startswith(OUTCOME)]
    return str(found["body"])


def deployments_at(gitlab: FakeGitLab, environment: str, sha: str) -> list[str]:
    """The statuses of the environment's deployments at `sha`, oldest first."""
    return [
        d["status"]
        for d in gitlab.state.deployments
        if d["environment"]["name"] == environment and d["sha"] == sha
    ]


def writes(controls: Controls, since: int) -> list[object]:
    return [e for e in controls.requests(since) if e["method"] != "GET"]


def test_a_retried_apply_of_an_older_merge_pays_nothing_a_later_merge_removed(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """!31 adds a payrun of 100.00 to W-1, merged as B; B's apply fails before it sends
    anything (production-eu's token is missing). !32 removes the payrun, merged as C. "Retry"
    on B's apply job: superseded by C, nothing paid, its deployment failed, !31 told."""
    eu = clients["eu"]
    propose(runner, gitlab, repo, "hire", {"accounts/eu/workforce.yaml": state(["W-1"])}, 30)
    applies, _ = push_pipeline(runner, gitlab, merge(runner, gitlab, repo, "hire", 30))
    assert applies["eu"].returncode == 0, applies["eu"].log
    activate(sandbox, controls, eu)

    pay = {"accounts/eu/workforce.yaml": state(["W-1"]) + PAYRUN}
    propose(runner, gitlab, repo, "pay", pay, 31)
    merged_b = merge(runner, gitlab, repo, "pay", 31)
    token = runner.environments["production-eu"].pop("RECONCILER_TOKEN_EU")
    b_pipeline = child(runner, _pipeline(gitlab, merged_b))
    failed = _apply(runner, b_pipeline, "eu")
    assert failed.returncode == 1, failed.log
    runner.run("outcome", b_pipeline.variables, file=b_pipeline.file, needs=(failed,))
    assert paylists(sandbox, eu) == []
    assert "| `eu` | :x: failed" in note(gitlab, 31)

    git(repo, "checkout", "--quiet", "main")
    propose(runner, gitlab, repo, "unpay", {"accounts/eu/workforce.yaml": state(["W-1"])}, 32)
    runner.environments["production-eu"]["RECONCILER_TOKEN_EU"] = token
    merged_c = merge(runner, gitlab, repo, "unpay", 32)
    applied, _ = push_pipeline(runner, gitlab, merged_c)
    # eu's files at C are those of its last successful apply (!30's): nothing to do.
    assert applied["eu"].returncode == 0, applied["eu"].log
    assert "eu: nothing to do: applied at" in applied["eu"].log
    assert paylists(sandbox, eu) == []
    assert "| `eu` | :white_check_mark: nothing to do: applied at" in note(gitlab, 31)

    since = controls.last_seq()
    retried = _apply(runner, b_pipeline, "eu")
    runner.run("outcome", b_pipeline.variables, file=b_pipeline.file, needs=(retried,))

    assert retried.returncode == 3, retried.log  # allowed to fail: a warning, not a success
    assert f"eu: superseded by {merged_c[:12]} (!32)" in retried.log
    assert paylists(sandbox, eu) == [] and writes(controls, since) == []
    assert deployments_at(gitlab, "production-eu", merged_b) == ["failed", "failed"]
    said = note(gitlab, 31)  # the same note, updated in place
    assert f"| `eu` | :fast_forward: superseded by {merged_c[:12]} (!32)" in said
    assert f"[run]({retried.url})" in said


@pytest.mark.parametrize("middle", ["cancelled", "failed"])
def test_three_quick_merges_with_the_middle_apply_lost_are_all_applied_in_order(
    middle: str,
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """!31 hires W-1 in eu (applied); !32 adds W-2 to eu, and its apply is cancelled (or
    fails); !33 changes us only. !33's pipeline applies eu from its last apply (!32's reviewed
    plan: W-2) and us (W-3); each merge request's note says what became of it."""
    propose(runner, gitlab, repo, "one", {"accounts/eu/workforce.yaml": state(["W-1"])}, 31)
    first, _ = push_pipeline(runner, gitlab, merge(runner, gitlab, repo, "one", 31))
    assert first["eu"].returncode == 0, first["eu"].log
    two = {"accounts/eu/workforce.yaml": state(["W-1", "W-2"])}
    propose(runner, gitlab, repo, "two", two, 32)
    merged_2 = merge(runner, gitlab, repo, "two", 32)
    if middle == "cancelled":
        lost, _ = push_pipeline(runner, gitlab, merged_2, cancel=("eu", "us"))
        assert "did not finish: cancelled" in note(gitlab, 32)
    else:
        token = runner.environments["production-eu"].pop("RECONCILER_TOKEN_EU")
        lost, _ = push_pipeline(runner, gitlab, merged_2)
        runner.environments["production-eu"]["RECONCILER_TOKEN_EU"] = token
        assert "| `eu` | :x: failed" in note(gitlab, 32)
    assert lost["eu"].returncode != 0 and live(sandbox, clients["eu"]) == ["W-1"]
    assert deployments_at(gitlab, "production-eu", merged_2) == [
        "canceled" if middle == "cancelled" else "failed"
    ]

    propose(runner, gitlab, repo, "three", {"accounts/us/workforce.yaml": state(["W-3"])}, 33)
    merged_3 = merge(runner, gitlab, repo, "three", 33)
    third, outcome = push_pipeline(runner, gitlab, merged_3)

    assert all(job.returncode == 0 for job in third.values()), third
    assert outcome.returncode == 0, outcome.log
    assert live(sandbox, clients["eu"]) == ["W-1", "W-2"] and live(sandbox, clients["us"]) == [
        "W-3"
    ]
    assert "| `eu` | :white_check_mark: applied: the reviewed plan was applied: 1 to invite" in (
        note(gitlab, 32)
    )
    assert "`us`" in note(gitlab, 33) and "`eu`" not in note(gitlab, 33)
    assert [n["body"].startswith(OUTCOME) for n in gitlab.state.notes[32]].count(True) == 1
    assert deployments_at(gitlab, "production-eu", merged_3) == ["success"]

    again, _ = push_pipeline(runner, gitlab, merged_3)  # nothing pending any more
    assert all("nothing to do: applied at" in job.log for job in again.values()), again


def test_a_pending_merge_no_reviewed_plan_covers_fails_naming_its_merge_requests(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """!31 hires W-1 in eu, merged, its apply cancelled; then a direct push to main hires W-2:
    the newest merge has no reviewed plan, so nothing is applied, and the job fails naming eu
    and !31, which its note tells."""
    first = git(repo, "rev-parse", "main")
    propose(runner, gitlab, repo, "one", {"accounts/eu/workforce.yaml": state(["W-1"])}, 31)
    push_pipeline(runner, gitlab, merge(runner, gitlab, repo, "one", 31), cancel=("eu",))
    pushed = commit(repo, {"accounts/eu/workforce.yaml": state(["W-1", "W-2"])}, "direct")

    applies, _ = push_pipeline(runner, gitlab, pushed)

    assert applies["eu"].returncode == 1, applies["eu"].log
    assert f"nothing was applied (pending since {first[:12]}, !31)" in applies["eu"].log
    assert "| `eu` | :no_entry: refused: no plan reviewed on a merge request" in note(gitlab, 31)
    assert live(sandbox, clients["eu"]) == []


def test_a_pipeline_out_of_order_applies_no_older_state(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """!31 hires W-1 (merged as B), !32 from B adds W-2 (merged as C); C's pipeline runs first
    and applies both; B's pipeline then runs: eu is superseded by C, nothing is sent."""
    propose(runner, gitlab, repo, "one", {"accounts/eu/workforce.yaml": state(["W-1"])}, 31)
    merged_b = merge(runner, gitlab, repo, "one", 31)
    two = {"accounts/eu/workforce.yaml": state(["W-1", "W-2"])}
    propose(runner, gitlab, repo, "two", two, 32)
    merged_c = merge(runner, gitlab, repo, "two", 32)
    first, _ = push_pipeline(runner, gitlab, merged_c)
    assert first["eu"].returncode == 0, first["eu"].log
    assert live(sandbox, clients["eu"]) == ["W-1", "W-2"]

    since = controls.last_seq()
    late, _ = push_pipeline(runner, gitlab, merged_b)

    assert late["eu"].returncode == 3, late["eu"].log
    assert f"eu: superseded by {merged_c[:12]} (!32)" in late["eu"].log
    assert writes(controls, since) == [] and live(sandbox, clients["eu"]) == ["W-1", "W-2"]
    assert deployments_at(gitlab, "production-eu", merged_b) == ["failed"]
    # C's pipeline applied both merges and said so on !32; B's late one, on !31, says who
    # applied them (its row's latest word).
    assert "| `eu` | :white_check_mark: applied: the reviewed plan was applied: 2 to invite" in (
        note(gitlab, 32)
    )
    assert f"| `eu` | :fast_forward: superseded by {merged_c[:12]} (!32)" in note(gitlab, 31)


def test_the_drift_job_reports_an_account_whose_head_is_not_applied(
    runner: GitLabRunner, repo: Path, gitlab: FakeGitLab
) -> None:
    """!31's merge is applied; !32's apply never ran: the drift job says eu is pending since
    !31's merge, !32; us is applied."""
    propose(runner, gitlab, repo, "one", {"accounts/eu/workforce.yaml": state(["W-1"])}, 31)
    merged_1 = merge(runner, gitlab, repo, "one", 31)
    push_pipeline(runner, gitlab, merged_1)
    two = {"accounts/eu/workforce.yaml": state(["W-1", "W-2"])}
    propose(runner, gitlab, repo, "two", two, 32)
    main = merge(runner, gitlab, repo, "two", 32)  # its pipeline never ran

    schedule = child(runner, {**_common(gitlab, main), "CI_PIPELINE_SOURCE": "schedule"})
    drift = {
        name: runner.run("drift", schedule.variables, matrix={"ACCOUNT": name},
                         file=schedule.file)
        for name in ("eu", "us")
    }  # fmt: skip

    assert f"eu: not applied at {main[:12]}: pending since {merged_1[:12]}, !32" in (
        drift["eu"].log
    )
    assert drift["eu"].artifacts is not None
    assert "pending since" in (drift["eu"].artifacts / "drift.md").read_text()
    assert f"us: applied at {main[:12]}" in drift["us"].log


def _uk(
    runner: GitLabRunner, controls: Controls, sandbox: SandboxServer
) -> tuple[ClientAccess, str]:
    """A third client, uk: its two environments' variables, and its entry for reconciler.yaml."""
    uk = controls.create_client(name="UK")
    runner.environments["reconciler-uk"] = {"RECONCILER_TOKEN_UK": uk.token,
                                            "RECONCILER_PLAN_KEY": "k" * 40}  # fmt: skip
    runner.environments["production-uk"] = dict(runner.environments["reconciler-uk"])
    entry = (f"  - name: uk\n    path: accounts/uk\n    baseUrl: {sandbox.base_url}\n"
             f"    tokenEnv: RECONCILER_TOKEN_UK\n    clientId: {uk.client_id}\n")  # fmt: skip
    return uk, entry


def test_an_account_added_to_reconciler_yaml_gets_its_jobs(
    runner: GitLabRunner, repo: Path, controls: Controls, sandbox: SandboxServer,
    gitlab: FakeGitLab,
) -> None:  # fmt: skip
    """Adding uk edits reconciler.yaml (and adds its files) only: the next pipeline plans and
    applies it, in its own environments, with no line of the pipeline changed."""
    uk, entry = _uk(runner, controls, sandbox)
    added = commit(repo, {"reconciler.yaml": (repo / "reconciler.yaml").read_text() + entry,
                          "accounts/uk/workforce.yaml": state([])}, "add uk")  # fmt: skip
    applies, _ = push_pipeline(runner, gitlab, added)
    assert sorted(applies) == ["eu", "uk", "us"]
    assert applies["uk"].environment == "production-uk" and applies["uk"].returncode == 0

    propose(runner, gitlab, repo, "hire", {"accounts/uk/workforce.yaml": state(["W-9"])}, 34)
    assert "W-9" in next(iter(gitlab.state.notes[34]))["body"]
    applies, _ = push_pipeline(runner, gitlab, merge(runner, gitlab, repo, "hire", 34))
    assert applies["uk"].returncode == 0, applies["uk"].log
    assert live(sandbox, uk) == ["W-9"]
    assert "applied: the reviewed plan was applied: 1 to invite" in note(gitlab, 34)


def _pipeline(gitlab: FakeGitLab, sha: str) -> dict[str, str]:
    return {**_common(gitlab, sha), "CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main"}


def _apply(runner: GitLabRunner, pipeline: gitlab_runs.ChildPipeline, name: str) -> GitLabJob:
    return runner.run("apply", pipeline.variables, matrix={"ACCOUNT": name}, file=pipeline.file)


def test_a_merge_request_that_adds_an_account_plans_it_and_the_merge_applies_it(
    runner: GitLabRunner, repo: Path, controls: Controls, sandbox: SandboxServer,
    gitlab: FakeGitLab,
) -> None:  # fmt: skip
    """Issue 37 on GitLab: a merge request adding uk (its entry and its files) plans uk with
    its entry, in reconciler-uk, into the one note; the merge applies that reviewed plan. A
    new entry naming a variable of eu is refused, alone, saying why."""
    uk, entry = _uk(runner, controls, sandbox)
    files = {"reconciler.yaml": (repo / "reconciler.yaml").read_text() + entry,
             "accounts/uk/workforce.yaml": state(["W-9"])}  # fmt: skip

    propose(runner, gitlab, repo, "add-uk", files, 35)

    (planned,) = [n for n in gitlab.state.notes[35] if n["body"].startswith(MARKER)]
    assert "W-9" in planned["body"] and "uk" in planned["body"]
    applies, outcome = push_pipeline(runner, gitlab, merge(runner, gitlab, repo, "add-uk", 35))
    assert outcome.returncode == 0, outcome.log
    assert applies["uk"].returncode == 0, applies["uk"].log
    assert live(sandbox, uk) == ["W-9"]
    assert "applied: the reviewed plan was applied: 1 to invite" in note(gitlab, 35)

    # fr names eu's token variable, while eu's entry moves to another (so their file is valid)
    borrowed = (
        entry.replace("uk", "fr")
        .replace("RECONCILER_TOKEN_UK", "RECONCILER_TOKEN_EU")
        .replace(f"clientId: {uk.client_id}", f"clientId: {uk.client_id + 1000}")
    )
    theirs = (
        (repo / "reconciler.yaml")
        .read_text()
        .replace("tokenEnv: RECONCILER_TOKEN_EU", "tokenEnv: OTHER_TOKEN")
    )
    head = _branch(repo, "add-fr", {
        "reconciler.yaml": theirs + borrowed,
        "accounts/fr/workforce.yaml": state(["W-8"]),
    })  # fmt: skip
    since = controls.last_seq()
    plans, _ = merge_request_pipeline(runner, gitlab, head, 36)
    assert plans["fr"].returncode == 1
    assert "fr: not planned: its entry, added by this pull request, names RECONCILER_TOKEN_EU" in (
        plans["fr"].log
    )
    assert writes(controls, since) == []


def test_an_account_whose_record_cannot_be_read_fails_alone(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """eu's newest successful deployment is at a commit main no longer holds (main was
    rewritten): its apply fails saying why and sends nothing; us is applied; the outcome job
    tells !31 of both, and eu's drift line says why (before: "bad object", and the outcome job
    failed for every merge request)."""
    gone = _unheld_eu(gitlab)
    merged = _both(runner, gitlab, repo)

    applies, outcome = push_pipeline(runner, gitlab, merged)

    assert (applies["eu"].returncode, applies["us"].returncode) == (1, 0), applies["eu"].log
    said = applies["eu"].log
    assert f"is at {gone[:12]}, which this checkout does not hold" in said, said
    assert "where it stands is unknown" in said and "Traceback" not in said
    assert live(sandbox, clients["eu"]) == [] and live(sandbox, clients["us"]) == ["W-2"]
    assert outcome.returncode == 0, outcome.log
    assert "| `eu` | :x: failed: where it stands is unknown" in note(gitlab, 31)
    assert "| `us` | :white_check_mark: applied" in note(gitlab, 31)

    schedule = child(runner, {**_common(gitlab, merged), "CI_PIPELINE_SOURCE": "schedule"})
    drift = runner.run("drift", schedule.variables, matrix={"ACCOUNT": "eu"}, file=schedule.file)
    assert f"eu: not applied at {merged[:12]}: where it stands is unknown" in drift.log


def test_an_account_whose_record_cannot_be_read_and_whose_apply_did_not_run_is_told(
    runner: GitLabRunner, repo: Path, gitlab: FakeGitLab
) -> None:
    """As above, but eu's apply job is cancelled before it runs: the outcome job tells !31
    that eu did not finish, and why its standing is unknown (it was left out of the note)."""
    _unheld_eu(gitlab)
    merged = _both(runner, gitlab, repo)

    applies, outcome = push_pipeline(runner, gitlab, merged, cancel=("eu",))

    assert applies["us"].returncode == 0, applies["us"].log
    assert outcome.returncode == 0, outcome.log
    told = note(gitlab, 31)
    assert "| `eu` | :x: failed: did not finish: cancelled, or failed before it said" in told, told
    assert "where it stands is unknown: eu: its last successful apply" in told, told
    assert "| `us` | :white_check_mark: applied" in told


def _unheld_eu(gitlab: FakeGitLab) -> str:
    """eu's newest successful deployment, at a commit main does not hold: that commit."""
    gone = "e" * 40
    gitlab.deploy("production-eu", gone, "https://gitlab.example/jobs/1", "success")
    return gone


def _both(runner: GitLabRunner, gitlab: FakeGitLab, repo: Path) -> str:
    """!31 changes eu's and us's files, merged: the merge commit."""
    files = {"accounts/eu/workforce.yaml": state(["W-1"]), "accounts/us/workforce.yaml":
             state(["W-2"])}  # fmt: skip
    propose(runner, gitlab, repo, "both", files, 31)
    return merge(runner, gitlab, repo, "both", 31)
