"""Fingerprints of the live resources a change touches, keyed so they reveal nothing.

A saved plan records, for each change, a keyed hash of every live resource it depends on
("absent" for an invitation whose worker must still be missing); `apply PLAN` computes them
again from a fresh read and refuses the plan when any differs. They are keyed because the
webhook's includes its header values.

An invitation's covers every agreement of its externalId and email in any status, closed ones
included: the agreement it made stays in the account once an admin inactivates it, so a replay
of the plan is stale instead of inviting the worker a second time (it would be "absent" again
if only open agreements counted).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
from collections import defaultdict
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from reconciler import worker_fields
from reconciler.identity import email_key
from reconciler.plan.changes import Change, Invite, Replace, WebhookCreate, WebhookUpdate
from reconciler.plan.model import LiveState
from reconciler.service.models import Webhook, Worker
from reconciler.worker_fields import EMAIL, EXTERNAL_ID, Compare, WorkerFields

ABSENT = "absent"
LABEL = b"reconciler saved-plan fingerprint v1"


class LiveIndex:
    """The agreements of the live state by externalId and by email, for fingerprints."""

    def __init__(self, live: LiveState) -> None:
        self.webhook = live.webhook
        self.by_id: dict[str, list[Worker]] = defaultdict(list)
        self.by_email: dict[str, list[Worker]] = defaultdict(list)
        self.by_agreement = {agreement.agreement_id: agreement for agreement in live.workers}
        for agreement in live.workers:
            if agreement.external_id is not None:
                self.by_id[agreement.external_id].append(agreement)
            self.by_email[email_key(agreement.email)].append(agreement)

    def touched(self, external_id: str, email: str | None, *, closed: bool = False) -> list[Worker]:
        """The agreements an action on this worker depends on: the open ones, and with
        `closed` the closed ones too."""
        found = {a.agreement_id: a for a in self.by_id.get(external_id, ())}
        if email is not None:
            found.update((a.agreement_id, a) for a in self.by_email.get(email_key(email), ()))
        return [found[key] for key in sorted(found) if closed or found[key].status.is_open]


def digest(key: bytes, value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return "hmac-sha256:" + hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()


def worker_fingerprint(agreements: list[Worker], key: bytes) -> str:
    if not agreements:
        return ABSENT
    shown = _shown(worker_fields.WORKER_FIELDS)
    return digest(
        key,
        [
            [a.agreement_id, str(a.status), a.external_id, a.email, *[get(a) for get in shown]]
            for a in agreements
        ],
    )


@functools.cache
def _shown(table: WorkerFields) -> tuple[Callable[[Worker], Any], ...]:
    """What reads each field the service shows beside the identity and the email, in the order
    it lists them (the country as it answered it)."""
    found = sorted(
        (item for item in table if item.live and item.key not in (EXTERNAL_ID, EMAIL)),
        key=lambda item: item.live_rank,
    )
    return tuple(
        attrgetter("country") if item.compare is Compare.COUNTRY else item.live_getter()
        for item in found
    )


def webhook_fingerprint(webhook: Webhook | None, key: bytes) -> str:
    if webhook is None:
        return ABSENT
    headers = sorted((h.name.lower(), h.name, h.value.reveal()) for h in webhook.headers)
    return digest(key, [webhook.url, webhook.enabled, sorted(webhook.event_types), headers])


def fingerprint(change: Change, index: LiveIndex, key: bytes) -> str:
    if isinstance(change, WebhookCreate | WebhookUpdate):
        return webhook_fingerprint(index.webhook, key)
    email = change.worker.worker_email if isinstance(change, Invite | Replace) else None
    touched = index.touched(change.external_id, email, closed=isinstance(change, Invite))
    return worker_fingerprint(touched, key)
