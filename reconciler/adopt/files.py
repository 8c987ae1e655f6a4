"""Adopting into the files on disk: read them, check what the edits make of them, write them.

The edits are made on the text the loader reads (`desired.source.read_sources`, the same
rules: no link out of the folder, nothing hidden), checked by the loader itself before any
byte is written (a file the edits would make invalid is a bug to report, never a file to
leave behind), and written atomically, all or none (`write_files`): each file is replaced by a
complete new one in the same folder, and only when it still holds the bytes that were read (an
editor that saved it since wins, and adopt says so); every file is checked and its new text
written aside before the first is replaced, and a run stopped after that names what it wrote.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from reconciler._version import ISSUE_TRACKER
from reconciler.adopt.model import Adoption, FileChange
from reconciler.adopt.proposal import AdoptOptions
from reconciler.adopt.propose import propose
from reconciler.adopt.risks import risks_of
from reconciler.desired import load_desired_state
from reconciler.desired.problems import InvalidDesiredState
from reconciler.desired.source import SourceText, read_sources
from reconciler.errors import ReconcilerError
from reconciler.plan.model import LiveState, Plan

_BOM = "\ufeff"
_SUFFIXES = (".yaml", ".yml")


class AdoptRefused(ReconcilerError):
    """Adopt wrote nothing: a file cannot be written, or changed while it was read."""


def adopt_path(
    path: Path,
    plan: Plan,
    live: LiveState,
    scope_prefix: str | None,
    *,
    only: Iterable[str] = (),
    into: Path | None = None,
    write: bool = True,
) -> Adoption:
    """Edit the desired state at `path` so that it says what `live` has, for the drift `plan`
    (made of those very files) found; with `write` False, nothing is written."""
    sources, problems = read_sources(path)
    if problems:
        raise InvalidDesiredState(problems)
    options = AdoptOptions(only=tuple(only), into=_into(path, into, sources))
    adoption = propose([(s.name, s.text) for s in sources], plan, live, scope_prefix, options)
    adoption = replace(adoption, risks=risks_of(adoption, plan))
    if not adoption.files:
        return adoption
    _check(path, sources, adoption.files)
    if write:
        write_files(adoption.files)
    return adoption


def _into(path: Path, into: Path | None, sources: list[SourceText]) -> str | None:
    """`--into` as the name the loader gives the file; a new file only inside PATH's folder."""
    if into is None:
        return None
    real = os.path.realpath(into)
    for source in sources:
        if os.path.realpath(source.name) == real:
            return source.name
    if not path.is_dir():
        raise AdoptRefused(
            f"--into {into}: not the file at {path}; a new file is for a folder of files",
            hint=f"leave --into out to write into {path}",
        )
    if into.exists() or into.is_symlink():
        raise AdoptRefused(f"--into {into}: a file the desired state at {path} does not read")
    if os.path.realpath(into.parent) != os.path.realpath(path):
        raise AdoptRefused(f"--into {into}: a new file must be directly inside {path}")
    if into.suffix.lower() not in _SUFFIXES or into.name.startswith("."):
        raise AdoptRefused(f"--into {into}: a desired-state file is named *.yaml or *.yml")
    return str(path / into.name)


def _check(path: Path, sources: list[SourceText], changes: Iterable[FileChange]) -> None:
    """Load the edited files as the loader would (variables by name only): a problem is a
    mistake of adopt's, reported, and nothing is written."""
    texts = {source.name: source.text for source in sources}
    texts |= {change.name: change.after for change in changes}
    with tempfile.TemporaryDirectory(prefix="reconciler-adopt-") as folder:
        names: dict[str, str] = {}
        for index, (name, text) in enumerate(texts.items()):
            copy = Path(folder) / f"{index:05d}-{Path(name).name}"
            copy.write_text(text, encoding="utf-8")
            names[str(copy)] = name
        try:
            load_desired_state(folder, read_variables=False)
        except InvalidDesiredState as error:
            lines = [str(problem) for problem in error.problems]
            for written, name in names.items():
                lines = [line.replace(written, name) for line in lines]
            raise AdoptRefused(
                f"adopting would leave the desired state at {path} invalid, so nothing was "
                "written:\n" + "\n".join(lines),
                hint="adopt the rest with --only, and this change by hand; and report it, with "
                f"these lines, on {ISSUE_TRACKER}",
            ) from None


@dataclass(frozen=True, slots=True)
class _Staged:
    """A file's new text written beside it, ready to be moved into place."""

    change: FileChange
    target: Path
    temporary: str


def write_files(changes: Sequence[FileChange]) -> None:
    """Write every file, or none: each is checked to hold still what was read and its new text
    written beside it before any is replaced; then each is moved into place (atomically, the
    check made again just before). A file that changed meanwhile stops the run: before any
    write, nothing is written; after some, the error names every file already written."""
    staged: list[_Staged] = []
    try:
        for change in changes:
            staged.append(_stage(change))
    except BaseException:
        for done in staged:
            Path(done.temporary).unlink(missing_ok=True)
        raise
    written: list[str] = []
    for at, done in enumerate(staged):
        try:
            _place(done)
        except (AdoptRefused, OSError) as error:
            for rest in staged[at:]:
                Path(rest.temporary).unlink(missing_ok=True)
            reason = error.message if isinstance(error, AdoptRefused) else str(error.strerror)
            if not written:
                raise
            raise AdoptRefused(
                f"{reason}; already written: {', '.join(written)}, and nothing after it",
                hint="look at the files written, then run adopt again for the rest",
            ) from None
        written.append(done.change.name)


def _unchanged(change: FileChange, target: Path) -> str:
    """The file's byte order mark, if it still holds what was read (else `AdoptRefused`)."""
    if change.before is None:
        if target.exists() or target.is_symlink():
            raise AdoptRefused(f"{change.name} appeared while adopt ran: nothing written to it")
        return ""
    try:
        raw = target.read_bytes()
    except OSError as error:
        raise AdoptRefused(f"{change.name}: cannot read it again: {error.strerror}") from None
    text = raw.decode("utf-8", errors="replace")
    if text.removeprefix(_BOM) != change.before:
        raise AdoptRefused(
            f"{change.name} changed while adopt ran: it was left as it is now",
            hint="run adopt again",
        )
    return _BOM if text.startswith(_BOM) else ""


def _stage(change: FileChange) -> _Staged:
    """The new text, with the file's byte order mark and mode, written beside it."""
    target = Path(os.path.realpath(change.name))
    bom = _unchanged(change, target)
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as stream:
            stream.write(bom + change.after)
            stream.flush()
            os.fsync(stream.fileno())
        mode = os.stat(target).st_mode & 0o7777 if change.before is not None else 0o644
        os.chmod(temporary, mode)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return _Staged(change, target, temporary)


def _place(staged: _Staged) -> None:
    """Move the new text into place, if the file still holds what was read."""
    change, target, temporary = staged.change, staged.target, staged.temporary
    _unchanged(change, target)
    if change.before is not None:
        os.replace(temporary, target)
        return
    try:
        os.link(temporary, target)  # fails, rather than replace, a file made meanwhile
    except FileExistsError:
        raise AdoptRefused(
            f"{change.name} appeared while adopt ran: nothing written to it"
        ) from None
    finally:
        Path(temporary).unlink(missing_ok=True)
