"""`${VAR}` in the webhook url and header values: taken from the environment, never from files."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_REFERENCE = re.compile(r"\$\$\{|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}|\$\{")


class InterpolationError(ValueError):
    """A reference that cannot be filled: a missing variable or a malformed `${`."""


class Confined(dict[str, str]):
    """An environment whose files may read only the variables their owner names: one account
    of several, whose entry in the accounts file lists them (`env:`). It holds nothing else
    a file could read, so a name outside the list is refused as such, not as unset."""

    def __init__(
        self, values: Mapping[str, str], *, owner: str, readable: Iterable[str], where: str
    ) -> None:
        super().__init__(values)
        self.owner = owner
        self.readable = frozenset(readable)
        self.where = where

    def refusal(self, name: str) -> str | None:
        """Why `${name}` may not be read here (None: it may)."""
        if name in self.readable:
            return None
        return (
            f"${{{name}}} is not a variable {self.owner} may read: name it in the account's "
            f"`env:` list in {self.where} (a variable belongs to one account only)"
        )


def has_reference(text: str) -> bool:
    """Whether `text` takes anything from the environment (an escaped `$${` does not)."""
    return bool(references(text))


def references(text: str) -> list[str]:
    """The names of the variables `text` takes from the environment, in order."""
    return [match["name"] for match in _REFERENCE.finditer(text) if match["name"]]


def interpolate(text: str, environ: Mapping[str, str]) -> str:
    """`text` with each `${NAME}` replaced by the variable's value and each `$${` by `${`."""
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match["name"]
        if match[0] == "$${":
            return "${"
        if name is None:
            raise InterpolationError(
                "a `${` that is not a `${NAME}` reference: write `$${` for a literal `${`"
            )
        if name not in environ:
            missing.append(name)
            return ""
        return environ[name]

    result = _REFERENCE.sub(replace, text)
    if missing:
        names = ", ".join(missing)
        plural = "s" if len(missing) > 1 else ""
        raise InterpolationError(f"environment variable{plural} {names} not set")
    return result
