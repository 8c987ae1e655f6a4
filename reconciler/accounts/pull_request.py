"""The accounts file a pull request is planned with: the default branch's entries, and the
entries of the accounts the pull request adds.

An account's entry says where its token is sent (`baseUrl`) and which variables hold its
secrets, so for every account the default branch has, the entry planned is the default
branch's: a pull request that points `eu` at a server of its own plans `eu` as main says, and
is warned. An account the pull request adds has no entry on the default branch: it is planned
with the pull request's entry, in its own environment (`reconciler-<name>`), whose secrets an
administrator created. A new entry may not name a variable an account of the default branch
uses (`tokenEnv`, `emailEnv`, `passwordEnv`, `env`): that would send another account's secret
where the pull request says; it is refused, alone, and named. Nor may it give the address its
credentials are sent to: its environment may already hold the account's secrets (created for
the pull request that adds it, or kept since it was removed), and any other pull request may add
an account of that name. Its `baseUrl` is one an administrator chose: none (the environment's
`RECONCILER_BASE_URL`), `${VAR}` whole (the variable its environment holds), or an address an
account of the default branch uses; another is refused, alone, and named.

The pull request's own `reconciler.yaml` is removed before the file is written (a link of
theirs is never written through), and nothing of it is used but the new accounts' entries.
Where a job's checkout holds the default branch's file over the request's (a merge request's), the
request's own is read from git at the commit planned (`accounts_at`).
"""

from __future__ import annotations

import copy
import dataclasses
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from reconciler.accounts.file import (
    DEFAULT_FILE,
    AccountEntry,
    AccountsFile,
    load_accounts_file,
)
from reconciler.accounts.selection import changed_accounts
from reconciler.accounts.variables import base_url_variable
from reconciler.annotations import workflow_command
from reconciler.errors import ReconcilerError
from reconciler.git import file_at_commit


@dataclass(frozen=True, slots=True)
class PullAccounts:
    """The accounts file written beside the pull request's files, and what it holds."""

    path: Path
    changes_file: bool  # the pull request changes reconciler.yaml
    new: tuple[str, ...] = ()  # accounts it adds, planned with its entry
    refused: dict[str, str] = field(default_factory=dict)  # accounts it adds, not planned: why
    problem: str | None = None  # its reconciler.yaml could not be read: why


def pull_request_accounts(default: Path, checkout: Path) -> PullAccounts:
    """Write `checkout/reconciler.yaml`: the default branch's file (`default`), with the
    accounts the pull request's own file adds."""
    main = load_accounts_file(default)
    target = checkout / DEFAULT_FILE
    theirs, problem = _theirs(target)
    main_text = default.read_text(encoding="utf-8")
    changes = target.is_symlink() or (
        target.is_file() and target.read_text(encoding="utf-8", errors="replace") != main_text
    )
    used = {name for entry in main.accounts for name in _sent(entry)}
    new, refused, items = [], {}, []
    raw = {item.get("name"): item for item in (theirs.data.get("accounts") or [])} if theirs else {}
    for entry in theirs.accounts if theirs is not None else ():
        if main.named(entry.name) is not None:
            continue
        shared = sorted(set(_sent(entry)) & used)
        if shared:
            refused[entry.name] = (
                f"its entry, added by this pull request, names {', '.join(shared)}, which an "
                "account of the default branch's reconciler.yaml uses: a new account's "
                "variables must be its own (tokenEnv, emailEnv, passwordEnv, env)"
            )
            continue
        if (address := _chosen_address(entry, main)) is not None:
            refused[entry.name] = (
                f"its entry, added by this pull request, sends its credentials to {address}, "
                "an address no account of the default branch's reconciler.yaml uses: until it "
                "is merged, a new account's address is an administrator's (no baseUrl and "
                "RECONCILER_BASE_URL, or `baseUrl: ${VAR}` with the address in its "
                "environment's RECONCILER_SECRETS)"
            )
            continue
        new.append(entry.name)
        items.append(copy.deepcopy(raw[entry.name]))
    target.unlink(missing_ok=True)
    if items:
        data = copy.deepcopy(main.data)
        data["accounts"] = [*data["accounts"], *items]
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    else:
        text = main_text
    target.write_text(text, encoding="utf-8")
    return PullAccounts(target, changes, tuple(new), refused, problem)


def accounts_at(default: Path, head_sha: str, merged: str) -> PullAccounts:
    """Write the file `merged` beside `default` (the default branch's reconciler.yaml, in the
    request's checkout) from the request's own at commit `head_sha`; what it holds."""
    theirs = file_at_commit(default.parent, head_sha, default.name)
    with tempfile.TemporaryDirectory() as folder:
        if theirs is not None:
            (Path(folder) / DEFAULT_FILE).write_bytes(theirs)
        written = pull_request_accounts(default, Path(folder))
        target = default.parent / merged
        target.unlink(missing_ok=True)  # a link of theirs is never written through
        target.write_bytes(written.path.read_bytes())
    return dataclasses.replace(written, path=target)


def _theirs(target: Path) -> tuple[AccountsFile | None, str | None]:
    """The pull request's accounts file, if it is a readable file of its own (not a link)."""
    if target.is_symlink() or not target.is_file():
        return None, None
    try:
        return load_accounts_file(target), None
    except (ReconcilerError, OSError, UnicodeDecodeError) as error:
        return None, str(error)


def _sent(entry: AccountEntry) -> list[str]:
    """The variables whose values an account's run sends to its service (the plan key only
    signs, on the runner)."""
    names = (entry.token_env, entry.email_env, entry.password_env)
    return [name for name in names if name is not None] + list(entry.env)


def _chosen_address(entry: AccountEntry, main: AccountsFile) -> str | None:
    """The address a new entry's credentials would go to when only the pull request gives it
    (None: an administrator's, as the module says)."""
    url = entry.base_url
    if url is None or base_url_variable(url) is not None:
        return None
    return None if url in {account.base_url for account in main.accounts} else url


def planned_names(accounts: PullAccounts, changed_since: str | None) -> list[str]:
    """The accounts to plan: those the pull request changes since `changed_since` (the new
    ones included; None: every one), in the file's order, then the new ones refused (each
    fails alone, saying why)."""
    written = load_accounts_file(accounts.path)
    chosen = written.names if changed_since is None else changed_accounts(written, changed_since)
    return [*chosen, *accounts.refused]


def messages(accounts: PullAccounts) -> list[str]:
    """What the accounts job says about the pull request's reconciler.yaml (annotations)."""
    said = []
    if accounts.problem is not None:
        why = "This pull request's reconciler.yaml cannot be read, so no account it adds is "
        why += f"planned: {accounts.problem}"  # its author's text, lines and all: escaped
        said.append(workflow_command("warning", why, file=DEFAULT_FILE))
    elif accounts.changes_file:
        said.append(
            f"::warning file={DEFAULT_FILE}::This pull request changes reconciler.yaml: the "
            "accounts of the default branch are planned with its entries (the pull request's "
            "take effect once merged); an account it adds is planned with the pull request's."
        )
    for name in accounts.new:
        said.append(
            f"::notice::{name}: added by this pull request: planned with its entry, in the "
            f"environment reconciler-{name}, which an administrator creates with its secrets"
        )
    for name, why in accounts.refused.items():
        said.append(workflow_command("error", f"{name}: not planned: {why}", file=DEFAULT_FILE))
    return said
