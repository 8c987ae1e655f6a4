"""An account's saved plan against its entry, and the record that it was applied, both read
before any request of `apply DIR`.

Before the token leaves the machine, the plan's account (the base URL, client and login it was
made for, inside what is signed) must be the one the account's entry in the accounts file
names now: a changed `baseUrl` is refused here, so nothing reaches the new address.

Once a plan applied completely, `DIR/<name>.applied` records it: the plan's signature, when,
and what was done, signed with the same plan key. `apply DIR` run again after a partial
failure finds it and says the plan was already applied, without a request, instead of
refusing the plan as stale (the account has changed since: by this very plan), and goes on
with the accounts that failed. The record can only make an account be skipped, which sends
nothing; what stops a plan being applied twice is still the plan's own check against a fresh
read of the account (`reconciler.plan.resume`). A record that does not verify (edited,
another key's, another plan's) is refused, naming it, and nothing is sent: a forged record
cannot make a plan look applied. A record is not written when an apply was incomplete; `plan
--out DIR` removes the records of the accounts it plans.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reconciler.accounts.file import AccountEntry
from reconciler.errors import ReconcilerError, Refused
from reconciler.plan.account import Account, check_account
from reconciler.plan.saved import SavedPlan, write_private_json
from reconciler.plan.signing import PREFIX, PlanKey, canonical
from reconciler.regular import NotRegular, read_regular
from reconciler.service.config import ENV_BASE_URL, ENV_CLIENT_ID, ENV_EMAIL

RECORD_SUFFIX = ".applied"
_FORMAT = "reconciler-applied"
_LABEL = b"reconciler applied-record v1"
_MAX_BYTES = 64 * 1024


class BadRecord(Refused):
    """`DIR/<name>.applied` is not this plan key's record of this plan: nothing was sent."""


def check_entry(saved: SavedPlan, entry: AccountEntry, environ: Mapping[str, str]) -> None:
    """Refuse a plan whose account is not the one `entry` names now (its address, its
    `clientId`, its login email), before any request: `environ` is the account's own."""
    recorded = saved.account
    assert recorded is not None, "a saved plan read from a file records its account"
    given = environ.get(ENV_CLIENT_ID)
    client_id = int(given) if given else recorded.client_id  # no clientId: the service says
    email = environ.get(ENV_EMAIL) or None
    current = Account.of(environ[ENV_BASE_URL], client_id, email)
    address = "baseUrl" if entry.base_url is not None else f"{ENV_BASE_URL} (it has no baseUrl)"
    check_account(
        recorded,
        current,
        name=saved.name,
        doing=f"would talk to, as account {entry.name}'s entry says now,",
        hint=f"the {address} or clientId of account {entry.name}'s entry changed since the plan "
        f"was made: restore them, or plan the account again (`reconciler plan --account "
        f"{entry.name} --out DIR`)",
    )


def record_path(folder: Path, name: str) -> Path:
    return folder / f"{name}{RECORD_SUFFIX}"


@dataclass(frozen=True, slots=True)
class Record:
    """What the record says: when the plan was applied, and what that did."""

    applied_at: str
    actions: str


def applied_record(folder: Path, saved: SavedPlan, key: PlanKey) -> Record | None:
    """The record that this plan (its signature checked with `key` already) was applied; None
    when there is none. A record there that is not this key's record of this plan is refused."""
    owner = Path(saved.name).stem
    path = record_path(folder, owner)
    if not path.exists() and not path.is_symlink():
        return None
    hint = (
        f"if the plan was applied, `reconciler plan --account {owner}` shows the account now; "
        f"else remove {path} and apply again (a plan already applied is refused as stale)"
    )
    try:
        if path.is_symlink():
            raise ValueError("not a record")
        document = json.loads(read_regular(path, _MAX_BYTES).decode("utf-8"))
    except NotRegular as error:  # a FIFO would be read forever: refused at once, unread
        raise BadRecord(
            f"{path} is not a record of an apply ({error.strerror}): nothing was sent to "
            f"account {owner}",
            hint=hint,
        ) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        raise BadRecord(
            f"{path} is not a record of an apply: nothing was sent to account {owner}", hint=hint
        ) from None
    if not _verifies(document, key):
        raise BadRecord(
            f"{path} was not written by an apply with this plan key (it was edited, or made "
            f"with another key): nothing was sent to account {owner}",
            hint=hint,
        )
    if document["account"] != owner or document["plan"] != saved.document["mac"]:
        raise BadRecord(
            f"{path} records the apply of another plan than {saved.name}: nothing was sent "
            f"to account {owner}",
            hint=hint,
        )
    return Record(document["applied_at"], document["actions"])


def write_record(folder: Path, saved: SavedPlan, key: PlanKey, actions: str) -> None:
    """Record that `saved` was applied completely (atomically, owner-readable only)."""
    owner = Path(saved.name).stem
    document: dict[str, Any] = {
        "format": _FORMAT,
        "account": owner,
        "plan": saved.document["mac"],
        "applied_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "actions": actions,
    }
    document["mac"] = _mac(document, key)
    path = record_path(folder, owner)
    try:
        write_private_json(path, document, prefix=".applied-")
    except OSError as error:
        raise ReconcilerError(
            f"the plan was applied, but its record {path} could not be written "
            f"({error.strerror}): `apply` again would refuse the plan as stale",
            hint=f"`reconciler plan --account {owner}` shows the account now",
        ) from None


def remove_records(folder: Path, names: list[str]) -> None:
    """The records of these accounts' earlier plans (a new plan replaces them)."""
    for name in names:
        record_path(folder, name).unlink(missing_ok=True)


def _mac(document: dict[str, Any], key: PlanKey) -> str:
    unsigned = {name: value for name, value in document.items() if name != "mac"}
    return PREFIX + hmac.new(key.derive(_LABEL), canonical(unsigned), hashlib.sha256).hexdigest()


def _verifies(document: Any, key: PlanKey) -> bool:
    fields = {"format", "account", "plan", "applied_at", "actions", "mac"}
    if not isinstance(document, dict) or set(document) != fields:
        return False
    if document["format"] != _FORMAT or not all(isinstance(v, str) for v in document.values()):
        return False
    return hmac.compare_digest(document["mac"], _mac(document, key))
