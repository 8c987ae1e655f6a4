"""How a message names one account's connection settings: its entry in the accounts file and
its own variables, never an option.

An account's run is the single-account code given the account's environment
(`reconciler.accounts.environment`), where its token is `RECONCILER_TOKEN` and its address
`RECONCILER_BASE_URL`. Those are not the names the operator set: a refused token is
`RECONCILER_TOKEN_FR`, the address is the entry's `baseUrl`, and `--base-url` or `--client-id`,
which a selection refuses, must not be suggested. The client's configuration carries these
names (`reconciler.service.config.SettingNames`) to every message that names a setting.
"""

from __future__ import annotations

import os
from pathlib import Path

from reconciler.accounts.file import AccountEntry
from reconciler.service.config import ENV_BASE_URL, SettingNames


def shown_path(path: Path) -> str:
    """The accounts file as a person finds it: relative to this folder when under it."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def account_names(entry: AccountEntry, accounts_path: Path) -> SettingNames:
    """Where `entry`'s settings are given, for messages of its run."""
    where = f"account {entry.name} in {shown_path(accounts_path)}"
    base_url = (
        f"the baseUrl of {where}"
        if entry.base_url is not None
        else f"{ENV_BASE_URL} (the address of {where}, which has no baseUrl)"
    )
    token = f"{entry.token_env} (the tokenEnv of {where})" if entry.token_env else "the token"
    login = f"{entry.email_env} and {entry.password_env} (the emailEnv and passwordEnv of {where})"
    return SettingNames(
        base_url=base_url,
        address=base_url,
        token=token,
        login=login,
        client_id=f"the clientId of {where}",
        set_client_id=f"set clientId in the entry of {where}",
        renew=f"give the entry of {where} an emailEnv and a passwordEnv",
        plan_key=(
            f"{entry.plan_key_env} (the planKeyEnv of {where})"
            if entry.plan_key_env
            else "RECONCILER_PLAN_KEY"
        ),
        sandbox=False,
    )
