"""`reconciler comment`: the comment body any CI can post, and an artifact with no secret in it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from tests.gitops.support import ROOT, reconciler
from tests.plan.test_plan_canaries import (  # noqa: F401 (account is a fixture)
    ENV,
    FILE_VALUE,
    LIVE_VALUE,
    NEW_VALUE,
    account,
    leaks,
    unkeyed_hashes,
)

QUICKSTART = ROOT / "examples" / "quickstart.yaml"


@pytest.fixture(scope="module")
def demo() -> Iterator[SandboxServer]:
    """The quickstart's demo account; these tests only read it."""
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml") as server:
        yield server


def connect(server: SandboxServer, token: str | None = None) -> dict[str, str]:
    return {"RECONCILER_BASE_URL": server.base_url, "RECONCILER_TOKEN": token or server.token}


def test_the_body_is_the_markdown_plan_under_the_marker(demo: SandboxServer) -> None:
    body = reconciler("comment", str(QUICKSTART), **connect(demo))
    markdown = reconciler("plan", str(QUICKSTART), "--format", "markdown", **connect(demo))

    assert body.returncode == 0, body.stderr
    assert body.stdout == "<!-- reconciler:plan -->\n" + markdown.stdout
    keyed = reconciler("comment", str(QUICKSTART), "--key", "eng/prod", **connect(demo))
    assert keyed.stdout.split("\n", 1) == [
        '<!-- reconciler:plan key="eng/prod" -->',
        markdown.stdout,
    ]


def test_from_a_saved_plan_it_shows_the_changes_if_they_still_hold(
    demo: SandboxServer, tmp_path: Path
) -> None:
    saved = tmp_path / "plan.json"
    first = reconciler("comment", str(QUICKSTART), "--out", str(saved), **connect(demo))
    again = reconciler("comment", str(saved), **connect(demo))

    assert first.returncode == 0 and again.returncode == 0, again.stderr
    assert again.stdout.startswith("<!-- reconciler:plan -->\n### reconciler plan\n")
    for line in ('worker["ENG-004"] will be invited', 'worker["ENG-006"] will be inactivated'):
        assert line in first.stdout and line in again.stdout
    # A saved plan keeps its changes, the drifted workers and the counts of what it found
    # besides: the merge comment shows the same Drift section, and 2 unmanaged, not zeros.
    assert _section(again.stdout, "Drift (1)") == _section(first.stdout, "Drift (1)")
    assert 'jobTitle: "Engineer" -> "Staff Engineer"' in _section(again.stdout, "Drift (1)")
    counts = "| 0 | 1 | 0 | 0 | 1 | 1 | 1 | 2 |"
    assert counts in first.stdout and counts in again.stdout


def test_a_stale_saved_plan_says_so_without_claiming_an_apply(
    demo: SandboxServer, tmp_path: Path
) -> None:
    saved = tmp_path / "plan.json"
    assert reconciler("plan", str(QUICKSTART), "--out", str(saved), **connect(demo)).returncode == 0
    assert reconciler("apply", str(saved), **connect(demo)).returncode == 0

    stale = reconciler("comment", str(saved), **connect(demo))

    assert stale.returncode == 1
    assert "the live account changed since the plan was made" in stale.stderr
    assert "nothing was applied" not in stale.stderr  # comment never applies
    assert "make it again with `reconciler plan --out`" in stale.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--key", "two words"], "marker key 'two words'"),
        (["--out", "x.json", "SAVED"], "--out needs a desired-state PATH"),
        (["missing.yaml"], "does not exist"),
    ],
)
def test_bad_input_is_a_clear_error(
    demo: SandboxServer, tmp_path: Path, args: list[str], said: str
) -> None:
    saved = tmp_path / "plan.json"
    reconciler("plan", str(QUICKSTART), "--out", str(saved), **connect(demo))
    args = [str(saved) if arg == "SAVED" else arg for arg in args]
    source = [] if any(arg.endswith((".yaml", ".json")) for arg in args) else [str(QUICKSTART)]
    result = reconciler("comment", *source, *args, **connect(demo))

    assert result.returncode == 1  # a usage error: 2 would read as "changes"
    assert said in result.stderr and "Traceback" not in result.stderr


def test_the_uploaded_artifact_holds_no_secret(
    account: tuple[SandboxServer, str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    """What the pull-request job uploads: `comment --out plan.json > comment.md`."""
    sandbox, token, path = account
    plan, body = tmp_path / "plan.json", tmp_path / "comment.md"
    result = reconciler(
        "--log-level", "debug", "comment", str(path), "--out", str(plan), "--show-unmanaged",
        **connect(sandbox, token), **ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    body.write_text(result.stdout)

    artifact = plan.read_text() + body.read_text() + result.stderr
    assert "(sensitive value)" in body.read_text()
    assert '"hmac"' in plan.read_text() and "${CANARY_FILE}" in plan.read_text()
    for value in (token, LIVE_VALUE, FILE_VALUE, NEW_VALUE):
        for form in leaks(value) | unkeyed_hashes(value):
            assert form not in artifact, f"a form of a secret is in the artifact: {form[:6]}..."


def _section(body: str, title: str) -> str:
    """The Markdown of one collapsible section of a plan comment, from its title on."""
    assert title in body, body
    return body.split(title, 1)[1].split("</details>", 1)[0]
