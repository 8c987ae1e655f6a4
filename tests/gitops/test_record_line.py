"""A record counts only on the default branch's line (issue 49, item 5): the commit of the last
successful apply is one the default branch itself pointed at. A success record at a pull
request's head (an ancestor of its merge, yet never main) says nothing of what main holds as
applied: where the account stands is unknown, over the fake GitHub and the fake GitLab alike,
and nothing is applied."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from reconciler.accounts.targets import targets
from reconciler.gitops.forge import NOT_REVIEWED, ApplyJob, Forge
from reconciler.gitops.github import deployments
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.gitlab.forge import GitLabForge
from reconciler.gitops.landing import land_fleet
from reconciler.gitops.outcome import FAILED
from reconciler.gitops.pending import pending_target
from reconciler.secrets import Secret
from tests.gitops.action_runner import History
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
from tests.gitops.fake_gitlab import PROJECT_ID, FakeGitLab

TOKEN = "forge-token"
ENVIRONMENT = "production"


@dataclass
class Recording:
    """A forge's adapter, how its fake is given a successful apply at a commit, and the
    repository it serves (a bare remote)."""

    forge: Forge
    applied_at: Callable[[str], None]
    serve: Callable[[Path], None] = lambda remote: None


def _github() -> Iterator[Recording]:
    with FakeGitHub(TOKEN) as fake, GitHubForge(OWNER_REPO, Secret(TOKEN),
                                                api_url=fake.api_url) as forge:  # fmt: skip

        def applied_at(sha: str) -> None:
            made = deployments.start(forge, ENVIRONMENT, sha, pull_request=None,
                                     plan_digest=None, log_url="https://run",
                                     description="applying")  # fmt: skip
            deployments.finish(forge, made, deployments.SUCCESS, "applied", log_url="https://run")

        def serve(remote: Path) -> None:
            fake.state.remote = remote

        yield Recording(forge, applied_at, serve)


def _gitlab() -> Iterator[Recording]:
    with FakeGitLab(TOKEN) as fake, GitLabForge(fake.api_url, str(PROJECT_ID),
                                                Secret(TOKEN)) as forge:  # fmt: skip

        def applied_at(sha: str) -> None:
            fake.deploy(ENVIRONMENT, sha, "https://gitlab.example.com/jobs/1", "success")

        yield Recording(forge, applied_at)


@pytest.fixture(params=[_github, _gitlab], ids=["github", "gitlab"])
def recording(request: pytest.FixtureRequest) -> Iterator[Recording]:
    yield from request.param()


def test_a_success_record_at_a_pull_request_s_head_makes_where_it_stands_unknown(
    tmp_path: Path, recording: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pull request's head holds exactly the files its merge holds: counted, the merge
    would look applied and nothing would be listed to apply."""
    forge = recording.forge
    history = History(tmp_path / "history")
    first = history.commit({"workforce/a.yaml": "version: 1\n"}, "one")
    head = history.commit({"workforce/a.yaml": "version: 1\nworkers: []\n"}, "pr", "change")
    merge = history.merge("change", 31)
    checkout = history.checkout(merge, tmp_path / "co")
    recording.serve(history.remote)
    monkeypatch.chdir(tmp_path)  # where a GitLab job keeps its outcome
    alone = targets(ENVIRONMENT, path=checkout / "workforce")
    (target,) = alone.targets
    recording.applied_at(first)
    recording.applied_at(head)  # off main's line: a pull request's head

    def never(args: list[str], stdout: Path | None) -> int:
        raise AssertionError(f"nothing is run: {args}")

    pending = pending_target(forge, target, merge)
    job = ApplyJob(merge, "main", ENVIRONMENT, "https://run/2", tmp_path / "work")
    ((landing, status),) = land_fleet(forge, alone, lambda _: NOT_REVIEWED, job, never)

    assert pending is not None and pending.unknown is not None
    for said in (pending.describe(), landing.description):
        assert said.startswith("where it stands is unknown: default: its last successful apply")
        assert f"is at {head[:12]}, which the default branch never pointed at" in said
        assert "\n" not in said
    assert landing.kind == FAILED and status == 1


def test_a_record_on_the_default_branch_s_line_still_counts(
    tmp_path: Path, recording: Recording
) -> None:
    """The merge itself applied: applied; an apply at main's commit before the merge: pending
    since it, by the merge."""
    forge = recording.forge
    history = History(tmp_path / "history")
    first = history.commit({"workforce/a.yaml": "version: 1\n"}, "one")
    history.commit({"workforce/a.yaml": "version: 1\nworkers: []\n"}, "pr", "change")
    merge = history.merge("change", 31)
    (target,) = targets(
        ENVIRONMENT, path=history.checkout(merge, tmp_path / "co") / "workforce"
    ).targets

    recording.applied_at(first)
    before = pending_target(forge, target, merge)
    recording.applied_at(merge)
    after = pending_target(forge, target, merge)

    assert before is not None and before.unknown is None and before.since == first
    assert before.merges == (merge,)
    assert after is None
