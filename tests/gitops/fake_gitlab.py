"""A fake of GitLab's REST API (v4) on a loopback port: the few endpoints the pipeline's jobs
call (examples/gitlab/accounts.gitlab-ci.yml and its child pipeline).

It answers in GitLab's documented shapes (merge request notes, a commit's merge requests, a
merge request and its approvals, the project's approval settings and users, a pipeline's jobs
and trigger jobs, a job's artifacts archive as a zip, an environment's deployments, which the
runner makes as GitLab does, the commits API, a branch and a file of it), refuses a request
without the expected `PRIVATE-TOKEN` as GitLab does (401), and records every request.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from tests.gitops.fake_server import FakeServer

PROJECT_ID = 4242
#: The commit the default branch `main` is at, as the branches API says.
MAIN_HEAD = "5" * 40
#: The approval settings the reconciler asks for (`GET /projects/:id/approvals`).
SAFE_SETTINGS = {
    "approvals_before_merge": 0,
    "reset_approvals_on_push": True,
    "disable_overriding_approvers_per_merge_request": False,
    "merge_requests_author_approval": False,
    "merge_requests_disable_committers_approval": True,
    "require_password_to_approve": False,
}


@dataclass
class Recorded:
    method: str
    path: str
    body: Any
    token: str | None


@dataclass
class State:
    """What the fake project holds."""

    notes: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # merge request iid
    merge_requests: dict[int, dict[str, Any]] = field(default_factory=dict)
    commit_merge_requests: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    pipeline_jobs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    #: A pipeline's trigger jobs, each with its `downstream_pipeline` (a child pipeline).
    pipeline_bridges: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    #: The deployments GitLab made of jobs with an environment, oldest first.
    deployments: list[dict[str, Any]] = field(default_factory=list)
    #: A job's artifacts: the folder its `artifacts:paths` were kept in (zipped when asked).
    job_artifacts: dict[int, Path] = field(default_factory=dict)
    next_id: int = 700
    #: Branches the commits API made: name -> (the commit it started from, {path: text}).
    branches: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    #: The commit each of those branches is at.
    heads: dict[str, str] = field(default_factory=dict)
    #: The files of each of those branches the commits API made executable (`chmod`).
    executable: dict[str, set[str]] = field(default_factory=dict)
    #: Each merge request's approvals (`approved_by` entries), and the project's settings.
    approvals: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    approval_settings: dict[str, Any] = field(default_factory=lambda: dict(SAFE_SETTINGS))
    #: The project's users (`GET /projects/:id/users`).
    users: list[dict[str, Any]] = field(default_factory=list)
    default_branch: str = "main"


class FakeGitLab(FakeServer):
    """Start with `with FakeGitLab(token) as gitlab:`; `.api_url` is CI_API_V4_URL."""

    api_path = "/api/v4"

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.state = State()
        self.requests: list[Recorded] = []
        #: A status to answer every request of a path with (under /api/v4), e.g. 403.
        self.faults: dict[str, int] = {}

    def recorded(
        self, method: str, path: str, query: dict[str, str], body: Any, headers: Mapping[str, str]
    ) -> Recorded:
        return Recorded(method, path, body, headers.get("PRIVATE-TOKEN"))

    def answer(
        self, method: str, path: str, query: dict[str, str], body: Any, headers: Mapping[str, str]
    ) -> tuple[int, Any]:
        """GitLab's 401 without the token, else the route's answer."""
        if headers.get("PRIVATE-TOKEN") != self.token:
            return 401, {"message": "401 Unauthorized"}
        if path in self.faults:
            return self.faults[path], {"message": f"{self.faults[path]} Forbidden"}
        return self.handle(method, path, query, body)

    def handle(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        project = f"/api/v4/projects/{PROJECT_ID}"
        if not path.startswith(project + "/") and path != project:
            return 404, {"message": "404 Project Not Found"}
        route, state = path[len(project) :], self.state
        if match := re.fullmatch(r"/merge_requests/(\d+)/notes", route):
            notes = state.notes.setdefault(int(match[1]), [])
            if method == "GET":  # newest first, as GitLab sorts them by default
                per_page = int(query.get("per_page", 20))
                return 200, list(reversed(notes))[:per_page]
            if method == "POST":
                state.next_id += 1
                note = {"id": state.next_id, "body": body["body"], "system": False}
                notes.append(note)
                return 201, note
        if (match := re.fullmatch(r"/merge_requests/(\d+)/notes/(\d+)", route)) and method == "PUT":
            for note in self.state.notes.get(int(match[1]), []):
                if note["id"] == int(match[2]):
                    note["body"] = body["body"]
                    return 200, note
            return 404, {"message": "404 Not found"}
        if route == "/deployments" and method == "POST":
            return self._new_deployment(body)
        if (match := re.fullmatch(r"/deployments/(\d+)", route)) and method == "PUT":
            return self._update_deployment(int(match[1]), body)
        if route == "/repository/commits" and method == "POST":
            return self._commit(body)
        if (match := re.fullmatch(r"/repository/branches/(.+)", route)) and method == "DELETE":
            name = unquote(match[1])
            return (204, None) if state.branches.pop(name, None) else (404, {"message": "404"})
        if route == "/merge_requests" and method in ("GET", "POST"):
            return self._merge_requests(method, query, body)
        if (match := re.fullmatch(r"/merge_requests/(\d+)", route)) and method == "PUT":
            request = state.merge_requests.get(int(match[1]))
            if request is None:
                return 404, {"message": "404 Not found"}
            if "description" in body:
                request["description"] = body["description"]
            if body.get("state_event") == "close":
                request["state"] = "closed"
            return 200, request
        if method != "GET":
            return 405, {"message": "405 Method Not Allowed"}
        answered = self._approvals(route, query)
        if answered is not None:
            return answered
        if match := re.fullmatch(r"/repository/commits/([0-9a-f]+)/merge_requests", route):
            return 200, state.commit_merge_requests.get(match[1], [])
        if (match := re.fullmatch(r"/merge_requests/(\d+)", route)) and int(
            match[1]
        ) in state.merge_requests:
            return 200, state.merge_requests[int(match[1])]
        if match := re.fullmatch(r"/pipelines/(\d+)/jobs", route):
            return 200, state.pipeline_jobs.get(int(match[1]), [])
        if match := re.fullmatch(r"/pipelines/(\d+)/bridges", route):
            return 200, state.pipeline_bridges.get(int(match[1]), [])
        if route == "/deployments":
            return 200, self._deployments(query)
        if route == "/repository/branches/main":
            return 200, {"name": "main", "commit": {"id": MAIN_HEAD}}
        if (match := re.fullmatch(r"/repository/branches/(.+)", route)) and unquote(
            match[1]
        ) in state.branches:
            return 200, {
                "name": unquote(match[1]),
                "commit": {"id": state.heads[unquote(match[1])]},
            }
        if (match := re.fullmatch(r"/jobs/(\d+)/artifacts", route)) and int(
            match[1]
        ) in state.job_artifacts:
            return 200, _zipped(state.job_artifacts[int(match[1])])
        return 404, {"message": "404 Not found"}

    def deploy(self, environment: str, sha: str, job_url: str, status: str) -> dict[str, Any]:
        """GitLab's deployment of a job that names `environment` (its status is the job's)."""
        self.state.next_id += 1
        deployment = {
            "id": self.state.next_id, "iid": len(self.state.deployments) + 1, "sha": sha,
            "ref": "main", "status": status, "environment": {"name": environment},
            "deployable": {"id": self.state.next_id, "web_url": job_url, "status": status},
        }  # fmt: skip
        self.state.deployments.append(deployment)
        return deployment

    def _new_deployment(self, body: Any) -> tuple[int, Any]:
        """The Deployments API's create: environment, sha, ref, tag and status all needed."""
        if not all(key in body for key in ("environment", "sha", "ref", "tag", "status")):
            return 400, {"message": "environment, sha, ref, tag, status are missing"}
        if body["status"] not in ("running", "success", "failed", "canceled"):
            return 400, {"error": "status does not have a valid value"}
        self.state.next_id += 1
        now = f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%S.000Z}"
        deployment = {
            "id": self.state.next_id, "iid": len(self.state.deployments) + 1,
            "sha": body["sha"], "ref": body["ref"], "status": body["status"],
            "environment": {"name": body["environment"]}, "deployable": None,
            "user": {"username": "project_4242_bot"}, "created_at": now, "updated_at": now,
        }  # fmt: skip
        self.state.deployments.append(deployment)
        return 201, deployment

    def _update_deployment(self, deployment_id: int, body: Any) -> tuple[int, Any]:
        """GitLab's transitions: a running deployment ends (success, failed, canceled); it is
        never made running again."""
        found = next((d for d in self.state.deployments if d["id"] == deployment_id), None)
        if found is None:
            return 404, {"message": "404 Not found"}
        if body.get("status") not in ("success", "failed", "canceled") or found["status"] != (
            "running"
        ):
            return 400, {"message": f"cannot change a {found['status']} deployment to "
                         f"{body.get('status')}"}  # fmt: skip
        found["status"] = body["status"]
        return 200, found

    def _deployments(self, query: dict[str, str]) -> list[dict[str, Any]]:
        """The Deployments API's list: `environment` and `status` filters, `order_by=id`
        (the only order this fake knows), `sort` asc (default) or desc, `per_page`."""
        assert query.get("order_by", "id") == "id", query
        found = [
            d for d in self.state.deployments
            if query.get("environment") in (None, d["environment"]["name"])
            and query.get("status") in (None, d["status"])
        ]  # fmt: skip
        found.sort(key=lambda d: d["id"], reverse=query.get("sort") == "desc")
        return found[: int(query.get("per_page", 20))]

    def _approvals(self, route: str, query: dict[str, str]) -> tuple[int, Any] | None:
        """A merge request's approvals, the project's settings and users, a file (a branch is
        answered with the routes after: `main`, and the branches commits made)."""
        state = self.state
        if match := re.fullmatch(r"/merge_requests/(\d+)/approvals", route):
            if int(match[1]) not in state.merge_requests:
                return 404, {"message": "404 Not found"}
            given = state.approvals.get(int(match[1]), [])
            return 200, {"iid": int(match[1]), "approved": bool(given), "approved_by": given}
        if route == "/approvals":
            return 200, state.approval_settings
        if route == "/users":
            wanted = query.get("search", "").lower()
            return 200, [u for u in state.users if wanted in u["username"].lower()]
        if route == "":
            return 200, {"id": PROJECT_ID, "default_branch": state.default_branch}
        if match := re.fullmatch(r"/repository/files/([^/]+)", route):
            files = state.branches.get(query.get("ref", ""), ("", {}))[1]
            path = unquote(match[1])
            if path not in files:
                return 404, {"message": "404 File Not Found"}
            return 200, {"file_path": path, "content": files[path], "encoding": "text"}
        return None

    def _commit(self, body: dict[str, Any]) -> tuple[int, Any]:
        """The commits API: with `start_sha` and `force` the branch is made again from it;
        with `start_branch`, a new branch from it; else a commit on the branch's head. A file
        `create`d that is there, or `update`d that is not, refuses the commit (400)."""
        branch, start = body["branch"], body.get("start_sha") or body.get("start_branch")
        known = self.state.branches.get(branch)
        if known is not None and body.get("force"):
            known = None
        elif known is not None and start is not None:
            return 400, {"message": "A branch called this already exists"}
        elif known is None and start is None:
            return 400, {"message": "You can only create or edit files when you are on a branch"}
        files: dict[str, str] = dict(known[1]) if known is not None else {}
        executable = set(self.state.executable.get(branch, ())) if known is not None else set()
        for action in body["actions"]:
            if action["action"] == "chmod":  # GitLab's only way to set the execute flag
                if action["file_path"] not in files:
                    return 400, {"message": "A file with this name doesn't exist"}
                if action.get("execute_filemode"):
                    executable.add(action["file_path"])
                continue
            there = action["file_path"] in files
            if action["action"] not in ("create", "update"):
                return 400, {"message": f"unknown action {action['action']}"}
            if there != (action["action"] == "update") and known is not None:
                said = "already exists" if there else "doesn't exist"
                return 400, {"message": f"A file with this name {said}"}
            files[action["file_path"]] = action["content"]
        self.state.branches[branch] = (known[0] if known is not None else start, files)
        self.state.executable[branch] = executable
        self.state.next_id += 1
        self.state.heads[branch] = f"{self.state.next_id:040x}"
        return 201, {"id": self.state.heads[branch], "message": body["commit_message"]}

    def _merge_requests(self, method: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        requests = self.state.merge_requests
        if method == "GET":
            wanted, branch = query.get("state", "all"), query.get("source_branch")
            return 200, [
                request
                for request in requests.values()
                if wanted in ("all", request["state"])
                and branch in (None, request["source_branch"])
            ]
        if body["source_branch"] not in self.state.branches:
            return 400, {"message": "Source branch does not exist"}
        iid = max(requests, default=0) + 1
        requests[iid] = {
            "iid": iid,
            "state": "opened",
            "title": body["title"],
            "description": body["description"],
            "source_branch": body["source_branch"],
            "target_branch": body["target_branch"],
            "source_project_id": PROJECT_ID,  # a fork's merge request names the fork here
            "target_project_id": PROJECT_ID,
            "web_url": f"https://gitlab.example.com/platform/workforce/-/merge_requests/{iid}",
        }
        return 201, requests[iid]


def _zipped(folder: Path) -> bytes:
    """The artifacts archive: the job's paths, relative to its workspace."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(folder).as_posix())
    return data.getvalue()
