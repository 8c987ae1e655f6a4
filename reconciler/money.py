"""Money as it leaves the program: one shape everywhere.

JSON, CSV and saved plans carry an amount as a decimal string with two places (`"1500.00"`);
text and Markdown for people write the same digits grouped by thousands (`1,500.00`). An
amount with more places than two (a service that sent `12.345`) keeps every digit it has:
money is never rounded on its way out.
"""

from __future__ import annotations

from decimal import Context, Decimal, InvalidOperation

CENT = Decimal("0.01")


def two_places(amount: Decimal) -> str:
    """The amount as a plain decimal string with (at least) two places: `1500.00`, `-12.50`."""
    return f"{_exact(amount):f}"


def grouped(amount: Decimal) -> str:
    """The amount for people: the digits of `two_places` grouped by thousands (`1,500.00`)."""
    return f"{_exact(amount):,f}"


def _exact(amount: Decimal) -> Decimal:
    if not amount.is_finite():
        raise ValueError(f"{amount} is not an amount of money")
    try:  # a context wide enough for every digit of the amount and its cents
        cents = amount.quantize(CENT, context=Context(prec=max(amount.adjusted(), 0) + 3))
    except InvalidOperation:  # an exponent beyond any context: written as it is
        return amount
    return cents if cents == amount else amount.normalize()
