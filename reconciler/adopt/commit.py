"""The adoption's commit: what `reconciler adopt --format json` printed, read back, and the
files it edits as the repository is to hold them (by their path in the repository, with the
checkout's byte-order mark and executable bit), for the forge to commit on the adoption branch.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from reconciler.adopt.model import Adoption, FileChange
from reconciler.errors import ReconcilerError

_BOM = "\ufeff".encode()


@dataclass(frozen=True, slots=True)
class BranchFile:
    """A file of the adoption commit: its text as the checkout's file keeps it (with its
    byte-order mark, when it has one), whether it is executable, as that file is, and whether
    the adoption creates it."""

    text: str
    executable: bool = False
    created: bool = False


def read_adoption(text: str, account: str | None) -> Adoption | None:
    """The adoption `reconciler adopt --format json` printed (for one account, or over
    `--account`: that account's), or None when adopt did not run or failed for it."""
    try:
        document = json.loads(text)
        if isinstance(document, dict) and "accounts" in document:
            entry = next(e for e in document["accounts"] if e.get("name") == account)
            document = entry.get("adoption")
        return None if document is None else Adoption.from_document(document)
    except (ValueError, StopIteration, AttributeError, TypeError):
        return None


def repository_files(adoption: Adoption, folder: Path) -> dict[str, BranchFile]:
    """Each adopted file by its path in the repository that holds `folder` (the job's
    checkout), as the commit is to hold it: its new text with the checkout's file's
    byte-order mark, and its executable bit; a file outside the repository is refused."""
    if not adoption.files:
        return {}
    root = next((p for p in (folder, *folder.parents) if (p / ".git").exists()), None)
    if root is None:
        raise ReconcilerError(f"{folder} is not inside a git checkout: nothing to propose from")
    files: dict[str, BranchFile] = {}
    for change in adoption.files:
        written = Path(os.path.abspath(folder / change.name))
        if root.resolve() not in (written.resolve().parents):
            raise ReconcilerError(f"{change.name} is outside the repository at {root}")
        path = written.resolve().relative_to(root.resolve()).as_posix()
        files[path] = _as_checked_out(written, change)
    return files


def _as_checked_out(file: Path, change: FileChange) -> BranchFile:
    """The change as the checkout's `file` keeps its bytes: its BOM and its mode."""
    if change.before is None or not file.is_file():
        return BranchFile(change.after, created=change.before is None)
    with file.open("rb") as stream:
        bom = stream.read(len(_BOM)) == _BOM
    executable = bool(file.stat().st_mode & 0o111)
    return BranchFile(("\ufeff" if bom else "") + change.after, executable=executable)
