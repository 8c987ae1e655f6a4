"""The forges' reads of a change request's approvals and the records branch, over HTTP against
the fake GitHub and GitLab: what the dual-control core is given (`reconciler.plan.approvals`),
and what a refusal of the forge does (it raises: the core refuses the payrun, saying why)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from reconciler.errors import ReconcilerError
from reconciler.gitops.approvals import ForgeReviews
from reconciler.gitops.environment import forge_of, source_from_env
from reconciler.gitops.github.client import GitHubError
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.gitlab.client import GitLabError
from reconciler.gitops.gitlab.forge import GitLabForge
from reconciler.plan.approvals import Commit, Person, Review, Team
from reconciler.secrets import Secret
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub, pull_request
from tests.gitops.fake_gitlab import PROJECT_ID, FakeGitLab
from tests.gitops.github_people import pull_commit, review, user

TOKEN = "ghs_" + secrets.token_urlsafe(27)
HEAD, EARLIER = "a" * 40, "b" * 40
ALICE, BOB, CAROL = user("alice", 11), user("bob", 12), user("carol", 13)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN, page_size=2, max_page_size=2) as fake:
        for one in (ALICE, BOB, CAROL):
            fake.state.users[one["login"]] = one
        yield fake


def forge(github: FakeGitHub) -> GitHubForge:
    return GitHubForge(OWNER_REPO, Secret(TOKEN), api_url=github.api_url, backoff=0.01)


def test_a_pull_request_s_facts_are_github_s_paged_reviews_and_commits(github: FakeGitHub) -> None:
    pull = pull_request(31, HEAD, author=CAROL) | {"merged_by": BOB, "commits": 3}
    github.state.pulls[31] = pull
    github.state.reviews[31] = [
        review(ALICE, "APPROVED", EARLIER, "2026-11-20T10:00:00Z"),
        review(BOB, "COMMENTED", HEAD, "2026-11-20T11:00:00Z"),
        review(None, "APPROVED", HEAD, "2026-11-20T12:00:00Z"),
    ]
    bot = user("renovate[bot]", 29139614, bot=True)
    github.state.pull_commits[31] = [
        pull_commit(EARLIER, CAROL, CAROL),
        pull_commit("c" * 40, bot, None),
        pull_commit(HEAD, CAROL, user("web-flow", 19864447)),
    ]
    with forge(github) as client:
        facts = client.request_facts(31)
    assert facts.number == 31 and facts.head == HEAD and facts.refusal is None
    assert facts.author == Person(13, "carol") and facts.merged_by == Person(12, "bob")
    assert facts.reviews == (
        Review(Person(11, "alice"), "APPROVED", EARLIER, "2026-11-20T10:00:00Z"),
        Review(Person(12, "bob"), "COMMENTED", HEAD, "2026-11-20T11:00:00Z"),
        Review(Person(None, "(a deleted account)"), "APPROVED", HEAD, "2026-11-20T12:00:00Z"),
    )
    assert facts.commits[1] == Commit("c" * 40, Person(29139614, "renovate[bot]", bot=True), None)
    assert facts.commits[2].committer == Person(19864447, "web-flow")
    pages = [r for r in github.requests if r.path.endswith("/pulls/31/reviews")]
    assert len(pages) == 2  # 3 reviews, 2 a page: followed to the second page


def test_commits_github_does_not_list_make_no_approval_count(github: FakeGitHub) -> None:
    """GitHub lists at most 250 commits of a pull request: the others' authors are unknown."""
    github.state.pulls[32] = pull_request(32, HEAD) | {"commits": 251}
    github.state.pull_commits[32] = [pull_commit(HEAD, CAROL, CAROL)]
    with forge(github) as client:
        facts = client.request_facts(32)
    assert facts.refusal is not None and "251 commits and GitHub lists 1" in facts.refusal


@pytest.mark.parametrize(
    ("status", "said"),
    [(403, "403 Resource not accessible by integration"), (404, "404 Not Found"),
     (502, "502 Server Error")],
)  # fmt: skip
def test_the_reviews_refused_raise_with_the_reason(
    github: FakeGitHub, status: int, said: str
) -> None:
    """403, 404 and 5xx (after its retries) on the reviews: the adapter's error, never an
    empty list of reviews (which would read as "no approval" at best, and hide why)."""
    github.state.pulls[31] = pull_request(31, HEAD)
    github.faults[f"/repos/{OWNER_REPO}/pulls/31/reviews"] = status
    with forge(github) as client, pytest.raises(GitHubError) as refused:
        client.request_facts(31)
    assert f"GitHub refused GET /repos/{OWNER_REPO}/pulls/31/reviews: {said}" in str(refused.value)
    tries = [r for r in github.requests if r.path.endswith("/pulls/31/reviews")]
    assert len(tries) == (3 if status == 502 else 1)


def test_from_is_matched_by_user_id_and_an_unreadable_team_counts_nobody(
    github: FakeGitHub,
) -> None:
    github.state.teams[("octo-org", "finance")] = ["alice", "bob", "carol"]
    with forge(github) as client:
        assert client.members("alice") == frozenset({11})
        assert client.members("Bob") == frozenset({12})  # GitHub's logins ignore case
        assert client.members("nobody") is None  # 404: no such account
        assert client.members(Team("octo-org", "finance")) == frozenset({11, 12, 13})
        assert client.members(Team("octo-org", "secret")) is None  # 404: not visible
        github.faults["/orgs/octo-org/teams/finance/members"] = 403
        assert client.members(Team("octo-org", "finance")) is None  # the token may not read it
        github.faults["/users/alice"] = 503
        with pytest.raises(GitHubError, match="503"):
            client.members("alice")  # GitHub failing is no answer: never "counts nobody"


def test_the_source_reads_the_requests_again_each_time(github: FakeGitHub) -> None:
    github.state.pulls[31] = pull_request(31, HEAD)
    environ = {"GITHUB_REPOSITORY": OWNER_REPO, "GITHUB_TOKEN": TOKEN,
               "GITHUB_API_URL": github.api_url}  # fmt: skip
    source = source_from_env([31, 31], environ)
    assert isinstance(source, ForgeReviews) and source.numbers == (31,)
    assert [facts.reviews for facts in source.requests()] == [()]
    github.state.reviews[31] = [review(ALICE, "APPROVED", HEAD, "2026-11-20T10:00:00Z")]
    (facts,) = source.requests()
    assert [r.reviewer.login for r in facts.reviews] == ["alice"]
    source.close()


def test_the_forge_is_the_job_s_and_none_outside_ci() -> None:
    assert forge_of({}) is None
    assert source_from_env([1], {"HOME": "/root"}) is None
    assert forge_of({"GITHUB_ACTIONS": "true"}) == "github"
    assert forge_of({"GITLAB_CI": "true"}) == "gitlab"
    assert forge_of({"CI_API_V4_URL": "https://gitlab.example.com/api/v4",
                     "CI_PROJECT_ID": "4"}) == "gitlab"  # fmt: skip
    with pytest.raises(ReconcilerError, match="GITHUB_TOKEN is not set"):
        source_from_env([1], {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": OWNER_REPO})
    with pytest.raises(GitLabError, match="GITLAB_TOKEN"):
        source_from_env([1], {"GITLAB_CI": "true", "CI_API_V4_URL": "https://x/api/v4",
                              "CI_PROJECT_ID": "4"})  # fmt: skip


# --- the records branch, GitHub ---------------------------------------------------------------


def test_records_are_commits_on_the_branch_never_forced(github: FakeGitHub) -> None:
    with forge(github) as client:
        first = client.keep_files("reconciler/records", {"records/eu/a.json": "{}\n"}, "one")
        second = client.keep_files("reconciler/records", {"records/eu/b.json": "[]\n"}, "two")
    assert github.state.refs["reconciler/records"] == second
    assert github.state.commits[second]["parents"] == [first]
    assert github.state.commits[first]["parents"] == []
    assert github.branch_files("reconciler/records") == {
        "records/eu/a.json": "{}\n", "records/eu/b.json": "[]\n"}  # fmt: skip
    moves = [r.body for r in github.writes() if r.method == "PATCH"]
    assert moves == [{"sha": second, "force": False}]


class _Racing(FakeGitHub):
    """Another account's job moves the records branch once, right before our move."""

    moved = False

    def handle(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        records = path.endswith("/git/refs/heads/reconciler/records")
        if method == "PATCH" and records and not self.moved:
            self.moved = True
            theirs = self.handle("POST", f"/repos/{OWNER_REPO}/git/commits", {}, {
                "message": "theirs", "tree": "t" * 40,
                "parents": [self.state.refs["reconciler/records"]]})[1]  # fmt: skip
            self.state.trees.setdefault("t" * 40, {"records/us/x.json": "1\n"})
            self.state.refs["reconciler/records"] = theirs["sha"]
        return super().handle(method, path, query, body)


def test_a_moved_records_branch_is_written_again_on_its_new_head() -> None:
    with _Racing(TOKEN) as github:
        with forge(github) as client:
            first = client.keep_files("reconciler/records", {"records/eu/a.json": "1\n"}, "one")
            ours = client.keep_files("reconciler/records", {"records/eu/b.json": "2\n"}, "two")
        theirs = github.state.commits[ours]["parents"][0]
        assert github.state.commits[theirs]["parents"] == [first]  # ours is on top of theirs
        assert github.state.refs["reconciler/records"] == ours
        refused = [r for r in github.writes() if r.method == "PATCH"]
        assert len(refused) == 2 and all(r.body["force"] is False for r in refused)


# --- GitLab -----------------------------------------------------------------------------------

GITLAB_TOKEN = "glpat-" + secrets.token_urlsafe(15)


@pytest.fixture
def gitlab() -> Iterator[FakeGitLab]:
    with FakeGitLab(GITLAB_TOKEN) as fake:
        fake.state.users = [
            {"id": 21, "username": "alice", "name": "Alice"},
            {"id": 22, "username": "alice2", "name": "Alice Two"},
            {"id": 23, "username": "project_4242_bot_1f2e3d", "name": "bot"},
        ]
        fake.state.merge_requests[7] = {
            "iid": 7, "state": "opened", "sha": HEAD, "author": {"id": 24, "username": "carol"},
            "merge_user": None, "source_branch": "pay", "target_branch": "main",
        }  # fmt: skip
        fake.state.approvals[7] = [
            {"user": {"id": 21, "username": "alice"}},
            {"user": {"id": 23, "username": "project_4242_bot_1f2e3d"}},
        ]
        yield fake


def gitlab_forge(gitlab: FakeGitLab) -> GitLabForge:
    return GitLabForge(gitlab.api_url, str(PROJECT_ID), Secret(GITLAB_TOKEN))


def test_a_merge_request_s_approvals_are_taken_as_given_to_its_head(gitlab: FakeGitLab) -> None:
    with gitlab_forge(gitlab) as client:
        facts = client.request_facts(7)
        assert facts.refusal is None and facts.head == HEAD and facts.commits == ()
        assert facts.author == Person(24, "carol")
        assert [(r.reviewer, r.state, r.commit) for r in facts.reviews] == [
            (Person(21, "alice"), "APPROVED", HEAD),
            (Person(23, "project_4242_bot_1f2e3d", bot=True), "APPROVED", HEAD),
        ]
        assert client.members("alice") == frozenset({21})  # alice2 is another login
        assert client.members("dave") is None
        assert client.members(Team("acme", "finance")) is None


@pytest.mark.parametrize(
    ("setting", "value", "said"),
    [("reset_approvals_on_push", False, '"Reset approvals on push"'),
     ("merge_requests_author_approval", True, '"Prevent approval by author"'),
     ("merge_requests_disable_committers_approval", False,
      '"Prevent approvals by users who add commits"')],
)  # fmt: skip
def test_a_project_whose_settings_let_an_approval_outlive_its_money_counts_none(
    gitlab: FakeGitLab, setting: str, value: bool, said: str
) -> None:
    gitlab.state.approval_settings[setting] = value
    with gitlab_forge(gitlab) as client:
        facts = client.request_facts(7)
    assert facts.refusal is not None and said in facts.refusal


def test_gitlab_refusing_the_approvals_raises(gitlab: FakeGitLab) -> None:
    gitlab.faults[f"/api/v4/projects/{PROJECT_ID}/merge_requests/7/approvals"] = 403
    with gitlab_forge(gitlab) as client, pytest.raises(GitLabError, match="403"):
        client.request_facts(7)


def test_gitlab_records_are_commits_of_the_commits_api(gitlab: FakeGitLab) -> None:
    with gitlab_forge(gitlab) as client:
        client.keep_files("reconciler/records", {"records/eu/a.json": "1\n"}, "one")
        client.keep_files("reconciler/records", {"records/eu/a.json": "2\n",
                                                  "records/eu/b.json": "3\n"}, "two")  # fmt: skip
    start, files = gitlab.state.branches["reconciler/records"]
    assert start == "main" and files == {"records/eu/a.json": "2\n", "records/eu/b.json": "3\n"}
    made = [r.body for r in gitlab.requests if r.path.endswith("/repository/commits")]
    assert made[0]["start_branch"] == "main" and "force" not in made[1]
    assert [a["action"] for a in made[1]["actions"]] == ["update", "create"]
