"""The disk side of an export: where the schema is, and writing without ever half-writing.

A file is written to a temporary file beside it and renamed over the target, so a reader (or a
crash) sees the old file or the new one, never a mix. A new directory is built beside its final
place and renamed into it; an existing one gets every new file written first and only then the
renames, so a failure while writing leaves what was there untouched.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from reconciler.errors import ReconcilerError
from reconciler.export.model import EXPORT_MARK, SCHEMA_ID, ExportedFile

#: Where a copy of the schema is looked for, in the output's folder and each one above it.
SCHEMA_PLACES = (
    Path("desired-state.schema.json"),
    Path("schemas", "desired-state.schema.json"),
)
_MAX_SCHEMA_BYTES = 1 << 20
#: The files a directory of desired state is merged from (what `validate` and `plan` read).
_MERGED_SUFFIXES = (".yaml", ".yml")


class ExportError(ReconcilerError):
    """The export could not be written where it was asked to go."""


def schema_ref(directory: Path) -> str | None:
    """The modeline's target for a file in `directory`: a relative path to a copy of the schema
    (as `reconciler schema --out` writes it) in `directory` or a folder above it, up to the git
    root; None when there is none, so no modeline points at something an editor cannot load."""
    start = directory.resolve()
    for folder in (start, *start.parents):
        for place in SCHEMA_PLACES:
            candidate = folder / place
            if is_schema_copy(candidate):
                return Path(os.path.relpath(candidate, start)).as_posix()
        if (folder / ".git").exists():
            break
    return None


def schema_target(directory: Path) -> tuple[str, Path | None]:
    """The modeline's target for a file in `directory`, and the schema file still to write.

    A copy found by `schema_ref` is the target, with nothing to write. Otherwise the target is
    where the README's `reconciler schema --out schemas/desired-state.schema.json` puts it:
    `schemas/` at the git root above `directory` (or in `directory` itself, outside git), as a
    relative path; export then says the command that writes it."""
    found = schema_ref(directory)
    if found is not None:
        return found, None
    start = directory.resolve()
    root = next((folder for folder in (start, *start.parents) if (folder / ".git").exists()), start)
    place = root / SCHEMA_PLACES[1]
    return Path(os.path.relpath(place, start)).as_posix(), place


def is_schema_copy(path: Path) -> bool:
    """Whether `path` is a regular file holding this tool's desired-state schema (any version)."""
    try:
        if not path.is_file() or path.stat().st_size > _MAX_SCHEMA_BYTES:
            return False
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(document, dict) and document.get("$id") == SCHEMA_ID


_MARK_LINES = 3  # the mark follows the modeline, if any


def is_export_file(path: Path) -> bool:
    """Whether `path` is a regular file that `export` wrote (its mark in its first lines)."""
    try:
        if path.is_symlink() or not path.is_file():
            return False
        with path.open("r", encoding="utf-8", errors="replace") as stream:
            head = [stream.readline(400) for _ in range(_MARK_LINES)]
    except OSError:
        return False
    return any(line.startswith(EXPORT_MARK) for line in head)


def _foreign(entries: Sequence[Path]) -> list[str]:
    return sorted(entry.name for entry in entries if not is_export_file(entry))


def check_target(out: Path, *, directory: bool, force: bool) -> None:
    """Refuse, before anything is read from the service, a target that would be overwritten.

    `--force` replaces (or, in a directory, removes) only files that export wrote and marked;
    anything else there is the user's, and is never touched.
    """
    if directory:
        if out.exists() and not out.is_dir():
            raise ExportError(f"{out} is a file: --split-by writes a directory of files")
        if out.is_dir() and any(out.iterdir()) and not force:
            raise ExportError(
                f"{out} is not empty: refusing to overwrite it",
                hint="add --force to replace the files an earlier export wrote there, or pick "
                "a new directory",
            )
        if out.is_dir() and (foreign := _foreign(_merged_entries(out))):
            raise ExportError(
                f"{out} holds {', '.join(foreign[:5])}{' and more' if len(foreign) > 5 else ''}, "
                "which export did not write: refusing to replace or remove them (they would be "
                "merged with the export)",
                hint="move them out of the folder, or export into a new directory",
            )
        parent = out.absolute().parent
    else:
        if out.is_dir():
            raise ExportError(
                f"{out} is a directory: give a file name, or add --split-by to write one file per "
                "group into it"
            )
        if out.exists() and not force:
            raise ExportError(
                f"{out} exists: refusing to overwrite it",
                hint="add --force to replace it, if an earlier export wrote it",
            )
        if out.exists() and not is_export_file(out):
            raise ExportError(
                f"{out} was not written by `reconciler export`: refusing to replace it, even "
                "with --force",
                hint="export to another path and compare, or move the file away first",
            )
        parent = out.absolute().parent
    if not parent.is_dir():
        raise ExportError(f"cannot write {out}: the folder {parent} does not exist")


def write_file(out: Path, text: str) -> None:
    """Write `text` to `out` atomically (a temporary file renamed over it)."""
    with _reported(out):
        mode = out.stat().st_mode & 0o777 if out.exists() else _default_mode()
        temporary = _write_temporary(out.absolute().parent, out.name, text, mode)
        try:
            os.replace(temporary, out)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise


def write_directory(out: Path, files: Sequence[ExportedFile]) -> list[Path]:
    """Write `files` into the directory `out`; returns the old `*.yaml`/`*.yml` files removed.

    Every file is written before anything is renamed, so a failure leaves the directory as it
    was. Old merged files that the export does not write are removed: left there, they would be
    merged with the new ones.
    """
    with _reported(out):
        if not out.exists():
            _write_new_directory(out, files)
            return []
        written: list[tuple[Path, Path]] = []
        try:
            for file in files:
                temporary = _write_temporary(out, file.name, file.text, _default_mode())
                written.append((temporary, out / file.name))
            names = {file.name for file in files}
            stale = [
                entry
                for entry in _merged_entries(out)
                if entry.name not in names and is_export_file(entry)
            ]
            for temporary, target in written:
                os.replace(temporary, target)
            written = []
            for entry in stale:
                entry.unlink()
            return stale
        finally:
            for temporary, _ in written:
                temporary.unlink(missing_ok=True)


def _merged_entries(folder: Path) -> list[Path]:
    """The entries a merge of `folder` reads (as `reconciler.desired.source` picks them)."""
    return sorted(
        entry
        for entry in folder.iterdir()
        if entry.suffix.lower() in _MERGED_SUFFIXES and not entry.name.startswith(".")
    )


def _write_new_directory(out: Path, files: Sequence[ExportedFile]) -> None:
    parent = out.absolute().parent
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    try:
        for file in files:
            (building / file.name).write_text(file.text, encoding="utf-8")
            (building / file.name).chmod(_default_mode())
        building.chmod(0o777 & ~_umask())
        os.rename(building, out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise


def _write_temporary(folder: Path, name: str, text: str, mode: int) -> Path:
    """`text` in a hidden temporary file in `folder` (not merged: no .yaml suffix), synced."""
    handle, raw_path = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    path = Path(raw_path)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        path.chmod(mode)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


def _default_mode() -> int:
    return 0o666 & ~_umask()


def _umask() -> int:
    # The only way to read the umask is to set it; the command is single-threaded here.
    current = os.umask(0o022)
    os.umask(current)
    return current


@contextlib.contextmanager
def _reported(out: Path) -> Iterator[None]:
    """An OSError becomes a message naming the target, not a traceback."""
    try:
        yield
    except OSError as error:
        reason = error.strerror or str(error)
        raise ExportError(f"cannot write {out}: {reason}") from None
