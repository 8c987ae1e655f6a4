"""The landing flow (reconciler.gitops.landing) is written once: one body, run over the fake
GitHub and the fake GitLab, each through its adapter, lands a merge the same way and says it in
each forge's words, recorded where each forge keeps the record of an apply.

The reconciler's own commands are given by a recorder that answers each with the status the
case says (as tests/gitops/test_account_jobs.py does); the forges are the fakes, over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from reconciler.accounts.targets import targets
from reconciler.gitops.forge import NOT_REVIEWED, ApplyJob, Forge, Reviewed
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.gitlab.forge import GitLabForge
from reconciler.gitops.landing import land_fleet
from reconciler.gitops.outcome import APPLIED, NOTHING, REFUSED
from reconciler.secrets import Secret
from tests.gitops.action_runner import History
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
from tests.gitops.fake_gitlab import PROJECT_ID, FakeGitLab

TOKEN = "forge-token"
FILE = "workforce/team.yaml"


@dataclass
class Forged:
    """One forge for the case: its adapter, how a merge is told to it, how its record says
    an account's outcome at a commit, and how it records a job that succeeded."""

    forge: Forge
    merged: Callable[[str, int], None]
    recorded: Callable[[str], str]
    succeeded: Callable[[str], None]


def _github(history: History, tmp_path: Path) -> Iterator[Forged]:
    with FakeGitHub(TOKEN) as fake, GitHubForge(OWNER_REPO, Secret(TOKEN),
                                                api_url=fake.api_url) as forge:  # fmt: skip
        fake.state.remote = history.remote

        def merged(sha: str, number: int) -> None:
            pull = {"number": number, "merged_at": "2026-11-30T10:00:00Z",
                    "merge_commit_sha": sha, "head": {"sha": "c" * 40}}  # fmt: skip
            fake.state.commit_pulls[sha] = [pull]

        def recorded(sha: str) -> str:
            ((landing, _),) = forge.landings(["default"], sha, "production")
            return landing.kind

        yield Forged(forge, merged, recorded, lambda sha: None)  # its record is the flow's own


def _gitlab(history: History, tmp_path: Path) -> Iterator[Forged]:
    with FakeGitLab(TOKEN) as fake, GitLabForge(fake.api_url, str(PROJECT_ID),
                                                Secret(TOKEN)) as forge:  # fmt: skip
        forge.outcomes = tmp_path / "outcomes"

        def merged(sha: str, number: int) -> None:
            fake.state.commit_merge_requests[sha] = [
                {"iid": number, "state": "merged", "merge_commit_sha": sha}
            ]

        def recorded(sha: str) -> str:
            kept = json.loads((forge.outcomes / "default.json").read_text())
            assert kept["sha"] == sha
            return str(kept["kind"])

        def succeeded(sha: str) -> None:  # GitLab makes the deployment of the job itself
            fake.deploy("production", sha, "https://gitlab.example.com/-/jobs/1", "success")

        yield Forged(forge, merged, recorded, succeeded)


@pytest.fixture(params=[_github, _gitlab], ids=["github", "gitlab"])
def forged(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Forged, History]]:
    history = History(tmp_path / "history")
    yield from ((made, history) for made in request.param(history, tmp_path))


class Commands:
    """Runs nothing: records each command and answers with the status the case gives it."""

    def __init__(self, status: dict[str, int]) -> None:
        self.status, self.ran = status, []  # type: dict[str, int], list[str]

    def __call__(self, args: list[str], stdout: Path | None) -> int:
        self.ran.append(args[0])
        if stdout is not None:
            stdout.write_text("", encoding="utf-8")
        return self.status.get(args[0], 0)


def test_one_body_lands_a_merge_over_either_forge_in_its_own_words(
    forged: tuple[Forged, History], tmp_path: Path
) -> None:
    made, history = forged
    forge, words = made.forge, made.forge.words
    history.commit({FILE: "version: 1\n"}, "one")
    merge = history.commit({FILE: "version: 1\nworkers: []\n"}, "the merge")
    made.merged(merge, 31)
    checkout = history.checkout(merge, tmp_path / "checkout")
    alone = targets("production", path=checkout / FILE)
    job = ApplyJob(merge, "main", "production", "https://ci.example/run/1", tmp_path / "work")

    # A merge with changes and no plan reviewed on its request: refused, in the forge's words.
    commands = Commands({"plan": 2})
    ((refused, status),) = land_fleet(forge, alone, lambda _: NOT_REVIEWED, job, commands)

    assert (refused.kind, status, commands.ran) == (REFUSED, 1, ["plan"])
    assert f"no plan reviewed on a {words.request} for {merge[:12]}" in refused.description
    assert f"(never applied, {words.sign}31). Open a {words.request}" in refused.description
    assert made.recorded(merge) == REFUSED

    # Its plan reviewed on the request, applied as saved: the record says so.
    folder = tmp_path / "reviewed"
    folder.mkdir()
    (folder / "plan.json").write_text(json.dumps({"changes": [{"action": "invite"}]}))
    reviewed = Reviewed(folder, 31, "c" * 40)
    commands = Commands({})
    ((applied, status),) = land_fleet(forge, alone, lambda _: reviewed, job, commands)

    assert (applied.kind, status, commands.ran) == (APPLIED, 0, ["apply"])
    assert applied.description == "the reviewed plan was applied: 1 to invite"
    assert made.recorded(merge) == APPLIED
    made.succeeded(merge)

    # Run again at the same commit: its last successful apply holds these files.
    commands = Commands({})
    ((again, status),) = land_fleet(forge, alone, lambda _: reviewed, job, commands)

    assert (again.kind, status, commands.ran) == (NOTHING, 0, [])
    assert again.description == f"nothing to do: applied at {merge[:12]}"
