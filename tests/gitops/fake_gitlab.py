"""A fake of GitLab's REST API (v4) on a loopback port: the few endpoints the pipeline's
`comment` and `apply` jobs call (examples/gitlab/accounts.gitlab-ci.yml).

It answers in GitLab's documented shapes (merge request notes, a commit's merge requests, a
merge request, a pipeline's jobs, a job's artifacts archive as a zip), refuses a request
without the expected `PRIVATE-TOKEN` as GitLab does (401), and records every request.
"""

from __future__ import annotations

import io
import json
import re
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

PROJECT_ID = 4242


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
    #: A job's artifacts: the folder its `artifacts:paths` were kept in (zipped when asked).
    job_artifacts: dict[int, Path] = field(default_factory=dict)
    next_id: int = 700
    #: Branches the commits API made: name -> (the commit it started from, {path: text}).
    branches: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)


class FakeGitLab:
    """Start with `with FakeGitLab(token) as gitlab:`; `.api_url` is CI_API_V4_URL."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.state = State()
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def api_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/api/v4"

    def __enter__(self) -> FakeGitLab:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def handle(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        project = f"/api/v4/projects/{PROJECT_ID}"
        if not path.startswith(project + "/"):
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
        if match := re.fullmatch(r"/repository/commits/([0-9a-f]+)/merge_requests", route):
            return 200, state.commit_merge_requests.get(match[1], [])
        if (match := re.fullmatch(r"/merge_requests/(\d+)", route)) and int(
            match[1]
        ) in state.merge_requests:
            return 200, state.merge_requests[int(match[1])]
        if match := re.fullmatch(r"/pipelines/(\d+)/jobs", route):
            return 200, state.pipeline_jobs.get(int(match[1]), [])
        if (match := re.fullmatch(r"/jobs/(\d+)/artifacts", route)) and int(
            match[1]
        ) in state.job_artifacts:
            return 200, _zipped(state.job_artifacts[int(match[1])])
        return 404, {"message": "404 Not found"}

    def _commit(self, body: dict[str, Any]) -> tuple[int, Any]:
        """The commits API with `start_sha` and `force`: the branch is made again from it."""
        branch, start = body["branch"], body.get("start_sha")
        if branch in self.state.branches and not body.get("force"):
            return 400, {"message": "A branch called this already exists"}
        files: dict[str, str] = {}
        for action in body["actions"]:
            if action["action"] not in ("create", "update"):
                return 400, {"message": f"unknown action {action['action']}"}
            files[action["file_path"]] = action["content"]
        self.state.branches[branch] = (start, files)
        self.state.next_id += 1
        return 201, {"id": f"{self.state.next_id:040x}", "message": body["commit_message"]}

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


def _handler(fake: FakeGitLab) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self, method: str) -> None:
            parts = urlsplit(self.path)
            query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            token = self.headers.get("PRIVATE-TOKEN")
            with fake._lock:
                fake.requests.append(Recorded(method, parts.path, body, token))
                if token != fake.token:
                    status, answer = 401, {"message": "401 Unauthorized"}
                else:
                    status, answer = fake.handle(method, parts.path, query, body)
            data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            data = b"" if status == 204 else data
            self.send_response(status)
            kind = "application/zip" if isinstance(answer, bytes) else "application/json"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PUT(self) -> None:
            self._serve("PUT")

        def do_DELETE(self) -> None:
            self._serve("DELETE")

    return Handler
