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

Unicode data: categories and NFKC come from Python's `unicodedata` (Unicode 14.0.0 in Python
3.11); the Default_Ignorable_Code_Point property and the confusables come from the ICU that
PyICU ships (Unicode 16.0 for ICU 77). A character unassigned in Python's data is refused, so
every character kept is one both know.
"""

from __future__ import annotations

import contextlib
import unicodedata
from decimal import Decimal
from functools import lru_cache
from typing import Any

from reconciler.payee import payee_key

#: Unicode categories no identifying text may hold: control and format characters (zero-width
#: spaces and joiners, bidi overrides) that print as nothing or reorder the text, unassigned code
#: points (any renderer shows them as it likes) and private-use ones (their look is anyone's).
_HIDDEN = frozenset({"Cc", "Cf", "Cn", "Co"})

#: Code points no Unicode property marks as default-ignorable that print as nothing or as an
#: empty box all the same: the blank Braille pattern, the object replacement character, the
#: Khitan filler and the musical null notehead. Every default-ignorable code point (ICU's
#: Default_Ignorable_Code_Point, the whole property, reserved code points included) is hidden too.
_BLANK_GLYPHS = frozenset("\u2800\ufffc\U00016fe4\U0001d159")
#: Of the hidden characters, those a renderer draws as a blank as wide as a letter: a space
#: to the eye, so one to `description_key` (`January<U+3164>design` is `January design`).
_BLANKS = _BLANK_GLYPHS | frozenset("\u115f\u1160\u3164\uffa0")


def _invisible(char: str) -> bool:
    """Whether `char` prints as nothing (or reorders the text, or has no agreed look) in a plan."""
    if unicodedata.category(char) in _HIDDEN or char in _BLANK_GLYPHS:
        return True
    return _default_ignorable(char)


def _default_ignorable(char: str) -> bool:
    import icu  # only for non-ASCII text: ASCII holds no default-ignorable code point

    return bool(icu.Char.hasBinaryProperty(char, icu.UProperty.DEFAULT_IGNORABLE_CODE_POINT))


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
    """The form two descriptions of one payment share: without the characters that print as
    nothing (`_invisible`), NFKC, every run of white space one space and none at the ends, then
    the TS #39 confusable skeleton (and the white space folded again).

    The service's duplicate key compares bytes, so only this comparison stops a payment being
    paid twice under a description that merely looks the same: a trailing U+200B or U+2065, a
    Hangul filler or blank Braille pattern for a space (`_BLANKS`, read as one), NFD
    for NFC, a no-break or ideographic space for a space, two spaces for one (a Markdown comment
    shows one), a variation selector, full-width letters, a Cyrillic `е` or a Greek `ο` for a
    Latin letter, `1` for `l`.
    """
    if text.isascii() and text.isprintable():
        folded = " ".join(text.split())
    else:
        kept = "".join(
            " " if char.isspace() or char in _BLANKS else char
            for char in text
            if char.isspace() or char in _BLANKS or not _invisible(char)
        )
        folded = " ".join(unicodedata.normalize("NFKC", kept).split())
    return _skeleton(folded)


@lru_cache(maxsize=65536)
def _skeleton(text: str) -> str:
    """TS #39's skeleton of `text` (NFD, each character to its prototype, NFD), white space
    folded: ICU's implementation of the Unicode confusables data, not a table of our own."""
    return " ".join(_spoof_checker().getSkeleton(0, text).split())


def look_alike_key(external_id: str) -> str:
    """The form two externalIds that read as one share: the TS #39 confusable skeleton of its
    NFC form (`ABC-1` in Latin and `АВС-1` in Cyrillic have one)."""
    return _skeleton(text_key(external_id))


@lru_cache(maxsize=1)
def _spoof_checker() -> Any:
    import icu

    return icu.SpoofChecker()


def payment_key(email: str, amount: Decimal, description: str) -> tuple[str, Decimal, str]:
    """What makes two payments one (the service's DUPLICATE_PAYMENT, as people read it): the
    payee's mailbox (`payee_key`), the amount, and the description as `description_key`
    compares it."""
    return (payee_key(email), amount, description_key(description))


_EDGE_SPACE = "has white space at its start or end, which no one sees in a plan"


def hidden_text_problem(text: str) -> str | None:
    """Why this identifying text (an externalId, a payment's or a payrun's description) could
    be mistaken for another in a plan, or None."""
    if text.isascii() and text.isprintable():  # nearly every one: nothing hidden, no odd space
        if text[:1] == " " or text[-1:] == " ":  # the only white space printable ASCII has
            return _EDGE_SPACE
        return None
    if text != text.strip():
        return _EDGE_SPACE
    hidden = _hidden_characters(text)
    if hidden:
        return (
            f"holds {hidden}, which print as nothing, reorder the text or have no agreed look "
            "(control, format, unassigned, private-use or default-ignorable characters)"
        )
    spaces = _odd_spaces(text)
    if spaces:
        return f"holds {spaces}, white space a plan shows as a plain space: write a plain space"
    return None


def external_id_problem(text: str) -> str | None:
    """Why this externalId could be mistaken for another in a plan, or None: what
    `hidden_text_problem` refuses, compatibility forms (full-width, mathematical or circled
    letters and digits: `ENG-𝟎𝟎1` reads as `ENG-001` and would be another worker), and a mix
    of scripts or of digits Unicode TS #39 finds prone to look-alikes (`mixed_script_problem`)."""
    reason = hidden_text_problem(text)
    if reason is not None or text.isascii():
        return reason
    plain = unicodedata.normalize("NFKC", text)
    if plain == unicodedata.normalize("NFC", text):
        return mixed_script_problem(text)
    styled = sorted({char for char in text if unicodedata.normalize("NFKC", char) != char})
    return (
        f"holds {_codes(styled)}, a styled form (full-width, mathematical, circled...) of "
        f"plain characters, so it reads as {plain!r}: write that instead"
    )


def mixed_script_problem(text: str) -> str | None:
    """Why `text` mixes scripts (or digits) as look-alikes do, or None: ICU's check of Unicode
    TS #39's restriction levels, at the moderately restrictive one, which lets Latin go with
    any script but Cyrillic and Greek (`ENG-田中`, `ENG-Müller`, `ИНЖ-001` are kept, `ENG-А01`
    with a Cyrillic `А` is not), and digits of one numbering system only."""
    import icu

    failed = _script_checker().check(text)
    if failed & icu.USpoofChecks.RESTRICTION_LEVEL:
        scripts: dict[str, list[str]] = {}
        for char in dict.fromkeys(text):
            script = icu.Script.getScript(char).getName()
            if script not in ("Common", "Inherited"):
                scripts.setdefault(script, []).append(char)
        first, *others = sorted(scripts, key=lambda name: -len(scripts[name]))
        odd = [char for name in others for char in scripts[name]]
        return (
            f"mixes the {', '.join([first, *others[:-1]])} and {others[-1]} scripts "
            f"({_named(odd)} among "
            f"{first} letters), which Unicode TS #39 refuses in identifiers: a letter that "
            "looks like one of another script makes it read as another id; write it in one "
            "script"
        )
    if failed & icu.USpoofChecks.MIXED_NUMBERS:
        digits = [char for char in dict.fromkeys(text) if unicodedata.category(char) == "Nd"]
        return (
            f"mixes digits of different numbering systems ({_named(digits)}), which Unicode "
            "TS #39 refuses in identifiers: write its digits in one system"
        )
    return None


@lru_cache(maxsize=1)
def _script_checker() -> Any:
    import icu

    checker = icu.SpoofChecker()
    checker.setChecks(icu.USpoofChecks.RESTRICTION_LEVEL | icu.USpoofChecks.MIXED_NUMBERS)
    checker.setRestrictionLevel(icu.URestrictionLevel.MODERATELY_RESTRICTIVE)
    return checker


def _named(chars: list[str]) -> str:
    return ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in chars)


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
