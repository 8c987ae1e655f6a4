"""The version moves with releases, and the docs and the action agree (issue 50, item 5).

`reconciler --version` is the newest release of CHANGELOG.md; the example workflows pin a
release's commit with its tag in the comment, and that commit (where the history is at hand)
holds the action the line names; the action's secret inputs ask for environment secrets, as
docs/ci.md does.
"""

from __future__ import annotations

import re
import subprocess

import yaml

from reconciler._version import VERSION
from tests.cli import ROOT, reconciler

CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
RELEASE = re.compile(r"^## (\d+\.\d+\.\d+) \((.*)\)$", re.MULTILINE)
PIN = re.compile(r"uses: OWNER/reconciler/(\S+)@([0-9a-f]{40})  # v(\d+\.\d+\.\d+)$", re.MULTILINE)


def test_the_version_is_the_newest_release_of_the_changelog() -> None:
    releases = RELEASE.findall(CHANGELOG)
    assert releases[0][0] == VERSION != "0.1.0"
    assert [r[0] for r in releases] == sorted(
        (r[0] for r in releases), key=lambda v: tuple(map(int, v.split("."))), reverse=True
    )
    printed = reconciler("--version")
    assert printed.stdout.strip() == f"reconciler, version {VERSION}"


def test_the_workflows_pin_a_release_commit_that_holds_the_action() -> None:
    commits = {
        version: match.group(1)
        for version, when in RELEASE.findall(CHANGELOG)
        if (match := re.search(r"commit `([0-9a-f]{40})`", when))
    }
    pins = [
        (path, found)
        for path in sorted((ROOT / "examples").rglob("*.yml"))
        for found in PIN.findall(path.read_text(encoding="utf-8"))
    ]
    assert len(pins) >= 4
    for path, (action, sha, version) in pins:
        assert commits.get(version) == sha, f"{path}: {sha} is not release {version}'s commit"
        known = subprocess.run(
            ["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=ROOT, capture_output=True
        )
        if known.returncode == 0:  # a shallow clone may not hold it: then the changelog says
            tree = subprocess.run(
                ["git", "ls-tree", "--name-only", sha, f"{action}/action.yml"],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            assert tree.stdout.strip() == f"{action}/action.yml", f"{path}: {action} at {sha}"
    ci = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "### Pinning the action" in ci and "git rev-parse" in ci


def test_the_secret_inputs_ask_for_what_docs_ci_asks() -> None:
    action = yaml.safe_load((ROOT / ".github/actions/reconciler/action.yml").read_text())
    ci = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "Do not create them as repository secrets" in ci
    for name in ("service-token", "plan-key"):
        said = " ".join(action["inputs"][name]["description"].split())
        assert "pass a repository secret" not in said, said
        assert "never a repository secret" in said and "environment" in said, said
