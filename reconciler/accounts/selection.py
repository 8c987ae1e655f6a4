"""Which accounts a command runs on: `--all`, `--account NAME`, `--changed-since REF`.

An account changed since REF when a file under its `path`, or its own entry in the accounts
file, differs between the merge base of REF and HEAD and the work tree (untracked files
included, and those git ignores: the load reads them all); a change to the accounts file's
`version` or to any other top-level setting counts for every account. Git is asked,
read-only; nothing here writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.accounts.file import AccountEntry, AccountsFile
from reconciler.errors import ReconcilerError
from reconciler.git import GitFailed, run_git

DEFAULT_ACCOUNTS_PARALLELISM = 4
#: The most names `--chunk` puts in one matrix job (so an `--account` line stays short).
MAX_CHUNK = 1000


class SelectionError(ReconcilerError):
    """The selection names no account of the file, or git cannot tell what changed."""


@dataclass(frozen=True, slots=True)
class Selection:
    """What the options asked for; `active` when any was given."""

    every: bool = False
    names: tuple[str, ...] = ()
    changed_since: str | None = None

    @property
    def active(self) -> bool:
        return self.every or bool(self.names) or self.changed_since is not None


def selection_of(every: bool, names: Iterable[str], changed_since: str | None) -> Selection:
    """The options as given, refused when they do not say which accounts plainly: an
    `--account` that names none (`""`, `" "`, `","`: what an empty matrix value gives), an
    empty `--changed-since`, or two options that each say which accounts (`--all` is every
    account, `--account` these, `--changed-since` the changed ones: one of them, never two)."""
    names = tuple(names)
    for value in names:
        named_accounts(value, "--account")
    if changed_since is not None and not changed_since.strip():
        raise SelectionError(
            "--changed-since '' names no commit",
            hint="give a branch, tag or commit: --changed-since origin/main",
        )
    given = [
        option
        for option, present in (
            ("--all", every),
            ("--account", bool(names)),
            ("--changed-since", changed_since is not None),
        )
        if present
    ]
    if len(given) > 1:
        raise SelectionError(
            f"{' and '.join(given)} contradict each other: --all selects every account, "
            "--account NAME those named, --changed-since REF those changed",
            hint="give one of them",
        )
    return Selection(every, names, changed_since)


def named_accounts(value: str, option: str) -> list[str]:
    """The account names one option's value gives (`account_names`), refused when it gives
    none (`""`, `" "`, `","`: what a matrix without that value gives), which would otherwise
    run no account and succeed."""
    names = account_names([value])
    if not names:
        raise SelectionError(
            f"{option} {value!r} names no account: an account name is 1 to 40 of a-z, 0-9 and -",
            hint="in a matrix job, check that the matrix gives the value (`matrix.account`, or "
            "`matrix.accounts` with --chunk); to run every account, pass --all",
        )
    return names


def account_names(values: Iterable[str]) -> list[str]:
    """`--account` values: each a name, or several separated by spaces or commas (a matrix
    job's chunk, `{"accounts": "a b c"}`), in order, each once."""
    names: list[str] = []
    for value in values:
        for name in value.replace(",", " ").split():
            if name not in names:
                names.append(name)
    return names


def select(accounts: AccountsFile, selection: Selection) -> list[AccountEntry]:
    """The selected accounts, in the file's order (`--all` with nothing else: every one)."""
    wanted = account_names(selection.names)
    unknown = [name for name in wanted if accounts.named(name) is None]
    if unknown:
        raise SelectionError(
            f"no account named {', '.join(unknown)} in {accounts.path}",
            hint=f"its accounts: {', '.join(accounts.names)}",
        )
    chosen = list(accounts.accounts)
    if wanted:
        chosen = [entry for entry in chosen if entry.name in wanted]
    if selection.changed_since is not None:
        changed = set(changed_accounts(accounts, selection.changed_since))
        chosen = [entry for entry in chosen if entry.name in changed]
    return chosen


def changed_accounts(accounts: AccountsFile, ref: str) -> list[str]:
    """The names of the accounts changed between REF's merge base and the work tree."""
    folder = accounts.path.absolute().parent
    root = Path(_git(folder, "rev-parse", "--show-toplevel").strip())
    base = _git(folder, "merge-base", ref, "HEAD", what=f"the merge base of {ref} and HEAD")
    base = base.strip()
    files = _git(root, "diff", "--name-only", "-z", "--no-renames", base)
    untracked = _untracked(root, accounts)
    changed = {(root / name).resolve() for name in (files + untracked).split("\0") if name.strip()}
    file_path = accounts.path.resolve()
    relative = file_path.relative_to(root).as_posix()
    before = file_at(folder, base, relative) if file_path in changed else None
    names = []
    for entry in accounts.accounts:
        if file_path in changed and (
            account_settings(accounts.data, entry.name) != account_settings(before, entry.name)
        ):
            names.append(entry.name)
            continue
        under = entry.path.resolve()
        if any(path == under or under in path.parents for path in changed):
            names.append(entry.name)
    return names


def _untracked(root: Path, accounts: AccountsFile) -> str:
    """The accounts file and the files under the accounts' paths that git does not track,
    those it ignores included: the load reads every file of an account's folder, whatever
    `.gitignore` says."""
    inside = []
    for path in [accounts.path, *(entry.path for entry in accounts.accounts)]:
        resolved = path.resolve()
        if resolved == root or root in resolved.parents:
            inside.append(":(literal)" + (resolved.relative_to(root).as_posix() or "."))
    if not inside:
        return ""
    return _git(root, "ls-files", "--others", "-z", "--", *inside)


def file_at(folder: Path, sha: str, relative: str) -> dict[str, Any] | None:
    """The accounts file as it was at commit `sha` (None: it did not exist or could not be
    read)."""
    from reconciler.desired.parse import parse
    from reconciler.desired.source import SourceText

    try:
        text = _git(folder, "show", f"{sha}:{relative}")
        text.encode()  # bytes that are not UTF-8 came back as lone surrogates
    except (SelectionError, UnicodeEncodeError):
        return None
    data, _ = parse(SourceText(relative, text))
    return data if isinstance(data, dict) else None


def account_settings(data: dict[str, Any] | None, name: str) -> object:
    """What of an accounts file is `name`'s: the file's shared settings and `name`'s entry
    (None: no file, so a new accounts file changes every account). Two files give `name` the
    same account when these are equal."""
    if data is None:
        return None
    shared = {key: value for key, value in data.items() if key != "accounts"}
    return shared, _entry_of(data, name)


def _entry_of(data: dict[str, Any], name: str) -> object:
    items = data.get("accounts")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("name") == name:
            return item
    return None


def _git(folder: Path, *args: str, what: str | None = None) -> str:
    try:
        return run_git(folder, *args)
    except GitFailed as failed:
        if not failed.ran:
            raise SelectionError(
                f"--changed-since needs git, which did not run: {failed.reason}"
            ) from None
        raise SelectionError(
            f"--changed-since: git could not tell {what or ' '.join(args[:2])}: {failed.reason}",
            hint="in CI, fetch enough history for the merge base (actions/checkout with "
            "fetch-depth: 0)",
        ) from None


def matrix(names: list[str], chunk: int | None) -> dict[str, list[dict[str, str]]]:
    """A GitHub Actions matrix: `{"include": [{"account": "eu"}, ...]}`, or with `chunk`,
    `{"include": [{"accounts": "eu us"}, ...]}`, at most `chunk` names a job."""
    if chunk is None:
        return {"include": [{"account": name} for name in names]}
    groups = [names[at : at + chunk] for at in range(0, len(names), chunk)]
    return {"include": [{"accounts": " ".join(group)} for group in groups]}
