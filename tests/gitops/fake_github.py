"""A fake of GitHub's REST API on a loopback port: the few endpoints the CI jobs call.

It answers in GitHub's documented shapes (issue comments, issues, pull requests with their
reviews and commits, users and teams' members, artifacts, workflow runs, the repository, a
comparison of two commits, deployments and their statuses, commit statuses, Git's database:
blobs, trees, commits and refs, a ref moved only by a fast forward unless forced),
pages lists the way GitHub does (`page`/`per_page`, a `Link` header with `next`, `last`,
`prev` and `first`), refuses requests without the expected bearer token as GitHub does (401
"Bad credentials") and a body over 65,536 characters (422 "Validation Failed"), and records
every request so a test can check what was sent.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from tests.gitops.fake_server import FakeServer
from tests.gitops.github_people import user

OWNER_REPO = "octo-org/workforce"
REPOSITORY_ID = 1296269
HTML = f"https://github.com/{OWNER_REPO}"


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    authorization: str | None


@dataclass
class State:
    """What the fake repository holds."""

    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    issues: list[dict[str, Any]] = field(default_factory=list)
    commit_pulls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    default_branch: str = "main"
    #: The commits the default branch holds: compare says "behind" (or "identical") for them.
    default_branch_commits: set[str] = field(default_factory=set)
    #: Deployments, oldest first (GitHub lists them newest first), and each one's statuses.
    deployments: list[dict[str, Any]] = field(default_factory=list)
    deployment_statuses: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    #: Commit statuses by commit, oldest first.
    statuses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    next_id: int = 9_000_000
    #: Git's database, as far as the API shows it: branch -> commit, commit -> (tree, parents,
    #: message), tree -> {path: text}. A commit the fake did not make (the test repository's)
    #: has a tree of its own with no file in it: a new tree then holds what was sent.
    refs: dict[str, str] = field(default_factory=dict)
    #: The test's git repository as GitHub holds it: where its branches are, unless `refs` says.
    remote: Path | None = None
    commits: dict[str, dict[str, Any]] = field(default_factory=dict)
    trees: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Each tree's files' modes, as sent: "100644", or "100755" (executable).
    modes: dict[str, dict[str, str]] = field(default_factory=dict)
    blobs: dict[str, str] = field(default_factory=dict)
    #: A pull request's reviews and commits, oldest first, as GitHub lists them.
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    pull_commits: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    #: The accounts (`GET /users/{login}`) and the teams' members by (org, slug).
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    teams: dict[tuple[str, str], list[str]] = field(default_factory=dict)


class FakeGitHub(FakeServer):
    """Start with `with FakeGitHub(token, page_size=2) as github:`; `.api_url` for the client."""

    json_type = "application/json; charset=utf-8"

    def __init__(self, token: str, *, page_size: int = 30, max_page_size: int = 100) -> None:
        super().__init__(token)
        self.page_size = page_size  # GitHub's default per_page is 30
        self.max_page_size = max_page_size  # and it honours per_page up to 100
        self.state = State()
        #: Statuses to answer the next requests of a method with (5xx faults), e.g. {"GET": [502]}.
        self.failures: dict[str, list[int]] = {}
        #: A status to answer every request of a path with, e.g. {".../pulls/31/reviews": 403}.
        self.faults: dict[str, int] = {}
        self.requests: list[Recorded] = []
        #: The fake's clock, for the times of deployments and their statuses (a test may move
        #: it back: a lock claim renewed long ago).
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    def now(self) -> str:
        return f"{self.clock().astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"

    def writes(self) -> list[Recorded]:
        return [request for request in self.requests if request.method != "GET"]

    def recorded(
        self, method: str, path: str, query: dict[str, str], body: Any, headers: Mapping[str, str]
    ) -> Recorded:
        return Recorded(method, path, query, body, headers.get("Authorization"))

    def answer(
        self, method: str, path: str, query: dict[str, str], body: Any, headers: Mapping[str, str]
    ) -> tuple[int, Any]:
        """A fault asked for, else GitHub's 401 and 422, else the route's answer."""
        if self.failures.get(method):
            return self.failures[method].pop(0), {"message": "Server Error"}
        if path in self.faults:
            status = self.faults[path]
            message = {403: "Resource not accessible by integration", 404: "Not Found"}
            return status, {"message": message.get(status, "Server Error"), "status": str(status)}
        if headers.get("Authorization") != f"Bearer {self.token}":
            return 401, {
                "message": "Bad credentials",
                "documentation_url": "https://docs.github.com/rest",
                "status": "401",
            }
        if (too_long := _too_long(body)) is not None:
            return 422, too_long
        status, answer = self.handle(method, path, query, body)
        return status, copy.deepcopy(answer)

    def finish(
        self, method: str, path: str, query: dict[str, str], status: int, answer: Any
    ) -> tuple[Any, dict[str, str]]:
        if method == "GET" and status == 200:
            return _page(self, path, query, answer)
        return answer, {}

    # --- routes ---------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        repo = f"/repos/{OWNER_REPO}"
        state = self.state
        if path == repo and method == "GET":
            return 200, {
                "id": REPOSITORY_ID,
                "name": OWNER_REPO.split("/")[1],
                "full_name": OWNER_REPO,
                "default_branch": state.default_branch,
                "html_url": HTML,
            }
        if not path.startswith(repo + "/"):
            return self._people(method, path)
        route = path[len(repo) :]
        if (match := re.fullmatch(r"/pulls/(\d+)/(reviews|commits)", route)) and method == "GET":
            number, kind = int(match.group(1)), match.group(2)
            if number not in state.pulls:
                return 404, _not_found()
            listed = state.reviews if kind == "reviews" else state.pull_commits
            return 200, listed.get(number, [])
        if (match := re.fullmatch(r"/pulls/(\d+)", route)) and method == "GET":
            pull = state.pulls.get(int(match.group(1)))
            return (200, pull) if pull is not None else (404, _not_found())
        if route == "/pulls" or re.fullmatch(r"/pulls/\d+", route):
            return self._pulls(method, route, query, body)
        if route.startswith("/git/"):
            return self._git(method, route[len("/git") :], body)
        if (match := re.fullmatch(r"/actions/runs/(\d+)", route)) and method == "GET":
            run = state.runs.get(int(match.group(1)))
            return (200, run) if run is not None else (404, _not_found())
        if (match := re.fullmatch(r"/compare/(.+)\.\.\.([0-9a-f]+)", route)) and method == "GET":
            if match.group(1) != state.default_branch:
                return 404, _not_found()
            head = match.group(2)
            if head in state.default_branch_commits:
                return 200, {"status": "behind", "ahead_by": 0, "behind_by": 1}
            return 200, {"status": "diverged", "ahead_by": 1, "behind_by": 1}
        if match := re.fullmatch(r"/issues/(\d+)/comments", route):
            number = int(match.group(1))
            if method == "GET":
                return 200, state.comments.get(number, [])
            if method == "POST":
                comment = self._new_comment(number, body["body"])
                state.comments.setdefault(number, []).append(comment)
                return 201, comment
        if (match := re.fullmatch(r"/issues/comments/(\d+)", route)) and method == "PATCH":
            for comments in state.comments.values():
                for comment in comments:
                    if comment["id"] == int(match.group(1)):
                        comment["body"] = body["body"]
                        comment["updated_at"] = "2026-11-21T12:00:00Z"
                        return 200, comment
            return 404, _not_found()
        if route == "/issues":
            if method == "GET":
                return 200, self._list_issues(query)
            if method == "POST":
                issue = self._new_issue(body)
                state.issues.append(issue)
                return 201, issue
        if (match := re.fullmatch(r"/issues/(\d+)", route)) and method == "PATCH":
            for issue in state.issues:
                if issue["number"] == int(match.group(1)):
                    changed = {key: body[key] for key in ("body", "state", "title") if key in body}
                    issue.update(changed)
                    if body.get("state") == "closed":
                        issue["state_reason"] = body.get("state_reason", "completed")
                    return 200, issue
            return 404, _not_found()
        if (match := re.fullmatch(r"/commits/([0-9a-f]+)/pulls", route)) and method == "GET":
            return 200, state.commit_pulls.get(match.group(1), [])
        if route.startswith(("/deployments", "/statuses/", "/commits/")):
            answered = self._deployments(method, route, query, body)
            if answered is not None:
                return answered
        if route == "/actions/artifacts" and method == "GET":
            name = query.get("name")
            found = [a for a in state.artifacts if name is None or a["name"] == name]
            return 200, {"total_count": len(found), "artifacts": found}
        return 404, _not_found()

    def _people(self, method: str, path: str) -> tuple[int, Any]:
        """`GET /users/{login}` and `GET /orgs/{org}/teams/{slug}/members`."""
        users = self.state.users
        if (match := re.fullmatch(r"/users/([^/]+)", path)) and method == "GET":
            found = users.get(match.group(1).lower())
            return (200, found) if found is not None else (404, _not_found())
        match = re.fullmatch(r"/orgs/([^/]+)/teams/([^/]+)/members", path)
        if match and method == "GET" and (match.group(1), match.group(2)) in self.state.teams:
            return 200, [users[login] for login in self.state.teams[match.groups()]]
        return 404, _not_found()

    def _deployments(
        self, method: str, route: str, query: dict[str, str], body: Any
    ) -> tuple[int, Any] | None:
        """Deployments, their statuses, and commit statuses, as GitHub's REST API has them."""
        state = self.state
        if route == "/deployments" and method == "GET":
            found = [
                d for d in reversed(state.deployments)
                if all(query.get(key) in (None, d[key]) for key in ("sha", "ref", "task",
                                                                    "environment"))
            ]  # fmt: skip
            return 200, found
        if route == "/deployments" and method == "POST":
            if not isinstance(body, dict) or not isinstance(body.get("ref"), str):
                return 422, {"message": 'Invalid request.\n\n"ref" wasn\'t supplied.'}
            deployment = self._new_deployment(body)
            state.deployments.append(deployment)
            state.deployment_statuses[deployment["id"]] = []
            return 201, deployment
        match = re.fullmatch(r"/deployments/(\d+)", route)
        if match is not None and method == "DELETE":
            return self._delete_deployment(int(match.group(1)))
        match = re.fullmatch(r"/deployments/(\d+)/statuses", route)
        if match is not None:
            listed = state.deployment_statuses.get(int(match.group(1)))
            if listed is None:
                return 404, _not_found()
            if method == "GET":
                return 200, list(reversed(listed))
            if method == "POST":
                if body.get("state") not in _DEPLOYMENT_STATES:
                    return 422, {"message": "Validation Failed",
                                 "errors": [{"field": "state", "code": "invalid"}]}  # fmt: skip
                status = self._new_status(body, deployment_id=int(match.group(1)))
                listed.append(status)
                return 201, status
        match = re.fullmatch(r"/statuses/([0-9a-f]{40})", route)
        if match is not None and method == "POST":
            if body.get("state") not in ("error", "failure", "pending", "success"):
                return 422, {"message": "Validation Failed",
                             "errors": [{"field": "state", "code": "invalid"}]}  # fmt: skip
            status = self._new_status(body)
            state.statuses.setdefault(match.group(1), []).append(status)
            return 201, status
        match = re.fullmatch(r"/commits/([0-9a-f]{40})/statuses", route)
        if match is not None and method == "GET":
            return 200, list(reversed(state.statuses.get(match.group(1), [])))
        return None

    def _delete_deployment(self, deployment_id: int) -> tuple[int, Any]:
        """GitHub deletes an inactive deployment only (or the only one of its environment)."""
        state = self.state
        found = [d for d in state.deployments if d["id"] == deployment_id]
        if not found:
            return 404, _not_found()
        listed = state.deployment_statuses[deployment_id]
        if not listed or listed[-1]["state"] != "inactive":
            return 422, {"message": "We cannot delete an active deployment unless it is the "
                         "only deployment in a given environment."}  # fmt: skip
        state.deployments.remove(found[0])
        del state.deployment_statuses[deployment_id]
        return 204, None

    def _new_deployment(self, body: dict[str, Any]) -> dict[str, Any]:
        deployment_id = self._new_id()
        environment = body.get("environment", "production")
        return {
            "url": f"https://api.github.com/repos/{OWNER_REPO}/deployments/{deployment_id}",
            "id": deployment_id,
            "node_id": f"DE_{deployment_id}",
            "sha": body["ref"],
            "ref": body["ref"],
            "task": body.get("task", "deploy"),
            "payload": body.get("payload", {}),
            "original_environment": environment,
            "environment": environment,
            "description": body.get("description"),
            "creator": _bot(),
            "created_at": self.now(),
            "updated_at": self.now(),
            "transient_environment": bool(body.get("transient_environment", False)),
            "production_environment": bool(
                body.get("production_environment", environment == "production")
            ),
        }

    def _new_status(self, body: dict[str, Any], deployment_id: int | None = None) -> dict[str, Any]:
        status_id = self._new_id()
        status = {
            "id": status_id,
            "node_id": f"SC_{status_id}",
            "state": body["state"],
            "description": body.get("description", ""),
            "creator": _bot(),
            "created_at": self.now(),
            "updated_at": self.now(),
        }
        if deployment_id is None:
            status |= {"context": body.get("context", "default"),
                       "target_url": body.get("target_url")}  # fmt: skip
        else:
            status |= {"log_url": body.get("log_url", ""), "environment": body.get("environment"),
                       "deployment_url": f"https://api.github.com/repos/{OWNER_REPO}/deployments/"
                       f"{deployment_id}"}  # fmt: skip
        return status

    def _pulls(self, method: str, route: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        """List (`state`, `head` as `owner:branch`), open and change pull requests."""
        pulls = self.state.pulls
        if route == "/pulls" and method == "GET":
            wanted = query.get("state", "open")
            owner, _, branch = query.get("head", ":").partition(":")
            return 200, [
                pull
                for pull in pulls.values()
                if (wanted == "all" or pull["state"] == wanted)
                and (not branch or (pull["head"].get("ref") == branch and owner == "octo-org"))
            ]
        if route == "/pulls" and method == "POST":
            if body["head"] not in self.state.refs:
                return 422, {"message": "Validation Failed", "errors": [{"field": "head"}]}
            taken = [issue["number"] for issue in self.state.issues] + list(pulls)
            number = max(taken, default=0) + 1
            pull = pull_request(number, self.state.refs[body["head"]])
            head = {"ref": body["head"], "sha": self.state.refs[body["head"]]}
            pull |= {"title": body["title"], "body": body.get("body"), "head": head,
                     "base": {"ref": body["base"]}}  # fmt: skip
            pull["html_url"] = f"{HTML}/pull/{number}"
            pulls[number] = pull
            return 201, pull
        number = int(route.rsplit("/", 1)[1])
        if method == "PATCH" and number in pulls:
            pulls[number].update({k: body[k] for k in ("body", "state", "title") if k in body})
            return 200, pulls[number]
        return 404, _not_found()

    def _git(self, method: str, route: str, body: Any) -> tuple[int, Any]:
        """Git's database: commits, trees and branches (refs/heads/...)."""
        state = self.state
        if (match := re.fullmatch(r"/commits/([0-9a-f]{40})", route)) and method == "GET":
            sha = match.group(1)
            made = state.commits.get(sha)
            tree = made["tree"] if made else _sha("tree of", sha)
            state.trees.setdefault(tree, {})
            parents = [{"sha": parent} for parent in (made or {}).get("parents", [])]
            return 200, {"sha": sha, "tree": {"sha": tree}, "parents": parents}
        if route == "/blobs" and method == "POST":
            sha = _sha("blob", body["content"])
            state.blobs[sha] = body["content"]
            return 201, {"sha": sha, "url": f"https://api.github.com/repos/{OWNER_REPO}/git/"
                         f"blobs/{sha}"}  # fmt: skip
        if route == "/trees" and method == "POST":
            files = dict(state.trees.get(body.get("base_tree"), {}))
            modes = dict(state.modes.get(body.get("base_tree"), {}))
            for entry in body["tree"]:
                if entry.get("mode") not in ("100644", "100755"):
                    return 422, {"message": f"Invalid tree info: mode {entry.get('mode')}"}
                if "sha" in entry and entry["sha"] not in state.blobs:
                    return 422, {"message": "Invalid tree info", "status": "422"}
                files[entry["path"]] = entry["content"] if "content" in entry else (
                    state.blobs[entry["sha"]]
                )  # fmt: skip
                modes[entry["path"]] = entry["mode"]
            sha = _sha("tree", [files, modes])
            state.trees[sha], state.modes[sha] = files, modes
            return 201, {"sha": sha, "tree": []}
        if route == "/commits" and method == "POST":
            sha = _sha("commit", body)
            state.commits[sha] = dict(body)
            return 201, {"sha": sha, "tree": {"sha": body["tree"]}, "parents": body["parents"]}
        if route == "/refs" and method == "POST":
            branch = body["ref"].removeprefix("refs/heads/")
            if branch in state.refs:
                return 422, {"message": "Reference already exists"}
            state.refs[branch] = body["sha"]
            return 201, _ref(branch, body["sha"])
        match = re.fullmatch(r"/refs?/heads/(.+)", route)
        if match is not None and method == "GET" and match.group(1) not in state.refs:
            pushed = self._pushed(match.group(1))
            return (200, _ref(match.group(1), pushed)) if pushed else (404, _not_found())
        if match is None or match.group(1) not in state.refs:
            return 404, _not_found()
        branch = match.group(1)
        if method == "GET":
            return 200, _ref(branch, state.refs[branch])
        if method == "PATCH":
            if not body.get("force") and not self._descends(body["sha"], state.refs[branch]):
                return 422, {"message": "Update is not a fast forward", "status": "422"}
            state.refs[branch] = body["sha"]
            return 200, _ref(branch, body["sha"])
        if method == "DELETE":
            del state.refs[branch]
            return 204, None
        return 404, _not_found()

    def _descends(self, sha: str, ancestor: str) -> bool:
        """Whether the fake's commit `sha` has `ancestor` in its history."""
        seen, todo = set(), [sha]
        while todo:
            one = todo.pop()
            if one == ancestor:
                return True
            if one not in seen:
                seen.add(one)
                todo += self.state.commits.get(one, {}).get("parents", [])
        return False

    def _pushed(self, branch: str) -> str | None:
        """Where `branch` is in the test's git repository (None: no repository, no branch)."""
        if self.state.remote is None:
            return None
        done = subprocess.run(
            ["git", "-C", str(self.state.remote), "rev-parse", "--verify", "--quiet",
             f"refs/heads/{branch}^{{commit}}"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        return done.stdout.strip() or None

    def branch_modes(self, branch: str) -> dict[str, str]:
        """The modes of those files ("100644", "100755")."""
        return self.state.modes[self.state.commits[self.state.refs[branch]]["tree"]]

    def branch_files(self, branch: str) -> dict[str, str]:
        """The files the fake's commit at the tip of `branch` holds (those it was sent)."""
        return self.state.trees[self.state.commits[self.state.refs[branch]]["tree"]]

    def _list_issues(self, query: dict[str, str]) -> list[dict[str, Any]]:
        wanted = query.get("state", "open")
        labels = set(filter(None, query.get("labels", "").split(",")))
        return [
            issue
            for issue in self.state.issues
            if (wanted == "all" or issue["state"] == wanted)
            and labels <= {label["name"] for label in issue["labels"]}
        ]

    def _new_id(self) -> int:
        self.state.next_id += 1
        return self.state.next_id

    def _new_comment(self, number: int, body: str) -> dict[str, Any]:
        comment_id = self._new_id()
        return {
            "id": comment_id,
            "node_id": f"IC_{comment_id}",
            "url": f"https://api.github.com/repos/{OWNER_REPO}/issues/comments/{comment_id}",
            "html_url": f"{HTML}/pull/{number}#issuecomment-{comment_id}",
            "body": body,
            "user": _bot(),
            "created_at": "2026-11-21T12:00:00Z",
            "updated_at": "2026-11-21T12:00:00Z",
            "issue_url": f"https://api.github.com/repos/{OWNER_REPO}/issues/{number}",
            "author_association": "NONE",
        }

    def _new_issue(self, body: dict[str, Any]) -> dict[str, Any]:
        taken = [issue["number"] for issue in self.state.issues] + list(self.state.pulls)
        number = max(taken, default=0) + 1  # issues and pull requests share their numbers
        return {
            "id": self._new_id(),
            "number": number,
            "title": body["title"],
            "body": body.get("body"),
            "state": "open",
            "state_reason": None,
            "labels": [{"name": name, "color": "ededed"} for name in body.get("labels", [])],
            "user": _bot(),
            "html_url": f"{HTML}/issues/{number}",
            "url": f"https://api.github.com/repos/{OWNER_REPO}/issues/{number}",
            "created_at": "2026-11-21T12:00:00Z",
        }


def _sha(kind: str, value: Any) -> str:
    return hashlib.sha1(f"{kind} {json.dumps(value, sort_keys=True)}".encode()).hexdigest()


def _ref(branch: str, sha: str) -> dict[str, Any]:
    return {"ref": f"refs/heads/{branch}", "object": {"sha": sha, "type": "commit"}}


def _bot() -> dict[str, Any]:
    return {"login": "github-actions[bot]", "id": 41898282, "type": "Bot", "site_admin": False}


#: The states a deployment status takes.
_DEPLOYMENT_STATES = ("error", "failure", "inactive", "in_progress", "queued", "pending", "success")

#: GitHub's limit on a comment's or an issue's body, in characters.
BODY_LIMIT = 65_536


def _too_long(body: Any) -> dict[str, Any] | None:
    """GitHub's 422 for a body over its limit, as it answers it."""
    if not isinstance(body, dict) or not isinstance(body.get("body"), str):
        return None
    if len(body["body"]) <= BODY_LIMIT:
        return None
    return {
        "message": "Validation Failed",
        "errors": [
            {
                "resource": "IssueComment",
                "code": "custom",
                "field": "body",
                "message": f"body is too long (maximum is {BODY_LIMIT} characters)",
            }
        ],
        "documentation_url": "https://docs.github.com/rest/issues/comments",
        "status": "422",
    }


def _not_found() -> dict[str, str]:
    return {
        "message": "Not Found",
        "documentation_url": "https://docs.github.com/rest",
        "status": "404",
    }


def _page(
    fake: FakeGitHub, path: str, query: dict[str, str], answer: Any
) -> tuple[Any, dict[str, str]]:
    """Cut a list (or a wrapped list) to one page and write GitHub's Link header."""
    items = answer if isinstance(answer, list) else answer.get("artifacts")
    if items is None:
        return answer, {}
    per_page = min(int(query.get("per_page", fake.page_size)), fake.max_page_size)
    page = int(query.get("page", 1))
    last = max(1, -(-len(items) // per_page))
    chunk = items[(page - 1) * per_page : page * per_page]
    answer = chunk if isinstance(answer, list) else {**answer, "artifacts": chunk}

    def url(number: int) -> str:
        return f"{fake.api_url}{path}?{urlencode({**query, 'page': number})}"

    links = []
    if page < last:
        links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
    if page > 1:
        links += [f'<{url(1)}>; rel="first"', f'<{url(page - 1)}>; rel="prev"']
    return answer, {"Link": ", ".join(links)} if links else {}


def workflow_run(
    run_id: int,
    head_sha: str,
    *,
    branch: str = "main",
    path: str = ".github/workflows/reconciler-plan.yml",
    event: str = "workflow_dispatch",
    repository_id: int = REPOSITORY_ID,
) -> dict[str, Any]:
    """A workflow run as "Get a workflow run" answers it (the fields the reconciler reads)."""
    return {
        "id": run_id,
        "name": "reconciler plan",
        "path": path,
        "event": event,
        "status": "completed",
        "conclusion": "success",
        "head_branch": branch,
        "head_sha": head_sha,
        "workflow_id": 161335,
        "html_url": f"{HTML}/actions/runs/{run_id}",
        "repository": {"id": REPOSITORY_ID, "full_name": OWNER_REPO},
        "head_repository": {"id": repository_id, "full_name": OWNER_REPO},
    }


def pull_request(
    number: int, head_sha: str, *, state: str = "open", author: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A pull request as "Get a pull request" answers it (the fields the reconciler reads)."""
    return {
        "url": f"https://api.github.com/repos/{OWNER_REPO}/pulls/{number}",
        "number": number,
        "state": state,
        "title": "Change the workforce",
        "user": author or user("octocat", 583231),
        "merged_at": None,
        "merge_commit_sha": None,
        "merged_by": None,
        "commits": 1,
        "head": {"ref": "change", "sha": head_sha, "label": "octo-org:change"},
        "base": {"ref": "main", "sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6"},
    }
