"""Identities compared as people see them: externalIds and text in NFC, emails normalised.

`"ENG-001 "` and `ENG-001`, an NFD and an NFC `rené@…`, `bücher.example` and its punycode
`xn--bcher-kva.example` each name one person or one mailbox; compared as plain strings they
made two agreements and two invitation e-mails. Every comparison of an externalId or an email,
in the file's checks, the diff, a saved plan's fingerprints and apply's re-read, goes through
`text_key` and `email_key`. ASCII takes a fast path: 100,000 workers pay nothing for this.
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


def external_id_problem(external_id: str) -> str | None:
    """Why this externalId could be mistaken for another, or None."""
    if external_id != external_id.strip():
        return "has white space at its start or end, which no one sees in a plan"
    hidden = _hidden_characters(external_id)
    if hidden:
        return f"holds {hidden}, which print as nothing or reorder the text"
    return None


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
