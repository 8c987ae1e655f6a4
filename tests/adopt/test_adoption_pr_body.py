"""The adoption pull request's body holds values people typed into the service's screens: made
by `reconciler adopt --format json` and `reconciler github adopt-pr` against the sandbox and a
fake GitHub, no such value can hide part of the body, show an image or a link, or mention
anyone."""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler as run
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub

TOKEN = "ghs_" + secrets.token_urlsafe(27)
HOSTILE = "<!-- @octo-org/everyone <img src=https://evil.example/p.png> [x](https://evil.example)"
SEED = f"""\
workers:
  - {{externalId: ENG-001, firstName: Ada, lastName: Lovelace, email: ada@example.com,
     country: GB, jobTitle: "{HOSTILE}", status: ACTIVE}}
  - {{externalId: ENG-002, firstName: "@octo-org/everyone", lastName: "``````",
     email: x@example.com, country: GB, jobTitle: "-->", status: ACTIVE}}
"""
STATE = """\
version: 1
scope:
  externalIdPrefix: ENG-
workers:
  - externalId: ENG-001
    typeOfWorker: Worker
    workerName: Ada
    workerSurname: Lovelace
    workerEmail: ada@example.com
    countryIso: GB
    jobTitle: Engineer
"""


def test_live_values_in_the_body_are_text_not_markup(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "state.yaml").write_text(STATE)
    seed = tmp_path / "seed.yaml"
    seed.write_text(SEED)
    with SandboxServer(seed=seed) as server:
        adopted = run(
            "adopt", "state.yaml", "--dry-run", "--format", "json", server=server, cwd=repo
        )
    assert adopted.returncode == 2, adopted.stderr
    (tmp_path / "adopt.json").write_text(adopted.stdout)
    with FakeGitHub(TOKEN) as github:
        result = run(
            "github", "adopt-pr", "--adoption-file", str(tmp_path / "adopt.json"),
            "--drift-exit-status", "2", "--base-sha", "a" * 40, cwd=repo,
            GITHUB_TOKEN=TOKEN, GITHUB_REPOSITORY=OWNER_REPO, GITHUB_API_URL=github.api_url,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        (pull,) = github.state.pulls.values()
    body: str = pull["body"]
    first, rest = body.split("\n", 1)
    assert first == "<!-- reconciler:adopt -->"
    prose = rest.split("<details>", 1)[0]
    # Outside the diff no HTML, link, image or mention can act: each is escaped or in code.
    assert "<" not in prose.replace("\\<", "") and "](" not in prose
    assert "@octo-org" not in prose.replace("`@`octo-org", "")
    assert '**added** `worker["ENG-002"]`' in prose
