"""The notes and the adoption request are written once (reconciler.gitops.notes, .adoption):
one body each, run over the fake GitHub and the fake GitLab through their adapters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from reconciler.adopt.commit import BranchFile
from reconciler.adopt.model import ADDED, Adopted, Adoption, FileChange
from reconciler.adopt.request import CLOSING_NOTE, branch_for
from reconciler.gitops.adoption import sync_adoption_request
from reconciler.gitops.drift import DriftAction
from reconciler.gitops.forge import Forge
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.gitlab.forge import GitLabForge
from reconciler.gitops.notes import post_outcomes, upsert_note
from reconciler.gitops.outcome import APPLIED, FAILED, Landing
from reconciler.render.marker import ADOPT, PLAN, Marker
from reconciler.secrets import Secret
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub, pull_request
from tests.gitops.fake_gitlab import PROJECT_ID, FakeGitLab

TOKEN = "forge-token"
REQUEST = 31


@dataclass
class Forged:
    """A forge's adapter, and what its fake holds: the bodies of a request's notes, oldest
    first; whether a change request is open; the files its branch holds."""

    forge: Forge
    bodies: Callable[[int], list[str]]
    is_open: Callable[[int], bool]
    files: Callable[[str], dict[str, str]]


def _github() -> Iterator[Forged]:
    with FakeGitHub(TOKEN) as fake, GitHubForge(OWNER_REPO, Secret(TOKEN),
                                                api_url=fake.api_url) as forge:  # fmt: skip
        fake.state.pulls[REQUEST] = pull_request(REQUEST, "c" * 40)

        def bodies(number: int) -> list[str]:
            return [str(c["body"]) for c in fake.state.comments.get(number, [])]

        def files(branch: str) -> dict[str, str]:
            commit = fake.state.commits[fake.state.refs[branch]]
            return dict(fake.state.trees[commit["tree"]])

        yield Forged(forge, bodies, lambda n: fake.state.pulls[n]["state"] == "open", files)


def _gitlab() -> Iterator[Forged]:
    with FakeGitLab(TOKEN) as fake, GitLabForge(fake.api_url, str(PROJECT_ID),
                                                Secret(TOKEN)) as forge:  # fmt: skip

        def bodies(number: int) -> list[str]:
            return [str(n["body"]) for n in fake.state.notes.get(number, [])]

        def is_open(number: int) -> bool:
            return fake.state.merge_requests[number]["state"] == "opened"

        yield Forged(forge, bodies, is_open, lambda branch: dict(fake.state.branches[branch][1]))


@pytest.fixture(params=[_github, _gitlab], ids=["github", "gitlab"])
def forged(request: pytest.FixtureRequest) -> Iterator[Forged]:
    yield from request.param()


def test_one_marked_note_per_request_is_created_then_updated_in_place(forged: Forged) -> None:
    forge, marker = forged.forge, Marker(PLAN, "accounts")
    other = Marker(PLAN, "staging")

    first = upsert_note(forge, REQUEST, "the plan\n", marker)
    same = upsert_note(forge, REQUEST, "the plan\n", marker)
    upsert_note(forge, REQUEST, "staging's plan\n", other)
    updated = upsert_note(forge, REQUEST, "the new plan\n", marker)

    assert (first.action, same.action, updated.action) == ("created", "unchanged", "updated")
    assert first.comment_id == same.comment_id == updated.comment_id
    assert forged.bodies(REQUEST) == [
        marker.stamp("the new plan\n"),
        other.stamp("staging's plan\n"),
    ]


def test_the_outcome_note_keeps_the_rows_of_other_runs(forged: Forged) -> None:
    forge, sign = forged.forge, forged.forge.words.sign
    eu = Landing("eu", FAILED, f"not applied, or applied in part ({sign}{REQUEST})")
    post_outcomes(forge, {REQUEST: [(eu, "https://ci.example/1")]}, "a" * 40, "https://ci/1")
    us = Landing("us", APPLIED, "the reviewed plan was applied: 1 to invite")
    ((number, result),) = post_outcomes(forge, {REQUEST: [(us, None)]}, "b" * 40, "https://ci/2")

    (body,) = forged.bodies(REQUEST)
    assert (number, result.action) == (REQUEST, "updated")
    assert "| `eu` | :x: failed: not applied" in body and "[run](https://ci.example/1)" in body
    assert "| `us` | :white_check_mark: applied: the reviewed plan was applied" in body
    assert f"(latest: commit {'b' * 12}, [this run](https://ci/2))" in body


def _adoption(after: str) -> Adoption:
    return Adoption(
        files=(FileChange("workforce/team.yaml", "version: 1\n", after),),
        adopted=(Adopted('worker["ENG-9"]', ADDED, "open agreement 9 (ACTIVE)"),),
    )


def test_the_adoption_request_is_opened_updated_and_closed(forged: Forged) -> None:
    forge, marker, base = forged.forge, Marker(ADOPT, "eu"), "d" * 40
    branch = branch_for("eu")

    def sync(status: int, adoption: Adoption | None) -> Any:
        files = {c.name: BranchFile(c.after) for c in adoption.files} if adoption else {}
        return sync_adoption_request(forge, status, adoption, files, marker, account="eu",
                                     base_sha=base, target="main")  # fmt: skip

    opened = sync(2, _adoption("version: 1\nworkers: [a]\n"))
    assert opened.action is DriftAction.OPEN and forged.is_open(opened.number)
    assert forged.files(branch) == {"workforce/team.yaml": "version: 1\nworkers: [a]\n"}
    again = sync(2, _adoption("version: 1\nworkers: [a]\n"))
    updated = sync(2, _adoption("version: 1\nworkers: [a, b]\n"))
    assert (again.action, updated.action) == (DriftAction.NOTHING, DriftAction.UPDATE)
    assert again.number == updated.number == opened.number
    assert forged.files(branch)["workforce/team.yaml"] == "version: 1\nworkers: [a, b]\n"
    found = forge.find_request(branch, marker)
    assert found is not None and found.number == opened.number

    closed = sync(0, None)

    assert closed.action is DriftAction.CLOSE and not forged.is_open(opened.number)
    assert forged.bodies(opened.number)[-1] == CLOSING_NOTE
    assert forge.find_request(branch, marker) is None
