"""The ignore rules a change adds or changes, against its base: what a review must see.

An ignore rule hides drift from every later check, so a pull request that adds one, or moves
its `until` or its owner, is named in its plan (a warning, which the comment shows among its
risks) even when the rule is narrow. The base is where the checkout's commit left the default
branch (`git merge-base HEAD origin/HEAD`, or the default branch the CI names, as a pull
request's plan checks it out with its history); its files at `path` are read from git into a
folder of their own and loaded as `validate --no-env` loads them. On the default branch
itself, outside git, in a shallow clone, or when the base's files do not load, there is
nothing to compare, and nothing is said.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from reconciler.desired.ignore import IgnoreRule
from reconciler.desired.load import load_desired_state
from reconciler.errors import ReconcilerError
from reconciler.git import GitFailed, run_git


def rule_changes(path: Path, rules: tuple[IgnoreRule, ...]) -> tuple[str, ...]:
    """How the files at `path` change the ignore rules of their base: a line per rule added
    or changed (a rule removed hides less, and is not named)."""
    if not rules:
        return ()
    base = _base_rules(path.resolve())
    if base is None:
        return ()
    before = {rule.address: rule for rule in base}
    said = []
    for rule in rules:
        old = before.get(rule.address)
        if old is None:
            said.append(
                f"this change adds the ignore rule for {rule.address} (owner {rule.owner}, "
                f"until {rule.until.isoformat()}): {rule.reason}"
            )
        elif old != rule:
            moved = [
                f"{name} {getattr(old, name)!s} -> {getattr(rule, name)!s}"
                for name in ("until", "owner", "reason")
                if getattr(old, name) != getattr(rule, name)
            ]
            said.append(
                f"this change changes the ignore rule for {rule.address}: " + "; ".join(moved)
            )
    return tuple(said)


def _default_branch(folder: Path) -> str:
    """The remote's default branch: `origin/HEAD`, else the one the CI names (a pipeline's
    CI_DEFAULT_BRANCH, a pull request's GITHUB_BASE_REF); GitFailed when none is known."""
    try:
        return run_git(folder, "rev-parse", "--abbrev-ref", "origin/HEAD").strip()
    except GitFailed:
        for name in ("CI_DEFAULT_BRANCH", "GITHUB_BASE_REF"):
            if os.environ.get(name):
                ref = f"origin/{os.environ[name]}"
                run_git(folder, "rev-parse", "--verify", "--quiet", ref)
                return ref
        raise


def _base_rules(target: Path) -> tuple[IgnoreRule, ...] | None:
    """The ignore rules of the files at `target` in the base commit (none there: ()), or None
    when there is no base to compare with."""
    folder = target if target.is_dir() else target.parent
    try:
        if run_git(folder, "rev-parse", "--is-shallow-repository").strip() == "true":
            return None
        base = run_git(folder, "merge-base", "HEAD", _default_branch(folder)).strip()
        if base == run_git(folder, "rev-parse", "HEAD").strip():
            return None  # the default branch itself: no change to review
        top = Path(run_git(folder, "rev-parse", "--show-toplevel").strip()).resolve()
        inside = target.relative_to(top).as_posix()
        names = run_git(top, "ls-tree", "-r", "--name-only", base, "--", inside).splitlines()
        if not names:
            return ()
        with tempfile.TemporaryDirectory(prefix="reconciler-base-") as temp:
            for name in names:
                copy = Path(temp) / name
                copy.parent.mkdir(parents=True, exist_ok=True)
                copy.write_text(run_git(top, "show", f"{base}:{name}"), encoding="utf-8",
                                errors="surrogateescape")  # fmt: skip
            return load_desired_state(Path(temp) / inside, read_variables=False).ignore
    except (GitFailed, ValueError, OSError, ReconcilerError):
        return None
