"""Which variables each account of the accounts file may read, and the rules that keep them
apart: one variable, one account, one use.

An entry names every variable its run reads: its token (`tokenEnv`), login (`emailEnv`,
`passwordEnv`), plan key (`planKeyEnv`, else `RECONCILER_PLAN_KEY`), the variable of its
`baseUrl` when that is `${VAR}` whole, and the variables its files may read as `${VAR}`
(`env:`). A variable two accounts name, or a token, password or plan key named for anything
else, would carry one account's secret into another's requests or files: each is refused at
its line. A plan key is the one thing accounts may share (each saved plan is bound to its
account anyway), as long as it is only ever a plan key.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from reconciler.desired.interpolate import references
from reconciler.desired.problems import YamlPath

#: The plan key of every account whose entry gives no `planKeyEnv`.
DEFAULT_PLAN_KEY = "RECONCILER_PLAN_KEY"
#: What a field's variable is for.
ROLES = {
    "tokenEnv": "token",
    "emailEnv": "login email",
    "passwordEnv": "password",
    "planKeyEnv": "plan key",
    "baseUrl": "base URL",
    "env": "variable of its files",
}
#: The roles whose variable holds a credential, read for that alone.
SECRET_ROLES = frozenset({"token", "password", "plan key"})
#: Names the files may never read (the reconciler's settings and the CI's), as `fill` refuses.
RESERVED_PREFIXES = ("RECONCILER_", "GITHUB_", "ACTIONS_", "RUNNER_")
#: The one secret of an account's CI environment (`reconciler.accounts.bundle`): never a
#: variable an entry names.
BUNDLE = "RECONCILER_SECRETS"
#: The reconciler's own credentials: never an address.
CREDENTIAL_NAMES = frozenset(
    {"RECONCILER_TOKEN", "RECONCILER_EMAIL", "RECONCILER_PASSWORD", DEFAULT_PLAN_KEY}
)

Found = tuple[YamlPath, str, bool]  # where, what, whether at the key


@dataclass(frozen=True, slots=True)
class _Use:
    variable: str
    role: str
    index: int | None  # the account's item; None: the default plan key of several
    place: YamlPath


def base_url_variable(url: str) -> str | None:
    """The variable a `baseUrl` of `${VAR}` whole names (None: a literal address)."""
    names = references(url)
    return names[0] if len(names) == 1 and url == f"${{{names[0]}}}" else None


def variable_rules(items: list[Any]) -> Iterator[Found]:
    """The problems of the variables the entries name, each at its line."""
    # The default plan key is one, whether or not an account reads it: never another use.
    seen: dict[str, _Use] = {DEFAULT_PLAN_KEY: _Use(DEFAULT_PLAN_KEY, "plan key", None, ())}
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        yield from _base_url_form(item, index)
        for use in _uses(item, index):
            if reason := _reserved(use):
                yield use.place, reason, False
                continue
            first = seen.get(use.variable)
            if first is None:
                seen[use.variable] = use
            elif reason := _clash(first, use, items):
                yield use.place, reason, False


def _reserved(use: _Use) -> str | None:
    """Why a variable of the files or of a `baseUrl` may not be this one (None: it may)."""
    if use.variable == BUNDLE:
        return (
            f"{use.place[-1] if use.role != ROLES['env'] else 'env'} names {BUNDLE}, the secret "
            "that holds an account's variables in CI: name the variables themselves"
        )
    if use.role == ROLES["env"] and use.variable.startswith(RESERVED_PREFIXES):
        return (
            f"env names {use.variable}: the reconciler's own settings and the CI's variables "
            f"({', '.join(p + '*' for p in RESERVED_PREFIXES)}) are never read by the files"
        )
    if use.role == ROLES["baseUrl"] and (
        use.variable in CREDENTIAL_NAMES or use.variable.startswith(RESERVED_PREFIXES[1:])
    ):
        return (
            f"baseUrl names {use.variable}, which holds a credential or a CI setting, not "
            "the service's address"
        )
    return None


def _uses(item: dict[str, Any], index: int) -> Iterator[_Use]:
    place: YamlPath = ("accounts", index)
    for field in ("tokenEnv", "emailEnv", "passwordEnv", "planKeyEnv"):
        if isinstance(item.get(field), str):
            yield _Use(item[field], ROLES[field], index, (*place, field))
    url = item.get("baseUrl")
    if isinstance(url, str) and (variable := base_url_variable(url)) is not None:
        yield _Use(variable, ROLES["baseUrl"], index, (*place, "baseUrl"))
    names = item.get("env")
    for at, name in enumerate(names if isinstance(names, list) else []):
        if isinstance(name, str):
            yield _Use(name, ROLES["env"], index, (*place, "env", at))


def _clash(first: _Use, then: _Use, items: list[Any]) -> str | None:
    """Why `then` may not name the variable `first` named already (None: it may)."""
    if first.role == then.role == "plan key":
        return None  # one plan key for several accounts, each plan bound to its account
    if first.index is None:
        owner = "every account that gives no planKeyEnv (the default)"
    elif first.index == then.index:
        owner = "this account"
    else:
        name = items[first.index].get("name")
        owner = f"account {name}" if isinstance(name, str) else f"item {first.index + 1}"
    field = then.place[2] if len(then.place) > 2 else "this field"
    what = f"{field} names {then.variable}, which is the {first.role} of {owner} already"
    if first.role in SECRET_ROLES or then.role in SECRET_ROLES:
        return f"{what}: a token, password or plan key is read for that alone, never as another"
    return f"{what}: each variable belongs to one account, so no account reads another's"


def _base_url_form(item: dict[str, Any], index: int) -> Iterator[Found]:
    url = item.get("baseUrl")
    if not isinstance(url, str) or "${" not in url or base_url_variable(url):
        return
    yield (
        ("accounts", index, "baseUrl"),
        "baseUrl takes a variable only whole (`${RECONCILER_BASE_URL_EU}`, its NAME): a "
        "`${VAR}` inside an address would send the variable's value to wherever the rest of "
        "it points",
        False,
    )
