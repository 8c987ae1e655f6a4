"""What an adoption does to money and to where secrets go: the risk items a reviewer reads first.

An adopted change of a payee's e-mail redirects every unpaid payment the files make to that
worker (`worker: ENG-001` is paid at the worker's e-mail in the files): named, payrun by payrun,
with the amounts. A webhook moved to another host takes its headers (their secrets) there:
named with both hosts. Paid payruns are never paid again, so they are not redirected.
"""

from __future__ import annotations

import urllib.parse
from decimal import Decimal

from reconciler.adopt.model import CHANGED, Adoption
from reconciler.money import grouped
from reconciler.plan.changes import WebhookUpdate
from reconciler.plan.model import Plan
from reconciler.plan.payruns import CONFLICT, PAID
from reconciler.render.base import clean
from reconciler.secrets import reveal
from reconciler.words import plural


def risks_of(adoption: Adoption, plan: Plan) -> tuple[str, ...]:
    """The risk items of `adoption` (adopted from the drift `plan`), riskiest first."""
    found: list[str] = []
    adopted = {item.address: item for item in adoption.adopted if item.kind == CHANGED}
    for drift in plan.drift:
        external_id = drift.worker.external_id
        address = f"{drift.address}.workerEmail"
        change = next((f for f in drift.fields if f.name == "workerEmail"), None)
        if address not in adopted or change is None:
            continue
        line = _redirected(plan, external_id, str(change.after), str(change.before))
        if line is not None:
            found.append(f"{address}: {line}")
    webhook = next((c for c in plan.changes if isinstance(c, WebhookUpdate)), None)
    if webhook is not None and "webhook.url" in adopted:
        before, after = host_of(reveal(webhook.webhook.url)), host_of(webhook.live.url)
        if before != after:
            found.append(
                f"webhook.url: the webhook moves from {clean(before)} to {clean(after)}: every "
                "event, and the secret headers the service sends with it, go to the new host"
            )
    return tuple(found)


def _redirected(plan: Plan, external_id: str, old: str, new: str) -> str | None:
    """'the payee's e-mail ... redirects ...' for the unpaid payments of `worker: external_id`."""
    parts: list[str] = []
    total = Decimal(0)
    for decision in plan.payruns:
        if decision.state in (PAID, CONFLICT):  # never paid again
            continue
        numbers = []
        for number, payment in enumerate(decision.payments, start=1):
            if payment.worker == external_id:
                numbers.append(f"{number} ({grouped(payment.amount)})")
                total += payment.amount
        if numbers:
            which = plural(len(numbers), "payment").split(" ", 1)[1]
            parts.append(f"payrun {clean(decision.address)}'s {which} {', '.join(numbers)}")
    if not parts:
        return None
    return (
        f"the payee's e-mail changes from {clean(old)} to {clean(new)}, which redirects "
        f"{'; '.join(parts)} ({grouped(total)} in all, unpaid) to {clean(new)}"
    )


def host_of(url: str) -> str:
    """A URL's scheme and host (and port), the rest masked: `https://hooks.example.com/…`."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    rest = "/…" if parts.path not in ("", "/") or parts.query or parts.fragment else ""
    return f"{parts.scheme}://{host}{rest}"
