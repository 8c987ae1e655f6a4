"""What is wrong with a desired-state file, and where: the error `load_desired_state` raises."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.desired.model import Location
from reconciler.errors import ReconcilerError

__all__ = ["InvalidDesiredState", "Location", "PathProblem", "Problem", "YamlPath"]

#: A place in a document: mapping keys as written (always strings) and sequence indexes.
YamlPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One thing wrong with the file(s), at the place it was written."""

    location: Location
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


@dataclass(frozen=True, slots=True)
class PathProblem:
    """A problem at a path of one file's values, before it is located in the text.

    `at_key` points at the key rather than its value (an unknown key); `other` names a second
    place (file name and path), such as the first of two duplicates.
    """

    path: YamlPath
    message: str
    at_key: bool = False
    other: tuple[str, YamlPath] | None = None


class InvalidDesiredState(ReconcilerError):
    """The desired state is invalid; `.problems` lists every problem found, sorted by place."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(problems)
        count = len(self.problems)
        lines = [str(problem) for problem in self.problems]
        lines.append(f"{count} problem{'' if count == 1 else 's'} found")
        super().__init__("invalid desired state:\n" + "\n".join(lines))
