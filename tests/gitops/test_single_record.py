"""The single account's decisions, one by one (the action's apply and drift modes): its files
are the action's `path` only; what is pending since its record, as GITHUB_OUTPUT lines and as
the drift check's report; and the apply command's refusal of an unclear selection."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.accounts.history import Scope, changed_between, merges_between, scope_of
from reconciler.accounts.targets import Targets, targets
from reconciler.gitops.forge import NOT_REVIEWED, ApplyJob
from reconciler.gitops.github import deployments
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.github.outputs import action_lines
from reconciler.gitops.landing import land_fleet
from reconciler.gitops.outcome import FAILED
from reconciler.secrets import Secret
from tests.gitops.action_runner import History
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
from tests.gitops.support import reconciler

TOKEN = "ghs_single"


@pytest.fixture
def client() -> Iterator[tuple[FakeGitHub, GitHubForge]]:
    with FakeGitHub(TOKEN) as fake, GitHubForge(
        OWNER_REPO, Secret(TOKEN), api_url=fake.api_url
    ) as github:  # fmt: skip
        yield fake, github


def test_the_single_account_s_files_are_its_path_only(tmp_path: Path) -> None:
    history = History(tmp_path / "history")
    first = history.commit({"workforce/a.yaml": "version: 1\n", "README.md": "hi\n"}, "one")
    readme = history.commit({"README.md": "hello\n"}, "two")
    changed = history.commit({"workforce/a.yaml": "version: 1\nworkers: []\n"}, "three")
    checkout = history.checkout(changed, tmp_path / "checkout")
    folder, file = scope_of("default", checkout / "workforce"), scope_of(
        "eu", checkout / "workforce" / "a.yaml"
    )  # fmt: skip

    assert (folder.name, folder.files, folder.accounts_file) == ("default", "workforce", None)
    assert file.files == "workforce/a.yaml"
    assert not changed_between(folder, first, readme)
    assert changed_between(folder, readme, changed) and changed_between(file, first, changed)
    assert merges_between(folder, first, changed) == [changed]
    assert merges_between(file, None, changed) == [first, changed]


def test_what_is_pending_since_the_record_as_lines_and_as_a_report(
    tmp_path: Path, client: tuple[FakeGitHub, GitHubForge]
) -> None:
    fake, github = client
    history = History(tmp_path / "history")
    first = history.commit({"workforce/a.yaml": "version: 1\n"}, "one")
    second = history.commit({"workforce/a.yaml": "version: 1\nworkers: []\n"}, "#31")
    fake.state.commit_pulls[second] = [
        {"number": 31, "merged_at": "2026-11-26T10:00:00Z", "merge_commit_sha": second,
         "head": {"sha": "c" * 40}}
    ]  # fmt: skip
    scope = scope_of("default", history.checkout(second, tmp_path / "co") / "workforce")
    ask = {"artifact": "reconciler-plan", "workflow": "reconciler-plan.yml"}
    started = deployments.start(github, "production", first, pull_request=None, plan_digest=None,
                                log_url="https://run", description="applying")  # fmt: skip
    deployments.finish(github, started, deployments.SUCCESS, "applied", log_url="https://run")

    lines = action_lines(github, one(scope), second, drift=False, **ask)
    report = action_lines(github, one(scope), second, drift=True, **ask)
    applied = action_lines(github, one(scope), first, drift=True, **ask)

    assert lines[:4] == ["run-id=", "artifact-name=", "pull-request=", "head-sha="]  # none saved
    assert json.loads(lines[4].removeprefix("pulls=")) == {"default": [31]}
    assert report == [
        f"::warning::default: not applied at {second[:12]}: pending since {first[:12]}, #31"
    ]
    assert applied == [f"default: applied at {first[:12]}"]


def test_the_apply_command_takes_the_accounts_or_a_path(tmp_path: Path) -> None:
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": OWNER_REPO,
           "GITHUB_API_URL": "http://127.0.0.1:9"}  # fmt: skip
    common = ["--sha", "a" * 40, "--default-branch", "main", "--work-dir", str(tmp_path),
              "--log-url", "https://run"]  # fmt: skip
    for selection in ([], ["--accounts", "eu", "--path", str(tmp_path)]):
        said = reconciler("github", "apply-accounts", *selection, *common, **env)
        assert said.returncode == 1 and "give --accounts or --path, one of them" in said.stderr


def test_a_record_whose_commit_the_checkout_lacks_is_refused_naming_it(
    tmp_path: Path, client: tuple[FakeGitHub, GitHubForge]
) -> None:
    """main was force-pushed and the last apply's commit is gone (or the checkout is shallow):
    what was applied there is unknown, so nothing is applied, nothing is run, and the messages
    name the deployment, its commit and what to do (not "bad object"). The apply fails, as its
    record says; the drift check's line is an error."""
    fake, github = client
    history = History(tmp_path / "history")
    head = history.commit({"workforce/a.yaml": "version: 1\n"}, "one")
    gone = "e" * 40  # the commit a rewrite of main dropped
    fake.state.remote = history.remote
    scope = scope_of("default", history.checkout(head, tmp_path / "co") / "workforce")
    started = deployments.start(github, "production", gone, pull_request=31, plan_digest=None,
                                log_url="https://run", description="applying")  # fmt: skip
    deployments.finish(github, started, deployments.SUCCESS, "applied", log_url="https://run")
    ask = {"artifact": "reconciler-plan", "workflow": "reconciler-plan.yml"}
    where = ApplyJob(head, "main", "production", "https://run/2", tmp_path / "work")

    def never(args: list[str], stdout: Path | None) -> int:
        raise AssertionError(f"nothing is run: {args}")

    (pending,) = action_lines(github, one(scope), head, drift=True, **ask)
    alone = targets("production", path=scope_path(scope))
    ((landing, _),) = land_fleet(github, alone, lambda _: NOT_REVIEWED, where, never)

    assert pending.startswith(f"::error::default: not applied at {head[:12]}: where it stands")
    assert landing.kind == FAILED
    for said in (pending, landing.description):
        assert f"deployment {started} in production, is at {gone[:12]}, which this checkout" in said
        assert "force-pushed" in said and "fetch-depth: 0" in said and "\n" not in said
    assert [d["sha"] for d in fake.state.deployments] == [gone, head]
    assert deployments.last_applied(github, "production") is not None  # still the gone one
    assert fake.state.deployment_statuses[fake.state.deployments[1]["id"]][-1]["state"] == "failure"


def scope_path(scope: Scope) -> Path:
    return scope.root / scope.files


def one(scope: Scope) -> Targets:
    """The single account of the desired state `scope` holds: a fleet of one."""
    return targets("production", path=scope_path(scope))


def test_a_record_a_person_made_with_the_api_is_not_the_last_apply(
    tmp_path: Path, client: tuple[FakeGitHub, GitHubForge]
) -> None:
    """Someone with the API (a person's token, another app) creates a `deploy:reconciler`
    deployment at the head marked success, or adds `success` to an apply that failed: either
    would say the head is applied and skip its merge. Only what a workflow's GITHUB_TOKEN made
    is read: the head is still pending, and the outcome is the apply's own."""
    fake, github = client
    history = History(tmp_path / "history")
    first = history.commit({"workforce/a.yaml": "version: 1\n"}, "one")
    second = history.commit({"workforce/a.yaml": "version: 1\nworkers: []\n"}, "#31")
    scope = scope_of("default", history.checkout(second, tmp_path / "co") / "workforce")
    ask = {"artifact": "reconciler-plan", "workflow": "reconciler-plan.yml"}
    mallory = {"login": "mallory", "id": 7, "type": "User", "site_admin": False}

    def record(sha: str, state: str, description: str) -> int:
        made = deployments.start(github, "production", sha, pull_request=None, plan_digest=None,
                                 log_url="https://run", description="applying")  # fmt: skip
        deployments.finish(github, made, state, description, log_url="https://run")
        return made

    record(first, deployments.SUCCESS, "applied: 1 to invite")
    failed = record(second, deployments.FAILURE, "failed: see the run's log")
    fake.state.deployment_statuses[failed].append(
        {"id": 1, "state": "success", "description": "applied: [approve](https://evil.example)",
         "creator": mallory}
    )  # fmt: skip
    forged = record(second, deployments.SUCCESS, "applied: [approve](https://evil.example)")
    (made,) = [d for d in fake.state.deployments if d["id"] == forged]
    made["creator"] = mallory

    report = action_lines(github, one(scope), second, drift=True, **ask)
    (landing, _), *_ = github.landings(["default"], second, "production")

    assert report == [
        f"::warning::default: not applied at {second[:12]}: pending since {first[:12]}"
    ]
    assert landing.kind == "failed" and "evil" not in landing.description


def test_with_an_app_s_token_its_records_count_when_reconciler_github_author_names_it(
    tmp_path: Path,
) -> None:
    """docs/accounts-ci.md suggests a GitHub App's token for big fleets: it writes as
    `<app>[bot]`. Its records are the last apply only when RECONCILER_GITHUB_AUTHOR says so
    (a workflow's token's records, and anyone else's, then do not count)."""
    history = History(tmp_path / "history")
    first = history.commit({"workforce/a.yaml": "version: 1\n"}, "one")
    scope = scope_of("default", history.checkout(first, tmp_path / "co") / "workforce")
    ask = {"artifact": "reconciler-plan", "workflow": "reconciler-plan.yml"}
    app = {"login": "fleet-reconciler[bot]", "id": 9, "type": "Bot", "site_admin": False}
    environ = {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": OWNER_REPO}
    with FakeGitHub(TOKEN) as fake:
        environ["GITHUB_API_URL"] = fake.api_url
        with GitHubForge.from_environment(environ) as github:
            made = deployments.start(github, "production", first, pull_request=None,
                                     plan_digest=None, log_url="https://run",
                                     description="applying")  # fmt: skip
            deployments.finish(github, made, deployments.SUCCESS, "applied", log_url="https://run")
        (deployment,) = fake.state.deployments
        deployment["creator"] = app
        for status in fake.state.deployment_statuses[made]:
            status["creator"] = app
        with GitHubForge.from_environment(environ) as github:
            as_workflow = action_lines(github, one(scope), first, drift=True, **ask)
        environ["RECONCILER_GITHUB_AUTHOR"] = "fleet-reconciler[bot]"
        with GitHubForge.from_environment(environ) as github:
            as_app = action_lines(github, one(scope), first, drift=True, **ask)

    assert as_workflow == [f"::warning::default: not applied at {first[:12]}: never applied"]
    assert as_app == [f"default: applied at {first[:12]}"]
