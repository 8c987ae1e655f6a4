"""An account's part of the combined comment from its saved plan alone (`comment DIR`).

The job that joins a matrix's plans into one comment holds no account's secrets, so it cannot
read the accounts again: it shows what each signed plan recorded (its changes, its payruns,
the drift and unmanaged workers it counted, its warnings), in the same risk-ranked sections as
a plan's comment. `apply DIR` checks everything again (signature, account, staleness) before a
write. The counts a commit status or an outcome says of a saved plan are read from it alone too
(`saved_counts`), as is an apply job's outcome (`read_document`: JSON a job wrote).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from reconciler.accounts.combined import Part
from reconciler.errors import ReconcilerError
from reconciler.money import grouped
from reconciler.plan.saved import SavedPlan
from reconciler.regular import read_regular
from reconciler.render.base import clean, show_paid
from reconciler.render.sections import (
    CLOSED,
    DRIFT,
    INVITATIONS,
    LIST_CAP,
    PAYRUNS,
    REMOVALS,
    WARNINGS,
    WEBHOOK,
    Item,
    Section,
)
from reconciler.render.text import Line
from reconciler.words import counted, plural

_COUNTED = {
    "invite": "invite",
    "inactivate": "inactivate",
    "replace": "replace",
    "webhook_create": "create",
    "webhook_update": "update",
}


def saved_part(name: str, saved: SavedPlan) -> Part:
    """The counts and sections of the account's comment, as its saved plan recorded them."""
    counts = dict.fromkeys(("invite", "inactivate", "replace", "create", "update"), 0)
    for record in saved.records:
        counts[_COUNTED[record["action"]]] += 1
    reported = saved.reported
    counts |= {
        "drifted": reported["drifted"],
        "unmanaged": reported["unmanaged"],
        "conflicts": reported["conflicts"],
    }
    total = sum(
        (Decimal(p["amount"]) for record in saved.payruns for p in record["payments"]), Decimal(0)
    )
    found = [section for section in _sections(saved) if section.items]
    return Part(
        name,
        counts=counts,
        to_pay=len(saved.payruns),
        total=total,
        inactivated=counts["inactivate"] + counts["replace"],
        sections=tuple(found),
        changes=bool(saved.records or reported["drift"] or reported.get("closed")),
    )


def _sections(saved: SavedPlan) -> Iterator[Section]:
    records = saved.records
    closed = tuple(
        (Line(f"  ! {clean(c['address'])}: {clean(c['reason'])}", "!"),)
        for c in saved.reported.get("closed", ())
    )
    title = f"Closed in the service, not invited again ({counted(len(closed))})"
    yield Section(title, CLOSED, closed, "worker closed in the service", False)
    removals = tuple(_removal(r) for r in records if r["action"] in ("inactivate", "replace"))
    title = f"Inactivations and replacements ({counted(len(removals))})"
    yield Section(title, REMOVALS, removals, "inactivation or replacement", False)
    hooks = tuple(_webhook(r) for r in records if r["action"].startswith("webhook"))
    yield Section("Webhook", WEBHOOK, hooks, "webhook change", False)
    payruns = tuple(_payrun(record) for record in saved.payruns)
    yield Section(f"Payruns to pay ({counted(len(payruns))})", PAYRUNS, payruns, "payrun", False)
    # Risk first, as the plan said them: made in the service, the files' history unknown, ...
    warnings = tuple((Line(clean(w)),) for w in saved.reported.get("warnings", ()))
    yield Section(f"Warnings ({counted(len(warnings))})", WARNINGS, warnings, "warning")
    invites = tuple(_invite(r) for r in records if r["action"] == "invite")
    yield Section(f"Invitations ({counted(len(invites))})", INVITATIONS, invites, "invitation")
    drift = tuple(_drift(entry) for entry in saved.reported["drift"])
    yield Section(f"Drift ({counted(len(drift))})", DRIFT, drift, "drifted worker")


def _removal(record: dict[str, Any]) -> Item:
    address = clean(record["address"])
    if record["action"] == "inactivate":
        return (Line(f"  - {address} will be inactivated (agreement {record['agreementId']})"),)
    lines = [Line(f"-/+ {address} will be replaced (agreement {record['agreementId']})")]
    return (*lines, *_fields(record["worker"]))


def _invite(record: dict[str, Any]) -> Item:
    return (Line(f"  + {clean(record['address'])} will be invited"), *_fields(record["worker"]))


def _fields(worker: dict[str, Any]) -> list[Line]:
    shown = [(key, value) for key, value in worker.items() if value is not None]
    width = max((len(key) for key, _ in shown), default=0)
    return [Line(f"      {key:<{width}} = {_quoted(value)}") for key, value in shown]


def _quoted(value: object) -> str:
    return "null" if value is None else json.dumps(clean(str(value)), ensure_ascii=False)


def _webhook(record: dict[str, Any]) -> Item:
    verb = "created" if record["action"] == "webhook_create" else "updated"
    hook = record["webhook"]
    url = hook["url"].get("template") or _scheme_and_host(hook["url"].get("value") or "")
    lines = [Line(f"  ~ webhook will be {verb}"), Line(f"      url     = {_quoted(url)}")]
    lines.append(Line(f"      enabled = {str(hook['enabled']).lower()}"))
    events = ", ".join(clean(str(event)) for event in hook["event_types"])
    lines.append(Line(f"      events  = [{events}]"))
    for header in hook["headers"]:
        lines.append(Line(f"      header  {clean(header['name'])} = (sensitive value)"))
    return tuple(lines)


def _payrun(record: dict[str, Any]) -> Item:
    payments = record["payments"]
    total = sum((Decimal(p["amount"]) for p in payments), Decimal(0))
    head = (
        f"  + {clean(record['address'])} will be paid: {plural(len(payments), 'payment')}, "
        f"total {grouped(total)}"
    )
    lines = [Line(head)]
    ranked = sorted(payments, key=lambda p: Decimal(p["amount"]), reverse=True)
    for payment in ranked[:LIST_CAP]:
        lines.append(
            Line(f"      {show_paid(payment['email'])}  {grouped(Decimal(payment['amount']))}")
        )
    if len(payments) > LIST_CAP:
        lines.append(Line(f"      and {plural(len(payments) - LIST_CAP, 'smaller payment')}"))
    return tuple(lines)


def _drift(entry: dict[str, Any]) -> Item:
    lines = [Line(f"  ~ {clean(entry['address'])} (agreement {entry['agreementId']})")]
    for item in entry["fields"]:
        before, after = item["before"], item["after"]
        change = f"{_quoted(before)} -> {_quoted(after)}"
        lines.append(Line(f"      {clean(item['name'])}: {change}"))
    return tuple(lines)


def _scheme_and_host(url: str) -> str:
    """A live URL's path and query may be a credential: the comment shows the rest."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}/..." if parts.netloc else "..."


# --- the counts of a saved plan, and what a job wrote --------------------------------------

#: The most a saved plan or an apply job's outcome the flow reads may hold, in bytes.
DOCUMENT_LIMIT = 256 * 1024 * 1024


def plan_counts(folder: Path) -> str:
    """'eu: 1 to invite, 1 payrun; us: no changes' from the saved plans `<name>.json`."""
    said = [f"{plan.stem}: {saved_counts(plan)}" for plan in sorted(folder.glob("*.json"))]
    return "; ".join(said) or "no account planned"


def saved_counts(plan: Path) -> str:
    """'1 to invite, 1 payrun' from the saved plan file `plan`."""
    return counts(read_document(plan))


def read_document(path: Path) -> Any:
    """The JSON a job wrote at `path` (a saved plan, an apply's outcome), read only from a
    regular file: a FIFO, a socket or a device there is refused at once, never waited on."""
    try:
        text = read_regular(path, DOCUMENT_LIMIT).decode("utf-8")
    except OSError as error:
        raise ReconcilerError(f"{path}: cannot be read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ReconcilerError(f"{path}: not UTF-8 ({error.reason})") from None
    try:
        return json.loads(text)
    except ValueError as error:
        raise ReconcilerError(f"{path}: not JSON ({error})") from None


def counts(document: dict[str, object]) -> str:
    """'1 to invite, 1 payrun' from a saved plan's changes and payruns."""
    actions: dict[str, int] = {}
    changes = document.get("changes")
    for change in changes if isinstance(changes, list) else []:
        action = str(change.get("action", "change")).replace("_", " ")
        actions[action] = actions.get(action, 0) + 1
    said = [f"{counted(count)} to {action}" for action, count in actions.items()]
    payruns = document.get("payruns")
    if isinstance(payruns, list) and payruns:
        said.append(plural(len(payruns), "payrun"))
    return ", ".join(said) or "no changes"
