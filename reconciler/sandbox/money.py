"""Money: integer cents in the database, Decimal with two places in JSON, never a float."""

from __future__ import annotations

from decimal import Decimal

#: The largest amount one payment or top-up may carry; keeps every balance far inside SQLite's
#: 64-bit integers, even after many top-ups.
MAX_AMOUNT = Decimal("1000000000000.00")
#: A balance never grows past this (top-ups above it are refused).
MAX_BALANCE_CENTS = 10**17


def to_cents(amount: Decimal) -> int:
    """Exact cents of an amount that has at most two decimals."""
    cents = amount * 100
    if cents != cents.to_integral_value():
        raise ValueError(f"{amount} has more than two decimal places")
    return int(cents)


def from_cents(cents: int) -> Decimal:
    """`1050` -> `Decimal('10.50')`: always two places, as the service writes amounts."""
    return Decimal(cents).scaleb(-2)
