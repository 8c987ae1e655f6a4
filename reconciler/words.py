"""Counted words for every message: "1 inactivation", "3,000 inactivations", never
"1 inactivations" nor "3000".

Pure and tiny, so the desired-state checks, the plan, the renderers and the commands all count
with the one function. Every count a person reads (text, Markdown, comments) is written by
`counted`, with a thousands separator; JSON keeps plain integers.
"""

from __future__ import annotations


def counted(count: int) -> str:
    """A count as a person reads it: 3000 is "3,000"."""
    return f"{count:,}"


def plural(count: int, word: str, many: str | None = None) -> str:
    """`count` and the word in the number it takes: plural(1, "alias", "aliases") is "1 alias",
    plural(3000, "invitation") is "3,000 invitations".

    A multi-word noun is given whole ("owned open agreement"); its last word takes the `s`."""
    return f"{counted(count)} {noun(count, word, many)}"


def noun(count: int, word: str, many: str | None = None) -> str:
    """The word alone in the number `count` takes (for a count written another way)."""
    return word if count == 1 else (many or word + "s")


def are(count: int) -> str:
    """The verb for a counted subject: '1 ... is', '2 ... are'."""
    return "is" if count == 1 else "are"
