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
    seen: dict[str, _Use] = {}
    if any(isinstance(item, dict) and "planKeyEnv" not in item for item in items):
        seen[DEFAULT_PLAN_KEY] = _Use(DEFAULT_PLAN_KEY, "plan key", None, ())
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        yield from _base_url_form(item, index)
        for use in _uses(item, index):
            if use.role == "variable of its files" and use.variable.startswith(RESERVED_PREFIXES):
                message = (
                    f"env names {use.variable}: the reconciler's own settings and the CI's "
                    f"variables ({', '.join(p + '*' for p in RESERVED_PREFIXES)}) are never "
                    "read by the files"
                )
                yield use.place, message, False
                continue
            first = seen.get(use.variable)
            if first is None:
                seen[use.variable] = use
            elif reason := _clash(first, use, items):
                yield use.place, reason, False


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
        owner = "the accounts that give no planKeyEnv"
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
