"""Fingerprints of the live resources a change touches, keyed so they reveal nothing.

A saved plan records, for each change, a keyed hash of every live resource it depends on
("absent" for an invitation whose worker must still be missing); `apply PLAN` computes them
again from a fresh read and refuses the plan when any differs. They are keyed because the
webhook's includes its header values.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import defaultdict
from typing import Any

from reconciler.identity import email_key
from reconciler.plan.changes import Change, Invite, Replace, WebhookCreate, WebhookUpdate
from reconciler.plan.model import LiveState
from reconciler.service.models import Webhook, Worker

ABSENT = "absent"
LABEL = b"reconciler saved-plan fingerprint v1"


class LiveIndex:
    """The open agreements of the live state by externalId and by email, for fingerprints."""

    def __init__(self, live: LiveState) -> None:
        self.webhook = live.webhook
        self.by_id: dict[str, list[Worker]] = defaultdict(list)
        self.by_email: dict[str, list[Worker]] = defaultdict(list)
        self.by_agreement = {agreement.agreement_id: agreement for agreement in live.workers}
        for agreement in live.workers:
            if agreement.status.is_open:
                if agreement.external_id is not None:
                    self.by_id[agreement.external_id].append(agreement)
                self.by_email[email_key(agreement.email)].append(agreement)

    def touched(self, external_id: str, email: str | None) -> list[Worker]:
        """The open agreements an action on this worker depends on."""
        found = {a.agreement_id: a for a in self.by_id.get(external_id, ())}
        if email is not None:
            found.update((a.agreement_id, a) for a in self.by_email.get(email_key(email), ()))
        return [found[key] for key in sorted(found)]


def digest(key: bytes, value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return "hmac-sha256:" + hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()


def worker_fingerprint(agreements: list[Worker], key: bytes) -> str:
    if not agreements:
        return ABSENT
    return digest(
        key,
        [
            [
                a.agreement_id,
                str(a.status),
                a.external_id,
                a.email,
                a.first_name,
                a.last_name,
                a.legal_name,
                a.job_title,
                a.country,
            ]
            for a in agreements
        ],
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
    return worker_fingerprint(index.touched(change.external_id, email), key)
