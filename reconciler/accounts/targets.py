"""The accounts a CI job works on: each with its files, the environment its apply's record is
kept in on the forge, and how the reconciler's commands name it.

The accounts of an accounts file, or a single desired-state PATH (the composite action's
`path`, named by its key): an accounts file of one entry. The CI flow (`reconciler.gitops`)
lands, reports and tells each `Target` the same way, whatever the forge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from reconciler.accounts.file import find_accounts_file, load_accounts_file
from reconciler.accounts.history import Scope, scope_of

#: The record environment of an account, `{account}` its name.
DEFAULT_ENVIRONMENT = "production-{account}"
#: The single account's name without a key (as the adoption branch's `reconciler/adopt-default`).
DEFAULT_NAME = "default"


def environment_of(template: str, account: str) -> str:
    """The record environment of `account` (`production-{account}` gives `production-eu`)."""
    return template.replace("{account}", account)


@dataclass(frozen=True)
class Target:
    """One account of a fleet: its name, its files (and the accounts file it is an entry of),
    the environment its record is kept in, and how the reconciler's commands name it:
    `--account NAME` in the accounts file, or the single account's `desired` file or folder
    (whose refusal note has the action's `key`)."""

    name: str
    files: Path
    accounts_file: Path | None
    environment: str
    desired: Path | None = None
    comment_key: str | None = None

    @cached_property
    def scope(self) -> Scope:
        """Its part of the repository (git is asked only when this is)."""
        return scope_of(self.name, self.files, self.accounts_file)

    def plan_in(self, folder: Path) -> Path:
        """The account's saved plan in a folder of plans: `<name>.json`, or the action's
        `plan.json`."""
        return folder / ("plan.json" if self.desired is not None else f"{self.name}.json")

    def source(self, folder: Path) -> list[str]:
        """The plans to apply or comment: the folder with `--account NAME`, or the plan file."""
        if self.desired is None:
            return [str(folder), "--account", self.name]
        return [str(self.plan_in(folder))]

    def desired_state(self) -> list[str]:
        """What to plan: `--account NAME`, or the desired-state file or folder."""
        return ["--account", self.name] if self.desired is None else [str(self.desired)]

    def expect_files(self) -> list[str]:
        """The reviewed plan's files check of the single account (an account's plan in a
        folder is checked against its own files by `apply DIR`)."""
        return [] if self.desired is None else ["--expect-files", str(self.desired)]


@dataclass(frozen=True, slots=True)
class Targets:
    """The accounts a job works on, in order, and the names asked for that no entry has."""

    targets: tuple[Target, ...]
    missing: dict[str, str] = field(default_factory=dict)  # name: why there is no such account


def targets(
    environment: str,
    accounts_file: Path | None = None,
    names: Sequence[str] | None = None,
    *,
    path: Path | None = None,
    key: str | None = None,
) -> Targets:
    """The accounts `names` (None: every one) of the accounts file (the given one, else
    reconciler.yaml here or above), or, with `path`, the single desired-state file or folder:
    an accounts file of one entry, named by `key` (`default` without one), whose record is kept
    in `environment` itself."""
    if path is not None:
        name = key or DEFAULT_NAME
        return Targets((Target(name, path, None, environment, path, key),))
    accounts = load_accounts_file(find_accounts_file(accounts_file))
    found, missing = [], {}
    for name in accounts.names if names is None else names:
        entry = accounts.named(name)
        if entry is None:
            missing[name] = f"no account named {name} in {accounts.path}"
            continue
        where = environment_of(environment, name)
        found.append(Target(name, entry.path, accounts.path, where, comment_key=name))
    return Targets(tuple(found), missing)
