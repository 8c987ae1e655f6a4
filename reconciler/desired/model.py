"""The typed, immutable model of the desired state that the plan consumes.

Field values keep the API's own spelling (`Worker`, `GB`, a field's own name in
`ignore_changes`), so what a person writes is what is compared and what is sent; which fields a
worker has is `reconciler.worker_fields`' table.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from reconciler import worker_fields
from reconciler.desired.approvals import ApprovalPolicy
from reconciler.desired.history import KnownPaylist
from reconciler.desired.ignore import IgnoreRule
from reconciler.identity import text_key
from reconciler.money import CENT, two_places
from reconciler.quick import quick_function, quick_init
from reconciler.secrets import Secret

#: The fields of an invitation item a file may name in `ignoreChanges` (those a plan compares).
COMPARABLE_FIELDS = tuple(item.key for item in worker_fields.WORKER_FIELDS.compared)


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
    pay: Decimal | None = None  #: what a period payrun pays (`from_fields` reads the text)
    #: The day the contract ended (never invited again; an open agreement is inactivated).
    ended: date | None = None
    #: Hired again from that day: invited once, until an agreement made since exists.
    rehire: date | None = None
    ignore_changes: frozenset[str] = frozenset()
    #: The fields the table (`reconciler.worker_fields`) gives no attribute: (key, text).
    more: tuple[tuple[str, str], ...] = ()
    location: Location | None = field(default=None, compare=False)

    @classmethod
    def from_fields(cls, item: Mapping[str, Any], *, ascii_text: bool = False) -> DesiredWorker:
        """A worker from its (already validated) fields, spelled as in the file.

        Text is kept in NFC (`reconciler.identity`); `ascii_text` says every text is ASCII
        already (a file of ASCII without escapes), which NFC leaves as it is.
        """
        worker: DesiredWorker = _reading(worker_fields.WORKER_FIELDS)(cls, item, item.get)
        return worker if ascii_text else worker._in_nfc()

    def _in_nfc(self) -> DesiredWorker:
        changed: dict[str, Any] = {
            attribute: text_key(value)
            for attribute in _TEXT_ATTRIBUTES
            if isinstance(value := getattr(self, attribute), str) and not value.isascii()
        }
        if any(not value.isascii() for _, value in self.more):
            changed["more"] = tuple((key, text_key(value)) for key, value in self.more)
        return replace(self, **changed) if changed else self

    def as_fields(self) -> dict[str, str]:
        """The fields that are set, spelled as in the file (`ignoreChanges` aside); an amount
        as its two-place text, a day as the file writes it."""
        values = ((key, get(self)) for key, get in getters(worker_fields.WORKER_FIELDS))
        return {name: _as_written(value) for name, value in values if value is not None}


def _as_written(value: object) -> str:
    """A field's value as the file writes it: an amount's two places, a day's ISO form."""
    if isinstance(value, Decimal):
        return two_places(value)
    return value.isoformat() if isinstance(value, date) else str(value)


def _day(value: object) -> date | None:
    """A worker's day (`ended`, `rehire`) as the file holds it, validated: text or a date."""
    if value is None or isinstance(value, date):
        return value
    return date.fromisoformat(str(value))


def _amount(value: object) -> Decimal | None:
    """A worker's amount (`pay`) as the file holds it, validated: a plain decimal's text (or
    a number YAML read) with two places (`desired.payruns.amount_problem`)."""
    return None if value is None else Decimal(str(value)).quantize(CENT)


#: What the reader calls on a field's value, by its kind (`WorkerField.value`).
_CONVERT = {worker_fields.Value.AMOUNT: "_amount", worker_fields.Value.DAY: "_day"}


_ATTRIBUTES = [item.name for item in dataclasses.fields(DesiredWorker)]
#: The attributes before `ignore_changes`: the table's fields that have one.
_TEXT_ATTRIBUTES = tuple(_ATTRIBUTES[: _ATTRIBUTES.index("ignore_changes")])


@functools.cache
def _reading(table: worker_fields.WorkerFields) -> Callable[..., DesiredWorker]:
    """What builds a worker from a file's: the table's fields in the model's order of
    attributes, positional (100,000 of them are built at a time), each converted as its row
    says (`WorkerField.value`: an amount, a day), then `ignoreChanges` and those it holds in
    `more`; compiled once per table. A table naming an attribute the model
    lacks (or lacking one it has) is refused."""
    by_attribute = {item.attribute: item for item in table if item.attribute is not None}
    if set(by_attribute) != set(_TEXT_ATTRIBUTES):
        raise TypeError(
            f"the worker fields' attributes {sorted(by_attribute)} are not DesiredWorker's "
            f"{sorted(_TEXT_ATTRIBUTES)}"
        )
    values = []
    for item in map(by_attribute.__getitem__, _TEXT_ATTRIBUTES):
        value = f"item[{item.key!r}]" if item.required else f"get({item.key!r})"
        convert = _CONVERT.get(item.value)
        values.append(value if convert is None else f"{convert}({value})")
    values.append('_NOTHING_IGNORED if (i := get("ignoreChanges")) is None else frozenset(i)')
    more = tuple(item.key for item in table if item.attribute is None)
    values.append(f"_more(get, {more!r})" if more else "()")
    names = {"_NOTHING_IGNORED": _NOTHING_IGNORED, "_more": _more, "_amount": _amount, "_day": _day}
    build: Callable[..., DesiredWorker]
    build = quick_function("build", "cls, item, get", f"cls({', '.join(values)})", names)
    return build


@functools.cache
def getters(table: worker_fields.WorkerFields) -> tuple[tuple[str, Any], ...]:
    """Each field's key and what reads it from a `DesiredWorker`, in the table's order."""
    return tuple((item.key, item.getter()) for item in table)


def _more(get: Any, keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((key, value) for key in keys if (value := get(key)) is not None)


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
    #: `period: YYYY-MM`: every managed worker with `pay` whose agreement is ACTIVE is paid
    #: too (`reconciler.plan.periods` adds those payments once the account is read).
    period: str | None = None

    @property
    def total(self) -> Decimal:
        return sum((payment.amount for payment in self.payments), Decimal("0.00"))


@dataclass(frozen=True, slots=True)
class ListedBefore:
    """What the git history of the files says they ever listed: `ids`, or None when it
    cannot tell (`why`: not a git repository, a shallow clone)."""

    ids: frozenset[str] | None
    why: str = ""
    #: The `history.paylists` ids the files held at the merge base of HEAD and the default
    #: branch (a pull request's base); None when it is unknown (no remote names the default
    #: branch, or no git): a plan then names every known paylist of the window as a risk.
    known_at_base: frozenset[int] | None = None


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
    #: policy.approvals: who must approve a payrun before it is paid (None: no policy).
    approvals: ApprovalPolicy | None = None


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
    #: How the files change their base's ignore rules (`session.base_rules`, read at the edge
    #: like `listed`): a line per rule added or changed, for the review.
    ignore_changes: tuple[str, ...] = ()

    def owns(self, external_id: str | None) -> bool:
        """Whether a live worker with this externalId is under this file's management."""
        if external_id is None:
            return False
        return self.scope_prefix is None or external_id.startswith(self.scope_prefix)
