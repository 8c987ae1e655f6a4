"""A payrun's paylists and their keys: what a plan (or a saved plan) asks to be paid.

A payrun's paylist is found by its idempotence key, derived from the payrun's identity (its id,
or its period when it has one: `payrun_identity`) and part number: more than 1,000 payments are
paid as several paylists of at most 1,000, in file order. Pure data, below the decisions
(`reconciler.plan.payruns`), which re-exports it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from reconciler.desired.model import Payrun, PayrunPayment
from reconciler.identity import text_key
from reconciler.service.models import Payment

MAX_PAYMENTS = 1000
_KEY_LABEL = "reconciler payrun v1"


def payrun_identity(payrun_id: str, period: str | None = None) -> str:
    """What a payrun's paylist keys derive from: its id, or its period when it has one (so a
    period is paid once whatever its payrun's id). A period's identity (`period 2027-01`)
    holds a space, which no payrun id may: the two never meet."""
    return payrun_id if period is None else f"period {period}"


def paylist_key(payrun_id: str, part: int | None = None, period: str | None = None) -> str:
    """The paylist's idempotence key: 32 hexadecimal characters, the same everywhere, from
    the payrun's identity (`payrun_identity`) and part."""
    text = f"{_KEY_LABEL}\0{payrun_identity(payrun_id, period)}\0{part or 0}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class LivePaylist:
    """A paylist of the account, with its key and payments (read only when payruns exist)."""

    paylist_id: int
    idempotence_key: str
    description: str
    payments: tuple[Payment, ...] = ()


def parts(payrun: Payrun) -> list[tuple[int | None, tuple[PayrunPayment, ...]]]:
    """The payrun's paylists: one (part None), or parts 1.. of at most 1,000 payments."""
    payments = payrun.payments
    if len(payments) <= MAX_PAYMENTS:
        return [(None, payments)]
    return [
        (number + 1, payments[start : start + MAX_PAYMENTS])
        for number, start in enumerate(range(0, len(payments), MAX_PAYMENTS))
    ]


@dataclass(frozen=True, slots=True)
class Unit:
    """One paylist of a payrun: what a plan (or a saved plan) asks to be paid."""

    payrun_id: str
    part: int | None
    description: str
    payments: tuple[PayrunPayment, ...]
    #: The agreement each payment was judged to pay, when a saved plan was made (else None).
    agreements: tuple[int, ...] | None = None
    period: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return paylist_key(self.payrun_id, self.part, self.period)

    @property
    def identity(self) -> str:
        return text_key(payrun_identity(self.payrun_id, self.period))


def units_of(payruns: Sequence[Payrun]) -> list[Unit]:
    """Every paylist the payruns ask for (a split payrun's parts in order)."""
    return [
        Unit(payrun.id, part, payrun.description, payments, period=payrun.period)
        for payrun in payruns
        for part, payments in parts(payrun)
    ]
