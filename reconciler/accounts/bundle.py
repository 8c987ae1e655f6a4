"""One secret per account environment: the account's variables, under the names its entry gives.

A GitHub workflow reads a secret only by a name written in it (`secrets.RECONCILER_TOKEN_FR`),
so listing each account's variables would make every new account a workflow edit. The two ways
around a list, `toJSON(secrets)` and `secrets[expression]`, hand the step every repository and
organization secret, and a pull request that adds an account chooses which ones its plan reads.
Instead each account's environment holds one secret, `RECONCILER_SECRETS`: a JSON object of
the variables its entry names, such as `{"RECONCILER_TOKEN_FR": "...", "WEBHOOK_TOKEN_FR":
"..."}`; the workflows name that one secret, and the environment decides whose it is.

An account's run reads its variables from the process's environment or from the bundle. A
variable in both with different values is refused (which one was meant?). A name that no entry
of the accounts file gives is kept out of every account and named when a variable is missing (a
typo), but refuses nothing: a variable renamed in an entry is in the bundle under both names
until the rename is merged. Nothing of a value is ever shown, whichever way round the bundle is
written: the JSON's own errors say where, never what; a key no entry names is told by its
position only (`its key 2`), never by its text, since a bundle written the wrong way round,
`{"WINTERISCOMING2026": "RECONCILER_PASSWORD_EU"}`, has the secrets for keys, and they may read
as names; and an error of the JSON names a key only when it reads as a variable's name (upper
case, not like a credential) and its value does not (a value that reads as a name is a bundle
written the wrong way round).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from reconciler.accounts.file import AccountEntry, AccountsFile
from reconciler.accounts.variables import BUNDLE, DEFAULT_PLAN_KEY, base_url_variable
from reconciler.errors import ReconcilerError
from reconciler.redaction import could_be_credential
from reconciler.words import plural

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: A key a message may name: a variable's name as people write one.
_SHOWN = re.compile(r"[A-Z_][A-Z0-9_]*\Z")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Said of a key that does not read as one.
_HIDDEN = "not shown: it may be a value"
_FORM = (
    f'{BUNDLE} holds a JSON object of the account\'s variables, {{"NAME": "value", ...}}, '
    "each NAME one its entry in the accounts file gives"
)


class BundleError(ReconcilerError):
    """RECONCILER_SECRETS cannot be read as an account's variables."""


def with_bundle(environ: Mapping[str, str]) -> Mapping[str, str]:
    """`environ` with the variables of its RECONCILER_SECRETS (itself left out); `environ` as
    it is when there is none or it is empty (a secret that does not exist is passed as '')."""
    raw = environ.get(BUNDLE, "")
    if not raw.strip():
        return environ
    merged = {name: value for name, value in environ.items() if name != BUNDLE}
    for name, value in _parse(raw).items():
        mine = environ.get(name, "")
        if mine.strip() and mine != value:
            raise BundleError(
                f"{name} is set both in the environment and in {BUNDLE}, to different values",
                hint=f"set it in one place: in CI, in {BUNDLE} of the account's environment",
            )
        merged[name] = value
    return merged


def unnamed(environ: Mapping[str, str], accounts: AccountsFile) -> str | None:
    """What RECONCILER_SECRETS holds that no entry of `accounts` names, said for the error of a
    variable that is missing (a typo, or a rename half done); None: nothing."""
    raw = environ.get(BUNDLE, "")
    if not raw.strip():
        return None
    given = named_variables(accounts)
    stray = [at for at, name in enumerate(_parse(raw), start=1) if name not in given]
    if not stray:
        return None
    places = ", ".join(map(str, stray[:10])) + (", ..." if len(stray) > 10 else "")
    which = "key" if len(stray) == 1 else "keys"
    return (
        f"{BUNDLE} holds {plural(len(stray), 'key')} ({which} {places} of its object) that no "
        f"entry of {accounts.path.name} names (their text is not shown: it may be a value)"
    )


def named_variables(accounts: AccountsFile) -> frozenset[str]:
    """Every variable an entry of `accounts` reads (the default plan key included)."""
    names = {DEFAULT_PLAN_KEY}
    for entry in accounts.accounts:
        names.update(_named(entry))
    return frozenset(names)


def _named(entry: AccountEntry) -> set[str]:
    fields = (entry.token_env, entry.email_env, entry.password_env, entry.plan_key_env)
    names = {name for name in fields if name is not None} | set(entry.env)
    if entry.base_url is not None and (variable := base_url_variable(entry.base_url)):
        names.add(variable)
    return names


def _parse(raw: str) -> dict[str, str]:
    try:
        found = json.loads(raw, object_pairs_hook=_unique)
    except BundleError:
        raise
    except RecursionError:
        raise BundleError(f"{BUNDLE} is not valid JSON: nested too deep", hint=_FORM) from None
    except ValueError as error:  # its message says where (line, column), never the text
        where = getattr(error, "msg", "not JSON")
        line, column = getattr(error, "lineno", None), getattr(error, "colno", None)
        at = f" at line {line}, column {column}" if line is not None else ""
        raise BundleError(f"{BUNDLE} is not valid JSON: {where}{at}", hint=_FORM) from None
    if not isinstance(found, dict):
        raise BundleError(f"{BUNDLE} is a JSON {_kind(found)}, not an object", hint=_FORM)
    for place, (name, value) in enumerate(found.items(), start=1):
        if name == BUNDLE:
            raise BundleError(f"{BUNDLE} holds {BUNDLE} itself", hint=_FORM)
        if not _NAME.match(name):
            raise BundleError(
                f"{BUNDLE}'s key {place} is not a variable name ({_HIDDEN})", hint=_FORM
            )
        if not isinstance(value, str):
            raise BundleError(
                f"{BUNDLE}: the value of {_key(name, place, value)} is a JSON {_kind(value)}, "
                "not a string",
                hint=_FORM,
            )
        if _SURROGATE.search(value):  # `\ud800` alone: no text, so nothing could send it
            raise BundleError(
                f"{BUNDLE}: the value of {_key(name, place, value)} is not text (a lone surrogate, "
                "a `\\uD800`-`\\uDFFF` escape without its pair)",
                hint=_FORM,
            )
    return found


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found: dict[str, object] = {}
    for at, (name, value) in enumerate(pairs, start=1):
        if name in found:
            key = _key(name, at, value, found[name])
            raise BundleError(f"{BUNDLE} holds {key} twice", hint=_FORM)
        found[name] = value
    return found


def _shows(name: str) -> bool:
    """Whether a message may name key `name`: it reads as a variable's name, not a value."""
    return bool(_SHOWN.match(name)) and not could_be_credential(name)


def _key(name: str, at: int, *values: object) -> str:
    """Key `name`, the `at`th, as a message names it: by its position when it may be a value
    (it does not read as a name, or one of its `values` does: the bundle is the wrong way
    round)."""
    reversed_ = any(isinstance(value, str) and _shows(value) for value in values)
    return name if _shows(name) and not reversed_ else f"its key {at} ({_HIDDEN})"


def _kind(value: object) -> str:
    kinds = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return kinds.get(type(value), "number")
