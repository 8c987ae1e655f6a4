"""Whose saved plan it is: a plan made for an account (`plan --all --out DIR`) records
`account:<name>` as its first source, inside what is signed, so a plan renamed to another
account's file is known by what it says, not by its file name."""

from __future__ import annotations

from collections.abc import Sequence

#: The first source of an account's saved plan: `account:<name>`.
SOURCE_PREFIX = "account:"


def plan_owner(sources: Sequence[str]) -> str | None:
    """The account a saved plan with these sources was made for (None: a single-account plan)."""
    first = sources[0] if sources else ""
    return first.removeprefix(SOURCE_PREFIX) if first.startswith(SOURCE_PREFIX) else None
