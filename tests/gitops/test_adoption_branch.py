"""The adoption branch is the bot's (issue 49, item 4): a commit someone pushed onto
`reconciler/adopt-<account>` is noticed however the drift run goes. With the same adoption (an
unchanged body, which once left the branch as it was), the job puts its own content back and
says which commit it replaced; when adopt failed (nothing to rebuild from), the pull request is
told its body does not describe that commit. Over HTTP, against the fake GitHub."""

from __future__ import annotations

from pathlib import Path

from reconciler.adopt.commit import BranchFile
from reconciler.adopt.model import ADDED, Adopted, Adoption, FileChange
from reconciler.adopt.request import branch_for
from reconciler.gitops.adoption import sync_adoption_request
from reconciler.gitops.drift import DRIFTED, DriftAction
from reconciler.gitops.github.forge import GitHubForge
from reconciler.render.marker import ADOPT, Marker
from reconciler.secrets import Secret
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub

TOKEN = "adoption-branch-token"
PATH = "accounts/us/workforce.yaml"
BASE = "b" * 40
ADOPTION = Adoption(
    files=(FileChange(PATH, "workers: []\n", "workers:\n  - externalId: W-7\n"),),
    adopted=(Adopted('worker["W-7"]', ADDED, "open agreement 1 (ACTIVE)"),),
)
PAYRUN = (
    '\npayruns:\n  - id: extra\n    payments:\n      - {email: m@evil.example, amount: "9000.00"}\n'
)


def _push_onto(github: FakeGitHub, branch: str, sha: str) -> str:
    files = dict(github.branch_files(branch))
    files[PATH] += PAYRUN
    tree = sha[::-1].replace(sha[0], "7")
    github.state.trees[tree] = files
    github.state.commits[sha] = {"tree": tree, "parents": [github.state.refs[branch]]}
    github.state.refs[branch] = sha
    return sha


def _sync(forge: GitHubForge, adoption: Adoption | None) -> DriftAction:
    files = {PATH: BranchFile(ADOPTION.files[0].after)} if adoption is not None else {}
    marker = Marker(ADOPT, "us")
    done = sync_adoption_request(forge, DRIFTED, adoption, files, marker, account="us",
                                 base_sha=BASE)  # fmt: skip
    return done.action


def test_a_pushed_commit_under_an_unchanged_body_is_replaced_or_said(tmp_path: Path) -> None:
    branch = branch_for("us")
    with FakeGitHub(TOKEN) as github, GitHubForge(OWNER_REPO, Secret(TOKEN),
                                                  api_url=github.api_url) as forge:  # fmt: skip
        assert _sync(forge, ADOPTION) is DriftAction.OPEN
        (pull,) = github.state.pulls.values()
        bots = github.state.refs[branch]
        assert f"The drift job's commit on `{branch}`: {bots}." in pull["body"]
        assert _sync(forge, ADOPTION) is DriftAction.NOTHING  # its own commit: left alone

        pushed = _push_onto(github, branch, "9" * 40)
        assert _sync(forge, ADOPTION) is DriftAction.UPDATE

        assert github.state.refs[branch] != pushed
        assert "9000.00" not in github.branch_files(branch)[PATH]
        (note,) = [c["body"] for c in github.state.comments[pull["number"]]]
        assert f"A commit the drift job did not make was on `{branch}`: {pushed}" in note
        body = github.state.pulls[pull["number"]]["body"]
        assert f"The drift job's commit on `{branch}`: {github.state.refs[branch]}." in body

        # Pushed again, and this time adopt failed: nothing to rebuild from, so it is said.
        again = _push_onto(github, branch, "8" * 40)
        assert _sync(forge, None) is DriftAction.NOTHING
        assert github.state.refs[branch] == again
        said = github.state.comments[pull["number"]][-1]["body"]
        assert f"A commit the drift job did not make is on `{branch}`: {again}" in said
        assert "does **not** describe what the branch holds" in said
        assert _sync(forge, None) is DriftAction.NOTHING  # said once
        assert len(github.state.comments[pull["number"]]) == 2
