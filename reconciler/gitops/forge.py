"""What the CI flow asks of a forge (GitHub, ...): the `Forge` protocol, and its words.

The flow (`landing`, `pending`, `outcome`, `plan_comment`, `adoption`, `issues`, `statuses`) is
written once against it; a forge is an adapter (`reconciler.gitops.github`,
and the others beside it) that holds only its REST paths and its words, as an octoDNS
provider only does I/O. What every forge does is in `Forge`: the default branch's head, the
record of the last apply, the notes (comments) on a change request (a pull or merge request),
and the change request that adopts what changed live. What only some forges offer to the flow
has a protocol of its own (`issues.Issues`, `statuses.Statuses`); the approvals of a change
request will be one too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from reconciler.accounts.history import Scope
from reconciler.gitops.outcome import Landing
from reconciler.render.marker import Marker

if TYPE_CHECKING:  # the adoption's modules only when a forge commits one
    from reconciler.adopt.commit import BranchFile


@dataclass(frozen=True, slots=True)
class Words:
    """How a forge names things, in the messages the flow writes."""

    request: str  # 'pull request', 'merge request'
    sign: str  # before a request's number: '#', '!'
    log: str  # where a failed job's details are: "the run's log"
    full_history: str  # how a job checks out the whole history: 'fetch-depth: 0'
    note_limit: int  # the longest note (comment) body the forge takes, in characters
    #: What the log says when the reviewed plan was not applied as saved ({name}: the account).
    replanning: str
    #: What the log says when no plan was reviewed and there is something to apply ('': nothing).
    unreviewed: str = ""


@dataclass(frozen=True, slots=True)
class LastApply:
    """An account's last successful apply: its commit, and which record says so (for a
    message: 'deployment 7 in production-eu')."""

    sha: str
    record: str


@dataclass(frozen=True, slots=True)
class Note:
    """A note (a comment) on a change request: its id, its body and its page."""

    id: int
    body: str
    url: str


@dataclass(frozen=True, slots=True)
class NoteResult:
    """What was done: `created`, `updated` or `unchanged`, and the note's id and page."""

    action: str
    comment_id: int
    url: str


@dataclass(frozen=True, slots=True)
class OpenRequest:
    """An open change request (pull or merge request): its number, its body, its page."""

    number: int
    body: str
    url: str


@dataclass(frozen=True, slots=True)
class Reviewed:
    """The plans reviewed on the change request a merge came from: the folder they are in
    (`<name>.json` each, `plan.json` for a single desired-state PATH; None: none), the
    request, and its head commit as planned."""

    folder: Path | None
    pull_request: int | None
    head_sha: str | None


#: No plan reviewed.
NOT_REVIEWED = Reviewed(None, None, None)


@dataclass(frozen=True, slots=True)
class ApplyJob:
    """The job that lands accounts: the commit it applies, the default branch, its page, a work
    folder, and the record's environment (`{account}` is the account's name)."""

    sha: str
    default_branch: str
    environment: str
    log_url: str
    work: Path


class Forge(Protocol):
    """A forge as the flow sees it. Every call may raise the adapter's error (a
    `ReconcilerError`) when the forge refuses or cannot be reached."""

    @property
    def words(self) -> Words: ...

    # --- the default branch and the record of the last apply ------------------------------

    def default_head(self, branch: str, scope: Scope) -> str:
        """The commit `branch` is at now."""
        ...

    def last_applied(self, environment: str) -> LastApply | None:
        """The newest successful apply recorded in `environment`; None: never applied."""
        ...

    def requests_of(self, merges: Sequence[str]) -> list[int]:
        """The change requests merged as `merges`, in order, each once (a push has none)."""
        ...

    def record_start(self, environment: str, job: ApplyJob, request: int | None,
                     digest: str | None, description: str) -> int | None:  # fmt: skip
        """Record that an apply at `job.sha` started, of the plan reviewed on `request` whose
        digest is `digest`; its record's id (None: the forge records the job itself)."""
        ...

    def record_end(self, started: int | None, job: ApplyJob, landing: Landing,
                   requests: Sequence[int]) -> None:  # fmt: skip
        """Record how it ended (`requests`: those its outcome is to be told on)."""
        ...

    # --- the log --------------------------------------------------------------------------

    def annotate(self, level: str, message: str) -> str:
        """The line of the job's log that says `message`: `level` notice, warning or error."""
        ...

    def section(self, name: str, start: bool) -> None:
        """Open (`start`) or close a folded section of the log."""
        ...

    # --- notes on a change request --------------------------------------------------------

    def notes(self, request: int, author: str | None) -> Iterable[Note]:
        """The notes on `request` the tool may take as its own: written by `author` (None:
        the forge's default, the job's token's user where the forge says who wrote a note)."""
        ...

    def post_note(self, request: int, body: str) -> Note: ...

    def edit_note(self, request: int, note: Note, body: str) -> Note: ...

    # --- the change request that adopts what changed live ---------------------------------

    def find_request(self, branch: str, marker: Marker) -> OpenRequest | None:
        """The open change request from the repository's own `branch` whose body's first line
        is `marker`."""
        ...

    def push_branch(self, branch: str, base_sha: str, files: Mapping[str, BranchFile],
                    message: str) -> str:  # fmt: skip
        """One commit of `files` on `base_sha` (each with its mode), and `branch` moved to it
        (forced); its SHA."""
        ...

    def branch_head(self, branch: str) -> str | None:
        """The commit the repository's own `branch` is at (None: no such branch)."""
        ...

    def open_request(self, branch: str, target: str | None, title: str, body: str) -> OpenRequest:
        """Open it from `branch` into `target` (None: the default branch)."""
        ...

    def update_request(self, number: int, body: str) -> None: ...

    def close_request(self, number: int, branch: str, note: str) -> None:
        """Say `note` on it, close it, and delete its branch."""
        ...

    # --- the records branch (`accounts.records`) ----------------------------------------------

    def keep_files(self, branch: str, files: Mapping[str, str], message: str) -> str:
        """One commit of `files` (path: text) on `branch`, never forced; its SHA."""
        ...
