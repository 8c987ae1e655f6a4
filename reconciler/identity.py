"""Identities compared as people see them: externalIds and text in NFC, emails normalised.

`"ENG-001 "` and `ENG-001`, an NFD and an NFC `rené@…`, `bücher.example` and its punycode
`xn--bcher-kva.example` each name one person or one mailbox; compared as plain strings they
made two agreements and two invitation e-mails. Every comparison of an externalId or an email,
in the file's checks, the diff, a saved plan's fingerprints and apply's re-read, goes through
`text_key` and `email_key`. ASCII takes a fast path: 100,000 workers pay nothing for this.

A payment is one too: its payee by `email_key`, its amount as a Decimal, its description by
`description_key` (NFC, the invisible characters dropped); payrun ids by `text_key`. The file's
duplicate check, "paid before" among past SUCCESS payments and a paid paylist's content all
compare through these. Two emails are one payee when email-validator's normalisation (the local
part in NFC, the domain in IDNA ASCII) agrees after Unicode case folding of the local part, as
for workers: `Ada@` and `ada@`, an NFD and an NFC `rené@`, `strasse@` and `straße@` (folding
maps ß to ss).
"""

from __future__ import annotations

import contextlib
import unicodedata
from functools import lru_cache

from email_validator import EmailNotValidError, validate_email

#: Unicode categories no externalId may hold: control characters, and format characters
#: (zero-width spaces and joiners, bidi overrides) that print as nothing or reorder the text.
_HIDDEN = frozenset({"Cc", "Cf"})


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
    local, _, domain = unicodedata.normalize("NFC", address).rpartition("@")
    # An invalid address was refused already; compared as written, it cannot match wrongly.
    with contextlib.suppress(EmailNotValidError):
        domain = validate_email(f"a@{domain}", check_deliverability=False).ascii_domain
    return f"{local.casefold()}@{domain.lower()}"


def description_key(text: str) -> str:
    """The form two descriptions of one payment share: NFC, without the control and format
    characters (zero-width, bidi) that print as nothing, and without white space at the ends.

    The service's duplicate key compares bytes, so only this comparison stops a payment being
    paid twice under a description that merely looks the same (a trailing U+200B, NFD for NFC).
    """
    if text.isascii() and text.isprintable():
        return text.strip()
    kept = "".join(char for char in text if unicodedata.category(char) not in _HIDDEN)
    return unicodedata.normalize("NFC", kept).strip()


def hidden_text_problem(text: str) -> str | None:
    """Why this identifying text (an externalId, a payment's or a payrun's description) could
    be mistaken for another in a plan, or None."""
    if text != text.strip():
        return "has white space at its start or end, which no one sees in a plan"
    hidden = _hidden_characters(text)
    if hidden:
        return f"holds {hidden}, which print as nothing or reorder the text"
    return None


external_id_problem = hidden_text_problem


def control_problem(text: str, allowed: str = "") -> str | None:
    """Why this text cannot be shown as it is (a control character but `allowed`), or None."""
    if text.isascii() and text.isprintable():
        return None
    found = sorted({c for c in text if unicodedata.category(c) == "Cc" and c not in allowed})
    if not found:
        return None
    return f"holds the control character{'s' if len(found) > 1 else ''} {_codes(found)}"


def _hidden_characters(text: str) -> str | None:
    if text.isascii() and text.isprintable():
        return None
    found = sorted({char for char in text if unicodedata.category(char) in _HIDDEN})
    return _codes(found) if found else None


def _codes(chars: list[str]) -> str:
    return ", ".join(f"U+{ord(char):04X}" for char in chars)
