"""The payee rule: which mailbox a payment goes to, as the service keys it.

The service keys a payee by its address with the ASCII letters in lower case (its contract:
`worker_email lower-cased`, and the agreements' email key); it never folds `ß` into `ss`, the
long `ſ` into `s`, the ligature `ﬁ` into `fi` or the Kelvin sign into `k`. Unicode case folding
or compatibility forms joined such twins into one payee, so a saved plan reviewed for
`jan.grosse@` paid `jan.große@`, and the twin counted as "paid before". So `payee_key` folds
only what names one mailbox for certain: the ASCII letters A-Z of the local part, its canonical
form (NFC: an NFD `é` is the same text), and the domain by IDNA (`Bücher.example` is
`xn--bcher-kva.example`). Every place a payee is matched (a plan's payees, a saved plan's, "paid
before", a paid paylist's content, drift) goes through it, through `identity.payment_key`.

Two mailboxes the rule keeps apart may still look alike to a reviewer (`grosse@`, `große@`):
`look_alike_key` says so (NFKC, Unicode case folding and the confusable skeleton of Unicode
TS #39), for a plan to flag such a payee, shown escaped, never to join them.
"""

from __future__ import annotations

import contextlib
import unicodedata
from functools import lru_cache

from reconciler.text_safety import skeleton

#: The ASCII capitals and their lower case: the only case the service folds.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def payee_key(address: str) -> str:
    """The mailbox `address` names, as the service keys it: the local part with its ASCII
    letters in lower case (and no other character changed), the domain in IDNA ASCII."""
    if address.isascii():
        return address.lower()  # for ASCII text, exactly the A-Z fold
    return _unicode_payee_key(address)


@lru_cache(maxsize=4096)
def _unicode_payee_key(address: str) -> str:
    local, _, domain = address.rpartition("@")
    return f"{local.translate(_ASCII_LOWER)}@{_ascii_domain(domain)}"


def _ascii_domain(domain: str) -> str:
    """The domain in IDNA ASCII, lower case; an invalid one (refused already) as written."""
    if domain.isascii():
        return domain.lower()
    from email_validator import EmailNotValidError, validate_email  # only for such domains

    with contextlib.suppress(EmailNotValidError):
        domain = validate_email(f"a@{domain}", check_deliverability=False).ascii_domain
    return domain.translate(_ASCII_LOWER)


@lru_cache(maxsize=4096)
def look_alike_key(address: str) -> str:
    """What `address` looks like to a reader: NFKC, Unicode case folding, then the TS #39
    confusable skeleton (ICU's) of the local part, with the domain in IDNA ASCII. Two addresses
    with one look and two `payee_key`s are two mailboxes a reviewer may take for one."""
    local, _, domain = address.rpartition("@")
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", local).casefold())
    if not folded.isascii():
        folded = skeleton(folded)
    return f"{folded.casefold()}@{_ascii_domain(domain)}"
