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
    [
        *(ROOT / ".github" / "workflows").glob("*.yml"),
        *(ROOT / "examples" / "github").glob("*.yml"),
        *(ROOT / "examples" / "github" / "accounts").glob("*.yml"),  # several accounts
    ]
)
ACTION = ROOT / ".github" / "actions" / "reconciler" / "action.yml"
#: The action, and the install alone for the workflows that run the reconciler's commands.
ACTIONS = [ACTION, ROOT / ".github" / "actions" / "reconciler-install" / "action.yml"]
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>\S+)(?P<comment>.*)$", re.M)  # not `statuses:`
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
        [zizmor, "--offline", "--no-progress", *map(str, ACTIONS), *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("schema", "files"),
    [("vendor.github-workflows", WORKFLOWS), ("vendor.github-actions", ACTIONS)],
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
    for path in [*ACTIONS, *WORKFLOWS]:
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


def test_no_finding_is_silenced() -> None:
    """zizmor finds nothing because there is nothing, not because it was told to look away."""
    for path in [*ACTIONS, *WORKFLOWS]:
        assert "zizmor:" not in path.read_text(), f"{path.name} silences zizmor"
    assert not list(ROOT.glob("zizmor.y*ml")) and not list(ROOT.glob(".github/zizmor.y*ml"))


def test_the_example_workflows_pin_the_action_by_commit() -> None:
    for path in sorted((ROOT / "examples" / "github").rglob("*.yml")):
        for match in USES.finditer(path.read_text()):
            if match["ref"].startswith("OWNER/reconciler/"):
                assert re.fullmatch(r"OWNER/reconciler/\S+@[0-9a-f]{40}", match["ref"]), path.name


LOCK = ACTION.parent / "requirements.lock"
_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", re.M)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_lock_file_is_in_step_with_pyproject() -> None:
    """Every runtime dependency (and the build backend) is pinned with hashes, at a version
    pyproject allows: a dependency added to pyproject without locking it fails here."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = [Requirement(spec) for spec in project["project"]["dependencies"]]
    wanted += [Requirement(spec) for spec in project["build-system"]["requires"]]
    text = LOCK.read_text()
    pinned = {_normal(name): version for name, version in _PINNED.findall(text)}
    for requirement in wanted:
        name = _normal(requirement.name)
        assert name in pinned, f"{requirement.name} is in pyproject.toml but not in {LOCK.name}"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"{LOCK.name} pins {requirement.name}=={pinned[name]}, outside {requirement}"
        )
    for block in re.split(r"\n(?=[A-Za-z])", text.split("\n", 2)[2]):
        assert "--hash=sha256:" in block, f"no hash for {block.splitlines()[0]}"
