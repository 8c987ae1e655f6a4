"""Values that must never be printed: tokens and webhook header values.

A `Secret` behaves like an opaque box: its repr and str are a fixed mask, it compares by value,
and the only way to read it is the explicit `reveal()`.
"""

from __future__ import annotations

import hashlib
import hmac

MASK = "(sensitive value)"


class Secret:
    """A secret string. `template` keeps the file's `${VAR}` text when the value came from one."""

    __slots__ = ("_template", "_value")

    def __init__(self, value: str, template: str | None = None) -> None:
        self._value = value
        self._template = template

    def reveal(self) -> str:
        """The secret itself, for the one place that must send it."""
        return self._value

    @property
    def template(self) -> str | None:
        """The unexpanded text from the file (such as `${WEBHOOK_TOKEN}`), or None for a literal."""
        return self._template

    def hmac(self, key: bytes) -> str:
        """A keyed digest of the value: comparable across runs, useless without the key."""
        return hmac.new(key, self._value.encode(), hashlib.sha256).hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    def __str__(self) -> str:
        return MASK

    def __format__(self, spec: str) -> str:
        return MASK

    def __reduce__(self) -> str | tuple[object, ...]:  # never pickled by accident
        raise TypeError("a Secret cannot be pickled")
