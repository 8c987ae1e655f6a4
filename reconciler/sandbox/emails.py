"""How the sandbox keys an email: A-Z lower-cased, nothing else.

The service compares emails "ignoring case" and keys a payment by the email "lower-cased"; the
product reads both as ASCII case (docs/payruns.md: `ß`, `ſ`, `ﬁ`, the Kelvin sign and `É` are
not `ss`, `s`, `fi`, `k` and `é`). SQLite's own `lower()`, which `GET /contract/workers?email=`
uses, folds A-Z only; every other key the sandbox makes (invitations, a payment's agreement and
idempotence key, a paylist's content) folds the same way, so one mailbox is one mailbox
everywhere in it.
"""

from __future__ import annotations

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def email_key(email: str) -> str:
    """`email` with A-Z lower-cased, as SQLite's `lower()` does; every other character kept."""
    return email.translate(_ASCII_LOWER)
