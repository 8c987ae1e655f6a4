"""`export --with-pay`: each worker's `pay` from what the account paid it, for review.

Every paylist of the account with its payments (read as the register reads them: `read_pay`);
by payee (`reconciler.payee`), the amount of the newest SUCCESS payment made to it, with when
it settled (`newest_pay`, pure). The file says each is to be
reviewed: a payment is what was paid once (a bonus, a part month), not necessarily the rate.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from reconciler.money import two_places
from reconciler.payee import payee_key
from reconciler.plan.paylist_reads import MoneyReading
from reconciler.plan.payruns import LivePaylist
from reconciler.service.client import ServiceClient

#: The comment beside an exported `pay`: a person confirms it before a period pays it.
PAY_NOTE = "TODO(export): review: the newest SUCCESS payment to this payee"


@dataclass(frozen=True, slots=True)
class PaidBefore:
    """The newest SUCCESS payment to one payee: its amount, when, and its paylist."""

    amount: Decimal
    when: datetime | None
    paylist_id: int

    def line(self) -> str:
        """The worker's `pay:` line, marked for review."""
        day = "" if self.when is None else f" ({self.when.date().isoformat()}"
        where = f"{day}, paylist {self.paylist_id})" if day else f" (paylist {self.paylist_id})"
        return f'    pay: "{two_places(self.amount)}"  # {PAY_NOTE}{where}'


def read_pay(client: ServiceClient) -> dict[str, PaidBefore]:
    """Every paylist of the account with its payments (GETs), then `newest_pay`."""
    reading = MoneyReading(
        client, payruns=True, window=None, parallelism=client.config.parallelism, wallet=False
    )
    return newest_pay(reading.result().paylists)


def newest_pay(paylists: Iterable[LivePaylist]) -> dict[str, PaidBefore]:
    """By payee key, the newest SUCCESS payment to it (by settling time, then payment id)."""
    found: dict[str, tuple[tuple[datetime | None, int], PaidBefore]] = {}
    for paylist in paylists:
        for payment in paylist.payments:
            if str(payment.status) != "SUCCESS":
                continue
            when = payment.updated_at or payment.created_at
            rank = (when, payment.id)
            key = payee_key(payment.worker_email)
            held = found.get(key)
            if held is None or _later(rank, held[0]):
                found[key] = (rank, PaidBefore(payment.amount, when, paylist.paylist_id))
    return {key: paid for key, (_, paid) in found.items()}


def _later(rank: tuple[datetime | None, int], other: tuple[datetime | None, int]) -> bool:
    if rank[0] is not None and other[0] is not None and rank[0] != other[0]:
        return rank[0] > other[0]
    if (rank[0] is None) != (other[0] is None):
        return rank[0] is not None
    return rank[1] > other[1]
