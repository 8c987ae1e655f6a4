"""Identities compared as people see them: externalIds and text in NFC, emails normalised.

`"ENG-001 "` and `ENG-001`, an NFD and an NFC `rené@…`, `bücher.example` and its punycode
`xn--bcher-kva.example` each name one person or one mailbox; compared as plain strings they
made two agreements and two invitation e-mails. Every comparison of an externalId or an email,
in the file's checks, the diff, a saved plan's fingerprints and apply's re-read, goes through
`text_key` and `email_key`. ASCII takes a fast path: 100,000 workers pay nothing for this.

A payment is one too: its payee by `email_key`, its amount as a Decimal, its description by
`description_key` (NFKC, the invisible characters dropped, each run of white space one space);
payrun ids by `text_key`. The file's duplicate check, "paid before" among past SUCCESS
payments and a paid paylist's content all compare through these. Two emails are one payee when
email-validator's normalisation (the local part in NFC, the domain in IDNA ASCII) agrees after
Unicode case folding of the local part, as for workers: `Ada@` and `ada@`, an NFD and an NFC
`rené@`, `strasse@` and `straße@` (folding maps ß to ss).
"""

from __future__ import annotations

import contextlib
import unicodedata
from decimal import Decimal
from functools import lru_cache

#: Unicode categories no externalId may hold: control characters, and format characters
#: (zero-width spaces and joiners, bidi overrides) that print as nothing or reorder the text.
_HIDDEN = frozenset({"Cc", "Cf"})

#: Code points outside Cc and Cf that print as nothing too: Unicode's other default-ignorable
#: code points (variation selectors, the combining grapheme joiner, the Hangul fillers, Mongolian
#: and Khmer invisibles, musical format marks, tag and reserved planes) and the blank Braille
#: pattern, which renders as an empty cell.
_BLANK_RANGES = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


def _invisible(char: str) -> bool:
    """Whether `char` prints as nothing (or reorders the text) in a plan."""
    if unicodedata.category(char) in _HIDDEN:
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in _BLANK_RANGES)


def _odd_space(char: str) -> bool:
    """White space a plan shows as a plain space, or as a line break, but is another character
    (U+00A0, U+3000, U+2028...): the service compares bytes, so it makes another payment."""
    return char.isspace() and char != " " and unicodedata.category(char) != "Cc"


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
    """The form two descriptions of one payment share: NFKC, without the characters that
    print as nothing (control, format, other default-ignorable), every run of white space one
    space, none at the ends.

    The service's duplicate key compares bytes, so only this comparison stops a payment being
    paid twice under a description that merely looks the same: a trailing U+200B, NFD for NFC,
    a no-break or ideographic space for a space, two spaces for one (a Markdown comment shows
    one), a variation selector, full-width letters.
    """
    if text.isascii() and text.isprintable():
        return " ".join(text.split())
    kept = "".join(char for char in text if not _invisible(char))
    return " ".join(unicodedata.normalize("NFKC", kept).split())


def payment_key(email: str, amount: Decimal, description: str) -> tuple[str, Decimal, str]:
    """What makes two payments one (the service's DUPLICATE_PAYMENT, as people read it): the
    payee's mailbox, the amount, and the description as `description_key` compares it."""
    return (email_key(email), amount, description_key(description))


def hidden_text_problem(text: str) -> str | None:
    """Why this identifying text (an externalId, a payment's or a payrun's description) could
    be mistaken for another in a plan, or None."""
    if text != text.strip():
        return "has white space at its start or end, which no one sees in a plan"
    hidden = _hidden_characters(text)
    if hidden:
        return f"holds {hidden}, which print as nothing or reorder the text"
    spaces = _odd_spaces(text)
    if spaces:
        return f"holds {spaces}, white space a plan shows as a plain space: write a plain space"
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
    found = sorted({char for char in text if _invisible(char)})
    return _codes(found) if found else None


def _odd_spaces(text: str) -> str | None:
    if text.isascii():
        return None
    found = sorted({char for char in text if _odd_space(char)})
    return _codes(found) if found else None


def _codes(chars: list[str]) -> str:
    return ", ".join(f"U+{ord(char):04X}" for char in chars)
