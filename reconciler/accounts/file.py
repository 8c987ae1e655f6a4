"""The accounts file (`reconciler.yaml`): read and checked, schema and rules, with no network.

Every problem is reported at its line, as the desired state's are. A field that names a
variable (`tokenEnv`, `emailEnv`, `passwordEnv`, `planKeyEnv`) never has its value printed: a
token pasted where its variable's NAME belongs would otherwise end up in a CI log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs

from reconciler.accounts.variables import variable_rules
from reconciler.desired.approvals import ApprovalPolicy
from reconciler.desired.approvals_rules import approvals_problems, build_approvals
from reconciler.desired.model import Location
from reconciler.desired.parse import UNPARSED, parse, scan
from reconciler.desired.problems import Problem, YamlPath
from reconciler.desired.source import read_sources
from reconciler.errors import ReconcilerError
from reconciler.words import noun

SCHEMA_NAME = "accounts.schema.json"
DEFAULT_FILE = "reconciler.yaml"
#: The fields that hold the NAME of a variable, and what the variable holds.
VARIABLE_FIELDS = {
    "tokenEnv": "token",
    "emailEnv": "login email",
    "passwordEnv": "password",
    "planKeyEnv": "plan key",
}
_EXAMPLES = {
    "tokenEnv": "RECONCILER_TOKEN_EU",
    "emailEnv": "RECONCILER_EMAIL_EU",
    "passwordEnv": "RECONCILER_PASSWORD_EU",
    "planKeyEnv": "RECONCILER_PLAN_KEY_EU",
}
#: A variable name as shells and CI systems take it.
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class InvalidAccountsFile(ReconcilerError):
    """The accounts file is invalid; `.problems` lists every problem, sorted by place."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems)
        count = len(self.problems)
        lines = [str(problem) for problem in self.problems]
        lines.append(f"{count:,} {noun(count, 'problem')} found")
        super().__init__("invalid accounts file:\n" + "\n".join(lines))


@dataclass(frozen=True, slots=True)
class AccountEntry:
    """One account of the file, as written (names of variables, never their values)."""

    name: str
    path: Path  # the desired state, resolved against the accounts file's folder
    written_path: str  # as written in the file
    base_url: str | None
    token_env: str | None
    email_env: str | None
    password_env: str | None
    plan_key_env: str | None
    client_id: int | None
    line: int
    env: tuple[str, ...] = ()  # the variables its files may read as `${VAR}`
    #: `policy.approvals` of the entry (None: not set here), and the line it is written at.
    approvals: ApprovalPolicy | None = None
    approvals_line: int = 0

    def variables(self) -> list[str]:
        """The names of the variables that hold this account's secrets."""
        names = (self.token_env, self.email_env, self.password_env, self.plan_key_env)
        return [name for name in names if name is not None]


@dataclass(frozen=True, slots=True)
class AccountsFile:
    """The accounts, in the file's order."""

    path: Path
    version: int
    accounts: tuple[AccountEntry, ...]
    data: dict[str, Any]  # the values as parsed, for telling what changed (`selection`)

    @property
    def names(self) -> list[str]:
        return [entry.name for entry in self.accounts]

    def named(self, name: str) -> AccountEntry | None:
        return next((entry for entry in self.accounts if entry.name == name), None)


@cache
def accounts_schema() -> dict[str, Any]:
    """The schema shipped with the package (`reconciler/schemas/`, a link to `schemas/`)."""
    text = resources.files("reconciler").joinpath("schemas", SCHEMA_NAME).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> Any:
    schema = accounts_schema()
    return jsonschema_rs.validator_for(schema)


def load_accounts_file(path: Path) -> AccountsFile:
    """Read and check the accounts file at `path`; `InvalidAccountsFile` lists every problem."""
    sources, problems = read_sources(path)
    if problems or len(sources) != 1 or path.is_dir():
        if not problems:
            problems = [Problem(Location(str(path), 1, 1), "an accounts file is one YAML file")]
        raise InvalidAccountsFile(problems)
    source = sources[0]
    data, parse_problems = parse(source)
    if data is UNPARSED:
        raise InvalidAccountsFile(parse_problems)
    found = list(_problems(data))
    wanted = {path[:length] for path, _, _ in found for length in range(len(path) + 1)}
    names: set[YamlPath] = {("accounts", index, "name") for index in range(_count(data))}
    names |= {
        path
        for index in range(_count(data))
        for path in (("accounts", index, "policy"), ("accounts", index, "policy", "approvals"))
    }
    names |= {("accounts",), *(("accounts", index) for index in range(_count(data)))}
    marks = scan(source, wanted | names).marks

    def where(path: YamlPath, at_key: bool = False) -> Location:
        if at_key and path in marks and marks[path].key is not None:
            return Location(source.name, *marks[path].key)  # type: ignore[misc]
        while path and path not in marks:
            path = path[:-1]
        line, column = marks[path].value if path in marks else (1, 1)
        return Location(source.name, line, column)

    located = [Problem(where(place, at_key), message) for place, message, at_key in found]
    if located:
        raise InvalidAccountsFile(located)
    assert isinstance(data, dict)
    folder = path.parent
    entries = tuple(
        _entry(
            item,
            folder,
            where(("accounts", index)).line,
            where(("accounts", index, "policy", "approvals"), True).line,
        )
        for index, item in enumerate(data["accounts"])
    )
    return AccountsFile(path, data["version"], entries, data)


def _count(data: object) -> int:
    accounts = data.get("accounts") if isinstance(data, dict) else None
    return len(accounts) if isinstance(accounts, list) else 0


def _entry(item: dict[str, Any], folder: Path, line: int, approvals_line: int) -> AccountEntry:
    return AccountEntry(
        name=item["name"],
        path=folder / item["path"],
        written_path=item["path"],
        base_url=item.get("baseUrl"),
        token_env=item.get("tokenEnv"),
        email_env=item.get("emailEnv"),
        password_env=item.get("passwordEnv"),
        plan_key_env=item.get("planKeyEnv"),
        client_id=item.get("clientId"),
        line=line,
        env=tuple(item.get("env", ())),
        approvals=build_approvals(item.get("policy", {}).get("approvals")),
        approvals_line=approvals_line,
    )


Found = tuple[YamlPath, str, bool]  # where, what, whether at the key


def _problems(data: object) -> Iterator[Found]:
    """The variable fields first (their values are never shown), then the schema, then the
    rules across accounts (names unique, a literal base URL usable, each variable one
    account's, for one use: `reconciler.accounts.variables`)."""
    hidden: set[YamlPath] = set()
    accounts = data.get("accounts") if isinstance(data, dict) else None
    items = accounts if isinstance(accounts, list) else []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        for field, holds in VARIABLE_FIELDS.items():
            if field in item:
                place: YamlPath = ("accounts", index, field)
                message = variable_problem(field, holds, item[field])
                if message is not None:
                    hidden.add(place)
                    yield place, message, False
    for place, message, at_key in _schema_problems(data):
        if place not in hidden:
            yield place, message, at_key
    yield from _rules(items)


def looks_like_secret(value: str) -> bool:
    """A value no one would name a variable: a JWT, a long mix of cases and digits, 64+ long."""
    if len(value) >= 64 or value.startswith("eyJ"):
        return True
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return len(value) >= 20 and mixed and any(c.isdigit() for c in value)


def variable_problem(field: str, holds: str, value: object) -> str | None:
    """What is wrong with a variable field's value, without ever showing the value."""
    if not isinstance(value, str):
        return f"{field} must be the name of the variable that holds the {holds} (a string)"
    if looks_like_secret(value) or not _VARIABLE.fullmatch(value):
        return (
            f"{field} must be the NAME of the variable that holds the {holds}, and this value "
            f"looks like a secret itself (it is not shown here): put the {holds} in a CI "
            f"secret or variable and write its name, such as {_EXAMPLES[field]}"
        )
    return None


def _schema_problems(data: object) -> Iterator[Found]:
    try:
        errors = list(_validator().iter_errors(data))
    except (ValueError, TypeError):  # a key that is not text
        yield (), "every key of the accounts file must be text", False
        return
    for error in errors:
        path: YamlPath = tuple(error.instance_path)
        if path[2:3] == ("policy",):
            continue  # said by `_policy_problems`, with the desired state's rules for it
        keyword = str(tuple(error.schema_path)[-1])
        name = str(path[-1]) if path else "the top level"
        instance = error.instance
        if keyword == "additionalProperties" and isinstance(instance, dict):
            known = _known_keys(path)
            for key in instance:
                if key not in known:
                    message = f"unknown key {key!r}; known keys: {', '.join(known)}"
                    yield (*path, str(key)), message, True
        elif keyword == "required" and isinstance(instance, dict):
            for key in _required(path):
                if key not in instance:
                    yield path, f"missing required key {key!r}", False
        elif keyword == "dependentRequired":
            yield path, "emailEnv and passwordEnv go together: give both, or tokenEnv", False
        elif path[-1:] == ("name",) and keyword == "pattern":
            message = f"name {instance!r:.60} must be 1 to 40 of a-z, 0-9 and -"
            yield path, message, False
        elif keyword == "const":
            yield path, f"version must be 1; got {instance!r:.40}", False
        elif keyword == "type":
            yield path, f"{name} must be {_type_of(error)}", False
        elif keyword == "minItems":
            yield path, "accounts must list at least one account", False
        elif keyword == "minLength":
            yield path, f"{name} must not be empty", False
        else:
            yield path, f"{name}: {error.message[:200]}", False


def _type_of(error: Any) -> str:
    names = {
        "object": "a mapping",
        "array": "a list",
        "string": "a string",
        "integer": "an integer",
    }
    found = re.search(r'of types? "?(\w+)', str(error.message))
    wanted = found[1] if found else ""
    return names.get(wanted, wanted or "of another type")


def _known_keys(path: YamlPath) -> list[str]:
    schema = accounts_schema()
    part = schema["$defs"]["account"] if path else schema
    return list(part["properties"])


def _required(path: YamlPath) -> list[str]:
    schema = accounts_schema()
    part = schema["$defs"]["account"] if path else schema
    return list(part["required"])


def _rules(items: list[Any]) -> Iterator[Found]:
    from reconciler.service.config import ConfigError, check_base_url

    first_name: dict[str, int] = {}
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        place: YamlPath = ("accounts", index)
        name = item.get("name")
        if isinstance(name, str):
            if name in first_name:
                message = f"the name {name!r} is taken by item {first_name[name] + 1} already"
                yield (*place, "name"), message, False
            first_name.setdefault(name, index)
        if not {"tokenEnv", "emailEnv", "passwordEnv"} & set(item):
            message = (
                "give tokenEnv (the NAME of the variable that holds this account's token), or "
                "emailEnv and passwordEnv"
            )
            yield place, message, False
        if "policy" in item:
            yield from _policy_problems(item["policy"], (*place, "policy"))
        url = item.get("baseUrl")
        if isinstance(url, str) and url and "${" not in url:
            try:
                check_base_url(url, "baseUrl")
            except ConfigError as error:
                yield (*place, "baseUrl"), error.message, False
    yield from variable_rules(items)


def _policy_problems(policy: object, place: YamlPath) -> Iterator[Found]:
    """An entry's `policy`: `approvals` only, checked as the desired state's is."""
    if not isinstance(policy, dict):
        yield place, "policy must be a mapping (approvals: [...])", False
        return
    for key in policy:
        if key != "approvals":
            message = (
                f"unknown key {key!r} in an account's policy; known keys: approvals (the "
                "others are the desired state's policy)"
            )
            yield (*place, str(key)), message, True
    if "approvals" in policy:
        for problem in approvals_problems(policy["approvals"], (*place, "approvals")):
            yield problem.path, problem.message, problem.at_key


def approvals_in_force(
    entry: AccountEntry, accounts_path: Path | None, files_approvals: ApprovalPolicy | None
) -> ApprovalPolicy | None:
    """The account's `policy.approvals`: its entry's or its files' (never both: an error at
    the entry's line, since two places would let one loosen what the other says)."""
    if entry.approvals is not None and files_approvals is not None:
        raise InvalidAccountsFile([approvals_twice(entry, accounts_path)])
    return entry.approvals if entry.approvals is not None else files_approvals


def approvals_twice(entry: AccountEntry, accounts_path: Path | None) -> Problem:
    """The problem of an account whose entry and files both set `policy.approvals`."""
    name = str(accounts_path) if accounts_path is not None else DEFAULT_FILE
    return Problem(
        Location(name, entry.approvals_line or entry.line, 1),
        f"account {entry.name} sets policy.approvals here and its desired state "
        f"({entry.written_path}) sets policy.approvals too: set it in one place",
    )


def find_accounts_file(given: Path | None, start: Path | None = None) -> Path:
    """`--accounts-file`, else `reconciler.yaml` in this folder or the nearest parent up to
    the repository's root."""
    if given is not None:
        return given
    folder = (start or Path.cwd()).absolute()
    chain = [folder, *folder.parents]
    root = next((index for index, c in enumerate(chain) if (c / ".git").exists()), 0)
    for candidate in chain[: root + 1]:  # outside a repository, this folder only
        if (candidate / DEFAULT_FILE).is_file():
            return candidate / DEFAULT_FILE
    raise ReconcilerError(
        f"no accounts file: {DEFAULT_FILE} is neither here nor in a parent folder up to the "
        "repository's root",
        hint=f"write {DEFAULT_FILE} at the repository's root (see docs/accounts.md), or pass "
        "--accounts-file PATH",
    )
