"""What is wrong with a desired-state file, and where: the error `load_desired_state` raises."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.desired.model import Location
from reconciler.errors import ReconcilerError

__all__ = ["InvalidDesiredState", "Location", "Problem"]


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One thing wrong with the file(s), at the place it was written."""

    location: Location
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class InvalidDesiredState(ReconcilerError):
    """The desired state is invalid; `.problems` lists every problem found, sorted by place."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(problems)
        count = len(self.problems)
        lines = [str(problem) for problem in self.problems]
        lines.append(f"{count} problem{'' if count == 1 else 's'} found")
        super().__init__("invalid desired state:\n" + "\n".join(lines))
