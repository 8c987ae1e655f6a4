"""The typed, immutable model of the desired state that the plan consumes.

Field values keep the API's own spelling (`Worker`, `GB`, `jobTitle` in `ignore_changes`),
so what a person writes is what is compared and what is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from decimal import Decimal
from typing import Any

from reconciler.desired.history import KnownPaylist
from reconciler.desired.ignore import IgnoreRule
from reconciler.identity import text_key
from reconciler.quick import quick_init
from reconciler.secrets import Secret

#: The fields of an invitation item a file may name in `ignoreChanges`.
COMPARABLE_FIELDS = (
    "workerName",
    "workerSurname",
    "workerLegalName",
    "workerEmail",
    "jobTitle",
    "countryIso",
)

#: A worker's fields as the file and the API spell them, and the model's attribute for each.
WORKER_FIELDS = (
    ("externalId", "external_id"),
    ("typeOfWorker", "type_of_worker"),
    ("workerName", "worker_name"),
    ("workerSurname", "worker_surname"),
    ("workerLegalName", "worker_legal_name"),
    ("workerEmail", "worker_email"),
    ("countryIso", "country_iso"),
    ("jobTitle", "job_title"),
    ("workerEmailText", "worker_email_text"),
)


@dataclass(frozen=True, slots=True, order=True)
class Location:
    """Where something was written: 1-based line and column."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@quick_init
@dataclass(frozen=True, slots=True)
class DesiredWorker:
    """One worker as the file wants it (an invitation item, §2.2 of the interface)."""

    external_id: str
    type_of_worker: str  # "Worker" or "Business"
    worker_name: str
    worker_surname: str
    worker_email: str
    country_iso: str  # ISO 3166-1 alpha-2, upper case
    worker_legal_name: str | None = None
    job_title: str | None = None
    worker_email_text: str | None = None
    ignore_changes: frozenset[str] = frozenset()
    location: Location | None = field(default=None, compare=False)

    @classmethod
    def from_fields(cls, item: Mapping[str, Any], *, ascii_text: bool = False) -> DesiredWorker:
        """A worker from its (already validated) fields, spelled as in the file.

        Text is kept in NFC (`reconciler.identity`); `ascii_text` says every text is ASCII
        already (a file of ASCII without escapes), which NFC leaves as it is.
        """
        get = item.get
        ignored = get("ignoreChanges")
        worker = cls(  # positional, in the fields' order: 100,000 of them are built at a time
            item["externalId"],
            item["typeOfWorker"],
            item["workerName"],
            item["workerSurname"],
            item["workerEmail"],
            item["countryIso"],
            get("workerLegalName"),
            get("jobTitle"),
            get("workerEmailText"),
            _NOTHING_IGNORED if ignored is None else frozenset(ignored),
        )
        return worker if ascii_text else worker._in_nfc()

    def _in_nfc(self) -> DesiredWorker:
        changed: dict[str, Any] = {
            attribute: text_key(value)
            for _, attribute in WORKER_FIELDS
            if isinstance(value := getattr(self, attribute), str) and not value.isascii()
        }
        return replace(self, **changed) if changed else self

    def as_fields(self) -> dict[str, str]:
        """The fields that are set, spelled as in the file (`ignoreChanges` aside)."""
        values = {name: getattr(self, attribute) for name, attribute in WORKER_FIELDS}
        return {name: value for name, value in values.items() if value is not None}


_NOTHING_IGNORED: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class WebhookHeader:
    name: str
    value: Secret


@dataclass(frozen=True, slots=True)
class DesiredWebhook:
    url: str | Secret  # a Secret when built around `${VAR}`: shown with that part masked
    headers: tuple[WebhookHeader, ...]
    event_types: frozenset[str]
    enabled: bool = True
    location: Location | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class InactivationLimit:
    """`policy.maxInactivations`: a count (`10`) or a share of owned open agreements (`"25%"`)."""

    value: Decimal
    is_share: bool

    def allowed(self, owned_open: int) -> Decimal:
        """How many inactivations this limit allows when `owned_open` agreements are owned."""
        return self.value * owned_open / 100 if self.is_share else self.value

    def __str__(self) -> str:
        return f"{self.value}%" if self.is_share else str(self.value)


DEFAULT_INACTIVATION_LIMIT = InactivationLimit(Decimal(25), is_share=True)


@dataclass(frozen=True, slots=True)
class PayrunPayment:
    """One payment: its payee's email (from `email`, or the `worker`'s), amount, description."""

    email: str
    amount: Decimal
    description: str
    worker: str | None = None  # the externalId it was written with, if any


@dataclass(frozen=True, slots=True)
class Payrun:
    id: str
    description: str
    payments: tuple[PayrunPayment, ...]

    @property
    def total(self) -> Decimal:
        return sum((payment.amount for payment in self.payments), Decimal("0.00"))


@dataclass(frozen=True, slots=True)
class ListedBefore:
    """What the git history of the files says they ever listed: `ids`, or None when it
    cannot tell (`why`: not a git repository, a shallow clone)."""

    ids: frozenset[str] | None
    why: str = ""


@dataclass(frozen=True, slots=True)
class Policy:
    prune: bool = True
    #: `prune: all`: every owned open agreement no file lists is inactivated, made in the
    #: service or not (an account onboarded by hand); plain `true` spares those made there.
    prune_all: bool = False
    max_inactivations: InactivationLimit = DEFAULT_INACTIVATION_LIMIT
    max_payout: Decimal | None = None  # policy.maxPayout: payruns paying more need --force
    money_window: timedelta | None = None  # policy.moneyWindow; None: not given (default 35d)
    money_stuck_after: timedelta | None = None  # policy.moneyStuckAfter; None: default 24h


@dataclass(frozen=True, slots=True)
class DesiredState:
    """Everything the file(s) say, merged: the input of the plan."""

    workers: tuple[DesiredWorker, ...]
    webhook: DesiredWebhook | None = None
    scope_prefix: str | None = None  # None: every non-null externalId is owned
    policy: Policy = Policy()
    version: int = 1
    sources: tuple[str, ...] = ()
    payruns: tuple[Payrun, ...] = ()
    #: (file, SHA-256 of the bytes the load read and parsed), the review a saved plan records.
    digests: tuple[tuple[str, str], ...] = ()
    ignore: tuple[IgnoreRule, ...] = ()  # `ignore:` entries of every file
    history: tuple[KnownPaylist, ...] = ()  # `history.paylists`: the account's known past
    #: The externalIds the files ever listed (their git history, read at the edge:
    #: `reconciler.session.files_history`); None: not read (a plan made in code).
    listed: ListedBefore | None = None

    def owns(self, external_id: str | None) -> bool:
        """Whether a live worker with this externalId is under this file's management."""
        if external_id is None:
            return False
        return self.scope_prefix is None or external_id.startswith(self.scope_prefix)
