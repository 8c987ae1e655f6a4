"""Counted words for every message: "1 inactivation", "2 inactivations", never "1 inactivations".

Pure and tiny, so the desired-state checks, the plan, the renderers and the commands all count
with the one function.
"""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """`count` and the word in the number it takes: plural(1, "alias", "aliases") is "1 alias".

    A multi-word noun is given whole ("owned open agreement"); its last word takes the `s`."""
    return f"{count} {noun(count, word, many)}"


def noun(count: int, word: str, many: str | None = None) -> str:
    """The word alone in the number `count` takes (for a count written another way)."""
    return word if count == 1 else (many or word + "s")


def are(count: int) -> str:
    """The verb for a counted subject: '1 ... is', '2 ... are'."""
    return "is" if count == 1 else "are"
