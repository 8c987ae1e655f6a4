"""Typed values read from and sent to the service.

Field names are Python's; the mapping to the API's camelCase and snake_case lives in the client.
Statuses are enums that keep values they do not know instead of failing, because a real service
may add one at any time.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from reconciler.quick import quick_init
from reconciler.secrets import Secret


class OpenEnum(enum.StrEnum):
    """A string enum that accepts unknown values as pseudo-members instead of raising."""

    @classmethod
    def _missing_(cls, value: object) -> OpenEnum | None:
        if not isinstance(value, str):
            return None
        member = str.__new__(cls, value)
        member._name_ = value
        member._value_ = value
        return member

    @property
    def known(self) -> bool:
        return self._name_ in type(self).__members__


class WorkerStatus(OpenEnum):
    ACTIVE = "ACTIVE"
    INVITATION_SENT = "INVITATION_SENT"
    VERIFICATION_PENDING = "VERIFICATION_PENDING"
    ENDED = "ENDED"
    INACTIVATED = "INACTIVATED"

    @property
    def is_open(self) -> bool:
        """An open agreement: the worker counts as present."""
        return self in _OPEN_STATUSES


_OPEN_STATUSES = frozenset(
    {WorkerStatus.ACTIVE, WorkerStatus.INVITATION_SENT, WorkerStatus.VERIFICATION_PENDING}
)

#: The statusId filter of the worker list (interface §2.1); INACTIVATED (5) cannot be filtered.
STATUS_IDS = {
    WorkerStatus.ACTIVE: 0,
    WorkerStatus.INVITATION_SENT: 1,
    WorkerStatus.VERIFICATION_PENDING: 2,
    WorkerStatus.ENDED: 3,
}


@quick_init
@dataclass(frozen=True, slots=True)
class Worker:
    """One agreement as the worker list shows it (interface §2.1)."""

    agreement_id: int
    email: str
    status: WorkerStatus
    created_at: datetime
    first_name: str | None = None
    last_name: str | None = None
    legal_name: str | None = None
    job_title: str | None = None
    country: str | None = None  # the name the service answered
    country_iso: str | None = None  # mapped back; None when null or not mappable
    external_id: str | None = None
    #: The shown fields `reconciler.worker_fields` gives no attribute: (file's key, text).
    more: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Invitation:
    """One invitation item (interface §2.2), as sent to the bulk invitation."""

    worker_name: str
    worker_surname: str
    type_of_worker: str
    worker_email: str
    country_iso: str
    worker_legal_name: str | None = None
    job_title: str | None = None
    worker_email_text: str | None = None
    external_id: str | None = None
    #: The fields `reconciler.worker_fields` gives no attribute: (key, text).
    more: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class InvitationResult:
    agreement_id: int
    worker_email: str
    external_id: str | None
    status: WorkerStatus


@dataclass(frozen=True, slots=True)
class InactivationResult:
    agreement_id: int
    status: WorkerStatus
    status_id: int
    changed: bool


@dataclass(frozen=True, slots=True)
class WebhookHeader:
    name: str
    value: Secret


@dataclass(frozen=True, slots=True)
class Webhook:
    """The client's single webhook configuration (interface §2.7)."""

    url: str
    enabled: bool
    headers: tuple[WebhookHeader, ...]
    event_types: tuple[str, ...]
    client_id: int | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class PaymentStatus(OpenEnum):
    """A payment's state: PENDING until its paylist is processed, then SUCCESS or FAILED."""

    PENDING = "PENDING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"


class JournalOperation(OpenEnum):
    WITHDRAWAL = "WITHDRAWAL"
    DEPOSIT = "DEPOSIT"


class JournalReason(OpenEnum):
    PAYMENT = "PAYMENT"
    TOP_UP = "TOP_UP"


@dataclass(frozen=True, slots=True)
class PaymentItem:
    """One payment of a paylist being created (interface §2.3)."""

    description: str
    amount: Decimal
    worker_email: str


@dataclass(frozen=True, slots=True)
class Paylist:
    """A created paylist: a container of payments, with no status of its own (interface §2.3)."""

    id: int
    description: str
    idempotence_key: str
    client_id: int | None = None
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Payment:
    """One payment (interface §2.4)."""

    id: int
    description: str
    amount: Decimal
    worker_email: str
    paylist_id: int
    status: PaymentStatus
    idempotence_key: str | None = None
    cause: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Wallet:
    """The client's wallet and its balance (interface §2.5)."""

    id: int
    client_id: int
    enabled: bool
    balance: Decimal
    over_draft_limit: Decimal
    version: int | None = None
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One ledger entry of the wallet (interface §2.6); `amount` is negative for a withdrawal."""

    journal_id: int
    amount: Decimal
    operation: JournalOperation
    reason: JournalReason
    wallet_id: int | None = None
    client_id: int | None = None
    idempotence_key: str | None = None
    payment_order_id: str | None = None
    payment_purpose: str | None = None
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class PaylistSummary:
    """One row of the paylists listing: `flow_stage` is PROCESSING while a payment is pending."""

    paylist_id: int
    flow_stage: str
    description: str
    total: Decimal


#: The event types a webhook may subscribe (service-contract.md, "Webhook").
EVENT_TYPES = ("KYC", "CLIENT_WALLET_TOP_UP", "PAYMENT")


@dataclass(frozen=True, slots=True)
class WebhookTestResult:
    """What the service's test event got from the configured URL."""

    event_type: str
    delivered: bool
    status_code: int | None = None
    error: str | None = None
