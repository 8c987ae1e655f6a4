"""`reconciler github pr-comment` against a fake GitHub: one plan comment, found again, updated.

The fixture `pr_comments.json` is a pull request's comments in the shape GitHub documents for
`GET /repos/{owner}/{repo}/issues/{number}/comments`, with look-alikes around the one comment
that is ours: a person quoting it, a person's copy of it, another account's plan, a comment
that carries the marker below its first line, and a marker that only starts like ours. The
fake pages two comments at a time, so ours sits on page 3 of 4 behind `Link` headers.
"""

from __future__ import annotations

import copy
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.gitops.github import GitHub, GitHubConfigError, GitHubError
from reconciler.gitops.github.forge import GitHubForge, find_marked
from reconciler.gitops.notes import upsert_note
from reconciler.render.marker import PLAN, Marker
from reconciler.secrets import Secret
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
from tests.gitops.support import FIXTURES, reconciler

TOKEN = "ghs_" + secrets.token_urlsafe(27)
PR = 42
OURS = 1006
COMMENTS: list[dict[str, Any]] = json.loads((FIXTURES / "pr_comments.json").read_text())
NEW_BODY = "<!-- reconciler:plan -->\n### reconciler plan\n\nNow: 1 to invite, 1 to inactivate.\n"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN, max_page_size=2) as fake:
        fake.state.comments[PR] = copy.deepcopy(COMMENTS)
        yield fake


def post(fake: FakeGitHub, body_file: Path, *args: str, token: str = TOKEN) -> Any:
    return reconciler(
        "github", "pr-comment", "--pr", str(PR), "--body-file", str(body_file), *args,
        GITHUB_TOKEN=token, GITHUB_REPOSITORY=OWNER_REPO, GITHUB_API_URL=fake.api_url,
    )  # fmt: skip


def body_file(tmp_path: Path, text: str = NEW_BODY) -> Path:
    path = tmp_path / "comment.md"
    path.write_text(text)
    return path


def test_updates_our_comment_behind_link_pages_and_touches_no_look_alike(
    github: FakeGitHub, tmp_path: Path
) -> None:
    result = post(github, body_file(tmp_path))

    assert result.returncode == 0, result.stderr
    page = f"https://github.com/{OWNER_REPO}/pull/42#issuecomment-{OURS}"
    assert f"updated the plan comment: {page}" in result.stdout
    pages = [r.query.get("page", "1") for r in github.requests if r.method == "GET"]
    assert pages == ["1", "2", "3"]  # followed `next` until ours was found, not further
    assert [(r.method, r.path, r.body) for r in github.writes()] == [
        ("PATCH", f"/repos/{OWNER_REPO}/issues/comments/{OURS}", {"body": NEW_BODY})
    ]
    after = {c["id"]: c["body"] for c in github.state.comments[PR]}
    before = {c["id"]: c["body"] for c in COMMENTS}
    assert after == before | {OURS: NEW_BODY}
    assert all(r.authorization == f"Bearer {TOKEN}" for r in github.requests)


def client(fake: FakeGitHub) -> GitHubForge:
    return GitHubForge(OWNER_REPO, Secret(TOKEN), api_url=fake.api_url, backoff=0.01)


def test_creates_one_comment_then_finds_it_again(github: FakeGitHub) -> None:
    github.state.comments[PR] = [c for c in COMMENTS if c["id"] != OURS]

    with client(github) as api:
        actions = [
            upsert_note(api, PR, body, Marker(PLAN)).action
            for body in (
                "### plan\n\n2 to invite.\n",
                "### plan\n\n2 to invite.\n",
                "### plan\n\n3\n",
            )
        ]

    assert actions == ["created", "unchanged", "updated"]  # the same bytes are not written
    ours = [c for c in github.state.comments[PR] if Marker(PLAN).matches(c["body"])]
    mine = [c for c in ours if c["user"]["login"] == "github-actions[bot]"]
    assert len(mine) == 1  # never duplicated; the marker was added to the body
    assert mine[0]["body"] == "<!-- reconciler:plan -->\n### plan\n\n3\n"
    assert [r.method for r in github.writes()] == ["POST", "PATCH"]


def test_a_key_selects_that_accounts_comment_only(github: FakeGitHub) -> None:
    with client(github) as api:
        result = upsert_note(api, PR, "staging now\n", Marker(PLAN, "staging"))

    assert (result.action, result.comment_id) == ("updated", 1004)
    assert [(r.method, r.path) for r in github.writes()] == [
        ("PATCH", f"/repos/{OWNER_REPO}/issues/comments/1004")
    ]
    updated = next(c for c in github.state.comments[PR] if c["id"] == 1004)
    assert updated["body"] == '<!-- reconciler:plan key="staging" -->\nstaging now\n'


def test_the_apply_comment_is_a_comment_of_its_own(github: FakeGitHub, tmp_path: Path) -> None:
    result = post(github, body_file(tmp_path, "Not applied.\n"), "--purpose", "apply")

    assert result.returncode == 0, result.stderr
    assert [r.method for r in github.writes()] == ["POST"]
    assert github.state.comments[PR][-1]["body"] == "<!-- reconciler:apply -->\nNot applied.\n"
    assert {c["id"]: c["body"] for c in github.state.comments[PR][:-1]} == {
        c["id"]: c["body"] for c in COMMENTS
    }


def test_a_bad_token_is_a_clear_error_that_does_not_echo_it(
    github: FakeGitHub, tmp_path: Path
) -> None:
    wrong = "ghs_" + secrets.token_urlsafe(27)
    result = post(github, body_file(tmp_path), token=wrong)

    assert result.returncode == 1
    assert "GitHub refused GET" in result.stderr and "401 Bad credentials" in result.stderr
    assert "hint: the token is missing or invalid" in result.stderr
    assert "Traceback" not in result.stderr
    assert wrong not in result.stdout + result.stderr
    assert github.writes() == []


@pytest.mark.parametrize(
    ("environ", "said"),
    [
        ({"GITHUB_REPOSITORY": OWNER_REPO}, "GITHUB_TOKEN is not set"),
        ({"GITHUB_TOKEN": TOKEN}, "GITHUB_REPOSITORY is not set"),
        ({"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": "just-a-name"}, "not of the form owner/name"),
        (
            {
                "GITHUB_TOKEN": TOKEN,
                "GITHUB_REPOSITORY": OWNER_REPO,
                "GITHUB_API_URL": "http://ghe.corp",
            },
            "refusing plain http:// to ghe.corp",
        ),
        (
            {
                "GITHUB_TOKEN": TOKEN,
                "GITHUB_REPOSITORY": OWNER_REPO,
                "GITHUB_API_URL": "https://x:hunter22@ghe.corp/api/v3",
            },
            "must not carry credentials",
        ),
    ],
)
def test_without_a_token_or_repository_the_job_is_told_what_to_set(
    environ: dict[str, str], said: str
) -> None:
    with pytest.raises(GitHubConfigError, match=said) as raised:
        GitHub.from_environment(environ)
    assert raised.value.hint
    assert "hunter22" not in str(raised.value)


@pytest.mark.parametrize(
    ("author", "expected"),
    [("github-actions[bot]", OURS), ("mallory", 1003), (None, 1003), ("nobody", None)],
)
def test_find_marked_checks_the_author_when_told(author: str | None, expected: int | None) -> None:
    found = find_marked(COMMENTS, Marker(PLAN), author)
    assert (found["id"] if found is not None else None) == expected


def test_a_next_link_to_another_host_is_not_followed_with_the_token() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url.host))
        link = '<https://elsewhere.example/steal?page=2>; rel="next"'
        return httpx.Response(200, json=[COMMENTS[0]], headers={"Link": link})

    client = GitHubForge(OWNER_REPO, Secret(TOKEN), transport=httpx.MockTransport(answer))
    with client, pytest.raises(GitHubError, match="another host"):
        upsert_note(client, PR, "body", Marker(PLAN))
    assert seen == ["api.github.com"]


def test_a_github_failure_is_retried_only_where_repeating_is_safe(github: FakeGitHub) -> None:
    github.failures = {"GET": [502, 503], "PATCH": [502]}
    with client(github) as api:
        assert upsert_note(api, PR, "new\n", Marker(PLAN)).action == "updated"
    assert [r.method for r in github.requests].count("PATCH") == 2  # the failed one, again

    github.state.comments[PR] = []
    github.requests.clear()
    github.failures = {"POST": [502]}
    with client(github) as api, pytest.raises(GitHubError, match=r"refused POST .*: 502"):
        upsert_note(api, PR, "new\n", Marker(PLAN))
    assert [r.method for r in github.requests].count("POST") == 1  # a second could duplicate

    github.failures = {"GET": [500, 500, 500]}
    with client(github) as api, pytest.raises(GitHubError, match=r"refused GET .*: 500"):
        upsert_note(api, PR, "new\n", Marker(PLAN))
