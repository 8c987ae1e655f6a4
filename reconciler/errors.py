"""The base of every error the reconciler reports to a person (never as a traceback)."""

from __future__ import annotations

#: The exit status of `apply` when a change of the approvals policy waits for its approvals:
#: nothing was applied, and the merge stays pending (`accounts.approving.PolicyChangeWaits`;
#: the landing reads it from the apply's child process).
EXIT_POLICY_CHANGE = 4


class ReconcilerError(Exception):
    """An error with a message meant for the user; `exit_code` is what the CLI exits with."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message}\n  hint: {self.hint}"

    def one_line(self) -> str:
        """The message and its hint on one line (an annotation, a record's description)."""
        return self.message if self.hint is None else f"{self.message} (hint: {self.hint})"


class Refused(ReconcilerError):
    """A check said no before anything was sent (a plan untrusted, stale, unsafe, or for
    another account): a summary over several accounts lists these apart from failures."""
