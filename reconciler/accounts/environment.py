"""Each account's own environment, built from its entry alone: isolation by construction.

The reconciler reads its connection from `RECONCILER_BASE_URL`, `RECONCILER_TOKEN`,
`RECONCILER_EMAIL`, `RECONCILER_PASSWORD`, `RECONCILER_CLIENT_ID` and `RECONCILER_PLAN_KEY`.
For an account, those names are filled from the variables its entry names, and its files may
read the variables of its `env:` list; nothing else of the process's environment is there
(but the settings that hold no secret: timeout, parallelism, retries). So with every
account's variables in one shell, neither an account's client nor a `${VAR}` of its files can
read another's: the mapping does not hold them. The account's run is then the single-account
code given this mapping instead of `os.environ`. In CI the variables may also come in one
secret of the account's environment, `RECONCILER_SECRETS` (`reconciler.accounts.bundle`).
"""

from __future__ import annotations

from collections.abc import Mapping

from reconciler.accounts.bundle import unnamed, with_bundle
from reconciler.accounts.file import AccountEntry, AccountsFile
from reconciler.accounts.variables import BUNDLE, base_url_variable
from reconciler.desired.interpolate import Confined
from reconciler.errors import ReconcilerError
from reconciler.service.config import (
    ENV_BASE_URL,
    ENV_CLIENT_ID,
    ENV_EMAIL,
    ENV_PARALLELISM,
    ENV_PASSWORD,
    ENV_RETRY_ATTEMPTS,
    ENV_RETRY_SECONDS,
    ENV_TIMEOUT,
    ENV_TOKEN,
)

ENV_PLAN_KEY = "RECONCILER_PLAN_KEY"
#: The connection's variables: in an account's environment, only what its entry puts there.
CONNECTION_VARIABLES = (
    ENV_BASE_URL,
    ENV_TOKEN,
    ENV_EMAIL,
    ENV_PASSWORD,
    ENV_CLIENT_ID,
    ENV_PLAN_KEY,
)
#: The run's settings that hold no secret: the process's, for every account.
SETTINGS = (ENV_TIMEOUT, ENV_PARALLELISM, ENV_RETRY_ATTEMPTS, ENV_RETRY_SECONDS)


class AccountSettingError(ReconcilerError):
    """An account's entry names a variable that is not set, or a base URL that cannot be
    built: that account fails, the others run."""


def account_environment(
    entry: AccountEntry,
    accounts: AccountsFile,
    environ: Mapping[str, str],
    *,
    connect: bool = True,
) -> Confined:
    """The environment `entry`'s run sees: the settings that hold no secret and the variables
    of its `env:` list, as the process has them, with the entry's own connection in the usual
    names (`connect` False: none, for `validate`, which needs no credentials). Its files may
    read its `env:` variables only."""
    try:
        return _account_environment(entry, accounts, with_bundle(environ), connect)
    except AccountSettingError as error:
        note = unnamed(environ, accounts)
        if note is None:
            raise
        raise AccountSettingError(error.message, hint=f"{error.hint}; {note}") from None


def _account_environment(
    entry: AccountEntry, accounts: AccountsFile, environ: Mapping[str, str], connect: bool
) -> Confined:
    names = (*SETTINGS, *entry.env)
    own = Confined(
        {name: environ[name] for name in names if name in environ},
        owner=f"account {entry.name}",
        readable=entry.env,
        where=accounts.path.name,
    )
    if not connect:
        return own
    own[ENV_BASE_URL] = _base_url(entry, environ)
    if entry.token_env is not None:
        own[ENV_TOKEN] = _required(entry, entry.token_env, "tokenEnv", "token", environ)
    if entry.email_env is not None and entry.password_env is not None:
        own[ENV_EMAIL] = _required(entry, entry.email_env, "emailEnv", "login email", environ)
        own[ENV_PASSWORD] = _required(entry, entry.password_env, "passwordEnv", "password", environ)
    key = plan_key_setting(entry, environ)
    if key is not None:
        own[ENV_PLAN_KEY] = key
    if entry.client_id is not None:
        own[ENV_CLIENT_ID] = str(entry.client_id)
    return own


def plan_key_setting(entry: AccountEntry, environ: Mapping[str, str]) -> str | None:
    """The account's plan key: the variable its `planKeyEnv` names (which must then be set),
    else RECONCILER_PLAN_KEY (None: neither is set, and its token keys its plans)."""
    environ = with_bundle(environ)
    key_variable = entry.plan_key_env or ENV_PLAN_KEY
    own = entry.plan_key_env is not None
    if key_variable in environ and (environ[key_variable].strip() or not own):
        return environ[key_variable]  # RECONCILER_PLAN_KEY empty: refused as for one account
    if own:
        state = "is empty" if key_variable in environ else "is not set"
        raise AccountSettingError(
            f"{entry.plan_key_env} (planKeyEnv of account {entry.name}) {state}",
            hint=f"set it (in CI: in {BUNDLE}, the secret of the environments "
            f"reconciler-{entry.name} and production-{entry.name})",
        )
    return None


def key_environment(entry: AccountEntry, environ: Mapping[str, str]) -> dict[str, str]:
    """What reading the account's plan key needs where no client is opened (`plan-compare`
    of its saved plans), in the usual names: its plan key as its run reads it, else its
    token (empty: neither is set)."""
    environ = with_bundle(environ)
    key = plan_key_setting(entry, environ)
    if key is not None:
        return {ENV_PLAN_KEY: key}
    if entry.token_env is not None and environ.get(entry.token_env, "").strip():
        return {ENV_TOKEN: environ[entry.token_env]}
    return {}


def _required(
    entry: AccountEntry, variable: str, field: str, holds: str, environ: Mapping[str, str]
) -> str:
    value = environ.get(variable, "")
    if not value.strip():
        state = "is empty" if variable in environ else "is not set"
        raise AccountSettingError(
            f"{variable} ({field} of account {entry.name}, its {holds}) {state}",
            hint=f"set {variable} for this account (in CI: in {BUNDLE}, the secret of the "
            f"environments reconciler-{entry.name} and production-{entry.name}); the other "
            "accounts do not need it",
        )
    return value


def _base_url(entry: AccountEntry, environ: Mapping[str, str]) -> str:
    if entry.base_url is None:
        url = environ.get(ENV_BASE_URL, "")
        if not url.strip():
            raise AccountSettingError(
                f"account {entry.name} has no baseUrl and {ENV_BASE_URL} is not set",
                hint="give the account a baseUrl in the accounts file, or set "
                f"{ENV_BASE_URL} for every account that has none",
            )
        return url
    variable = base_url_variable(entry.base_url)
    if variable is None:
        return entry.base_url
    return _required(entry, variable, "baseUrl", "service's address", environ)
