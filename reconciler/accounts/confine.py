"""A command given PATH inside an account's folder reads as that account's run does.

`plan accounts/us` (no selection) in a shell holding every account's variables must not put eu's
secret into us's webhook: the account's files read only the variables of its `env:` list, from
the process's environment or from RECONCILER_SECRETS (`reconciler.accounts.bundle`), as its run
does. This module imports only the accounts file, the bundle and the desired state's
interpolation, so `validate` pays nothing of the service's client for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from reconciler.accounts.bundle import with_bundle
from reconciler.accounts.file import AccountsFile, find_accounts_file, load_accounts_file
from reconciler.desired.interpolate import Confined
from reconciler.errors import ReconcilerError


def path_environment(path: Path, environ: Mapping[str, str]) -> Mapping[str, str]:
    """The environment a command given PATH reads: when PATH is (or is inside) an account's
    folder of the accounts file found from it, the process's (with RECONCILER_SECRETS's
    variables), that account's files reading only the variables of its `env:` list, as its
    run with `--account` does (so `plan accounts/us` in a shell holding every account's
    variables cannot put eu's secret into us's webhook); anywhere else, the process's as it
    is."""
    accounts = _accounts_near(path.absolute() if path.is_dir() else path.absolute().parent)
    if accounts is None:
        return environ  # a folder of its own
    where = path.resolve()
    for entry in accounts.accounts:
        under = entry.path.resolve()
        if where == under or under in where.parents:
            return Confined(
                dict(with_bundle(environ)),
                owner=f"account {entry.name}",
                readable=entry.env,
                where=accounts.path.name,
            )
    return environ


def _accounts_near(folder: Path) -> AccountsFile | None:
    """The accounts file found from `folder` (up to its repository's root), else from the
    working folder; None when neither has one that reads. One that cannot be read, in a
    folder that holds `folder`, is refused: whether PATH is an account's folder, and which
    variables its files may read, is then unknown, and the whole environment is not given to
    it meanwhile."""
    for start in dict.fromkeys((folder, Path.cwd())):
        try:
            found = find_accounts_file(None, start=start)
        except ReconcilerError:
            continue
        try:
            return load_accounts_file(found)
        except (ReconcilerError, OSError) as error:
            if found.parent.resolve() not in (folder.resolve(), *folder.resolve().parents):
                continue  # PATH is outside its folder: none of its accounts
            why = error.message if isinstance(error, ReconcilerError) else str(error)
            raise ReconcilerError(
                f"{found} cannot be read, so whether {folder} is an account's folder, and "
                f"which variables its files may read, is unknown: {why}",
                hint=f"fix {found.name} (`reconciler validate --all` says where)",
            ) from None
    return None
