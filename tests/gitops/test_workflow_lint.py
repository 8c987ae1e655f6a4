"""The workflows and the action pass real linters, and every action they use is pinned.

zizmor (from PyPI: a linter of GitHub Actions workflows and actions, shipped as a wheel, so it
runs offline) audits them; check-jsonschema validates them against GitHub's own schemas; and
every third-party `uses:` names a full commit SHA with its version in a comment, of a major
that runs on a current runtime.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted(
    [*(ROOT / ".github" / "workflows").glob("*.yml"), *(ROOT / "examples" / "github").glob("*.yml")]
)
ACTION = ROOT / ".github" / "actions" / "reconciler" / "action.yml"
USES = re.compile(r"uses:\s*(?P<ref>\S+)(?P<comment>.*)$", re.M)
#: The first majors on the node24 runtime (node20 is deprecated on GitHub's runners).
CURRENT = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/upload-artifact": 6,
    "actions/download-artifact": 7,
}


def test_zizmor_finds_nothing() -> None:
    zizmor = shutil.which("zizmor")
    assert zizmor is not None, "zizmor is a test dependency: pip install -e '.[test]'"
    result = subprocess.run(
        [zizmor, "--offline", "--no-progress", str(ACTION), *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("schema", "files"),
    [("vendor.github-workflows", WORKFLOWS), ("vendor.github-actions", [ACTION])],
    ids=["workflows", "action"],
)
def test_github_s_schemas_accept_them(schema: str, files: list[Path]) -> None:
    result = subprocess.run(
        ["check-jsonschema", "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_action_is_pinned_by_commit_on_a_current_major() -> None:
    seen = set()
    for path in [ACTION, *WORKFLOWS]:
        for match in USES.finditer(path.read_text()):
            ref = match["ref"]
            if ref.startswith(("./", "OWNER/")):
                continue  # this repository's action; the user's own copy
            name, _, pin = ref.partition("@")
            assert re.fullmatch(r"[0-9a-f]{40}", pin), f"{path.name}: {ref} is not pinned by SHA"
            version = re.search(r"#\s*v(\d+)\.\d+\.\d+", match["comment"])
            assert version, f"{path.name}: {ref} has no `# vX.Y.Z` comment"
            assert int(version[1]) >= CURRENT[name], f"{path.name}: {name} v{version[1]} is old"
            seen.add(name)
    assert seen == set(CURRENT)
