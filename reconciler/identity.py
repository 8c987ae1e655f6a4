"""Identities compared as people see them: externalIds and text in NFC, emails normalised.

`"ENG-001 "` and `ENG-001`, an NFD and an NFC `rené@…`, `bücher.example` and its punycode
`xn--bcher-kva.example` each name one person or one mailbox; compared as plain strings they
made two agreements and two invitation e-mails. Every comparison of an externalId or an email,
in the file's checks, the diff, a saved plan's fingerprints and apply's re-read, goes through
`text_key` and `email_key`. ASCII takes a fast path: 100,000 workers pay nothing for this.

A payment is one too, and this module holds its one identity rule (`payment_key`): its payee by
`email_key`, its amount as a Decimal, its description by `description_key`: the characters that
print as nothing dropped, NFKC, each run of white space one space, then the confusable skeleton
of Unicode TS #39 (ICU's, through PyICU), so `January  design review`, `Jаnuary design review`
with a Cyrillic `а` and `January design review` are one payment. The file's duplicate check,
"paid before" (past SUCCESS and in-flight payments, in a plan and at apply), a paid paylist's
content and drift's "paid again" all compare through it. Its payee is a mailbox as the service
keys it (`reconciler.payee.payee_key`: ASCII case and the domain by IDNA folded, nothing else),
not as workers compare: `Ada@` and `ada@` are one payee, `strasse@` and `straße@` two.

Which characters print as nothing and what the confusable skeleton is are the text-safety
rules (`reconciler.text_safety`), which the file's checks and the plans' escapes use too.
"""

from __future__ import annotations

import contextlib
import unicodedata
from decimal import Decimal
from functools import lru_cache

from reconciler.payee import payee_key
from reconciler.text_safety import BLANKS, hidden, skeleton


def text_key(text: str) -> str:
    """`text` in NFC, the form comparisons use."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def email_key(address: str) -> str:
    """The form two addresses of one mailbox share: the domain in IDNA (ASCII), all case-folded."""
    if address.isascii():
        return address.lower()
    return _unicode_email_key(address)


@lru_cache(maxsize=4096)
def _unicode_email_key(address: str) -> str:
    from email_validator import EmailNotValidError, validate_email  # only for such addresses

    local, _, domain = unicodedata.normalize("NFC", address).rpartition("@")
    # An invalid address was refused already; compared as written, it cannot match wrongly.
    with contextlib.suppress(EmailNotValidError):
        domain = validate_email(f"a@{domain}", check_deliverability=False).ascii_domain
    return f"{local.casefold()}@{domain.lower()}"


def description_key(text: str) -> str:
    """The form two descriptions of one payment share: without the characters that print as
    nothing (`text_safety.hidden`), NFKC, every run of white space one space and none at the
    ends, then the TS #39 confusable skeleton (and the white space folded again).

    The service's duplicate key compares bytes, so only this comparison stops a payment being
    paid twice under a description that merely looks the same: a trailing U+200B or U+2065, a
    Hangul filler or blank Braille pattern for a space (`text_safety.BLANKS`, read as one), NFD
    for NFC, a no-break or ideographic space for a space, two spaces for one (a Markdown comment
    shows one), a variation selector, full-width letters, a Cyrillic `е` or a Greek `ο` for a
    Latin letter, `1` for `l`.
    """
    if text.isascii() and text.isprintable():
        # ASCII's skeleton (a table: `text_safety.skeleton`) holds no white space to fold again.
        return skeleton(" ".join(text.split()))
    kept = "".join(
        " " if char.isspace() or char in BLANKS else char
        for char in text
        if char.isspace() or char in BLANKS or not hidden(char)
    )
    return _skeleton(" ".join(unicodedata.normalize("NFKC", kept).split()))


@lru_cache(maxsize=65536)
def _skeleton(text: str) -> str:
    """TS #39's skeleton of `text` (`text_safety.skeleton`), white space folded."""
    return " ".join(skeleton(text).split())


def look_alike_key(external_id: str) -> str:
    """The form two externalIds that read as one share: the TS #39 confusable skeleton of its
    NFC form (`ABC-1` in Latin and `АВС-1` in Cyrillic have one)."""
    return _skeleton(text_key(external_id))


def payment_key(email: str, amount: Decimal, description: str) -> tuple[str, Decimal, str]:
    """What makes two payments one (the service's DUPLICATE_PAYMENT, as people read it): the
    payee's mailbox (`payee_key`), the amount, and the description as `description_key`
    compares it."""
    return (payee_key(email), amount, description_key(description))
