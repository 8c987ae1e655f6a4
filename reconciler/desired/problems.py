"""What is wrong with a desired-state file, and where: the error `load_desired_state` raises."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.desired.model import Location
from reconciler.errors import ReconcilerError
from reconciler.redaction import shown
from reconciler.words import noun

__all__ = ["InvalidDesiredState", "Location", "PathProblem", "Problem", "YamlPath"]

#: A place in a document: mapping keys as written (always strings) and sequence indexes.
YamlPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One thing wrong with the file(s), at the place it was written."""

    location: Location
    message: str
    uncounted: bool = False  # stands for more problems that were not read one by one

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


def more_problems(location: Location) -> Problem:
    """Stands for a file's problems past the first `KEPT`, at the first of them: a hostile
    file (millions of duplicate keys, tabs or tags) is not read on to list every one."""
    message = (
        f"more problems follow: the first {KEPT:,} of this file are listed, and the rest of it "
        "was not read"
    )
    return Problem(location, message, uncounted=True)


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
    uncounted: bool = False  # stands for more problems that were not read one by one


class InvalidDesiredState(ReconcilerError):
    """The desired state is invalid; `.problems` lists every problem found, sorted by place."""

    def __init__(
        self, problems: Iterable[Problem], total: int | None = None, *, at_least: bool = False
    ) -> None:
        # A message may echo a value of the file (a token a link led to, a long line): each
        # is shown bounded and masked, as any text from outside is (`redaction.shown`).
        self.problems = sorted(
            Problem(problem.location, shown(problem.message, MESSAGE)) for problem in problems
        )
        #: How many problems there are, when only the first of them were located and kept;
        #: `at_least` when some were not even read one by one.
        self.total = max(total or 0, len(self.problems))
        self.at_least = at_least
        lines = [str(problem) for problem in self.problems[:SHOWN]]
        lines.append(self.count_line(SHOWN))
        super().__init__("invalid desired state:\n" + "\n".join(lines))

    def count_line(self, shown: int) -> str:
        """'3 problems found', or '12,345 problems found (the first 100 are shown)'."""
        count = self.total
        line = f"{'at least ' if self.at_least else ''}{count:,} {noun(count, 'problem')} found"
        listed = min(shown, len(self.problems))
        return line if listed >= count else f"{line} (the first {listed:,} are shown)"


#: Problems listed in a message: a file of 100,000 broken workers needs the first few, and a
#: count, not 100,000 lines.
SHOWN = 100
#: The most characters of one problem's message, with the value it echoes.
MESSAGE = 500
#: Problems located and kept at most: locating each costs a look at the file.
KEPT = 1000
