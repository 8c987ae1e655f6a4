"""The one identity rule for payments (reconciler/identity.py) as tables: pure, no service.

Two descriptions are one payment when people read them alike: invisible characters dropped,
NFKC, white space folded, then Unicode TS #39's confusable skeleton. Text that holds a control,
format, unassigned, private-use or default-ignorable character is refused.
"""

from __future__ import annotations

import unicodedata
from decimal import Decimal

import pytest

from reconciler.identity import description_key, payment_key
from reconciler.text_safety import hidden_text_problem

BASE = "January design review"

SAME = [
    ("two spaces", "January  design review"),
    ("a tab and a no-break space", "January\tdesign\u00a0review"),
    ("spaces at the ends", "  January design review "),
    ("Cyrillic е", "January d\u0435sign review"),
    ("Cyrillic а", "J\u0430nuary design review"),
    ("Greek ν", "January design re\u03bdiew"),
    ("Cyrillic Ј", "\u0408anuary design review"),
    ("full-width letters", "Ｊａｎｕａｒｙ design review"),
    ("trailing U+2065 (unassigned, default-ignorable)", BASE + "\u2065"),
    ("zero-width space", "January\u200b design review"),
    ("variation selector", BASE + "\ufe0f"),
    ("combining grapheme joiner", "Jan\u034fuary design review"),
    ("Hangul filler", BASE + "\u3164"),
    ("Khitan filler", BASE + "\U00016fe4"),
    ("musical null notehead", BASE + "\U0001d159"),
    ("object replacement character", BASE + "\ufffc"),
    ("a tag character", BASE + "\U000e0041"),
    ("rn for m", "January design review".replace("m", "rn")),
]

OTHER = [
    ("another word", "January design reviews"),
    ("another month", "February design review"),
    ("no space", "Januarydesign review"),
    ("upper case", "JANUARY DESIGN REVIEW"),
]


@pytest.mark.parametrize(("case", "text"), SAME, ids=[case for case, _ in SAME])
def test_a_look_alike_description_is_the_same_payment(case: str, text: str) -> None:
    assert description_key(text) == description_key(BASE), case
    assert payment_key("Ada@Example.com", Decimal("1500.00"), text) == payment_key(
        "ada@example.com", Decimal("1500"), BASE
    )


@pytest.mark.parametrize(("case", "text"), OTHER, ids=[case for case, _ in OTHER])
def test_a_description_people_read_differently_is_another_payment(case: str, text: str) -> None:
    assert description_key(text) != description_key(BASE), case


def test_nfc_and_nfd_are_one_description() -> None:
    nfc = "Prime de décembre"
    assert description_key(unicodedata.normalize("NFD", nfc)) == description_key(nfc)


def test_another_payee_or_amount_is_another_payment() -> None:
    key = payment_key("ada@example.com", Decimal("1500.00"), BASE)
    assert payment_key("grace@example.com", Decimal("1500.00"), BASE) != key
    assert payment_key("ada@example.com", Decimal("1500.01"), BASE) != key


REFUSED = [
    ("U+2065 (unassigned, default-ignorable)", BASE + "\u2065", "U+2065"),
    ("U+0378 (unassigned)", BASE + "\u0378", "U+0378"),
    ("U+E000 (private use)", BASE + "\ue000", "U+E000"),
    ("U+F0000 (private use, plane 15)", BASE + "\U000f0000", "U+F0000"),
    ("U+200B (format)", BASE + "\u200b", "U+200B"),
    ("U+202E (bidi override)", "\u202e" + BASE, "U+202E"),
    ("U+00AD (soft hyphen)", "Jan\u00aduary", "U+00AD"),
    ("U+FE0F (variation selector)", BASE + "\ufe0f", "U+FE0F"),
    ("U+034F (grapheme joiner)", "Jan\u034fuary", "U+034F"),
    ("U+115F (Hangul filler)", BASE + "\u115f", "U+115F"),
    ("U+3164 (Hangul filler)", BASE + "\u3164", "U+3164"),
    ("U+FFF0 (reserved, default-ignorable)", BASE + "\ufff0", "U+FFF0"),
    ("U+E0041 (tag)", BASE + "\U000e0041", "U+E0041"),
    ("U+E0FFF (reserved, default-ignorable)", BASE + "\U000e0fff", "U+E0FFF"),
    ("U+2800 (blank Braille)", BASE + "\u2800", "U+2800"),
    ("U+FFFC (object replacement)", BASE + "\ufffc", "U+FFFC"),
    ("U+16FE4 (Khitan filler)", BASE + "\U00016fe4", "U+16FE4"),
    ("U+1D159 (null notehead)", BASE + "\U0001d159", "U+1D159"),
]


@pytest.mark.parametrize(("case", "text", "named"), REFUSED, ids=[c for c, _, _ in REFUSED])
def test_hidden_or_unassigned_characters_are_refused_by_name(
    case: str, text: str, named: str
) -> None:
    problem = hidden_text_problem(text)
    assert problem is not None and named in problem, case


@pytest.mark.parametrize(
    "text",
    ["Prime de décembre", "Jаnuary", "Gebühr für März", "設計レビュー", "Bonus 🎉", BASE],
)
def test_visible_text_passes_the_check(text: str) -> None:
    """Look-alikes are not refused: they compare as what they look like, and a plan shows
    them escaped; only what prints as nothing or has no agreed look is refused."""
    assert hidden_text_problem(text) is None


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Good work bonus", "G\u03bf\u03bfd work bonus"),  # Greek omicrons
        ("Invoice 10", "Invoice 1O"),  # the digit 0 and the letter O
        ("Prime de décembre", "Prime de de\u0301cembre"),  # NFD
    ],
)
def test_pairs_people_read_alike(one: str, other: str) -> None:
    assert description_key(one) == description_key(other)
