"""Reading the desired-state path: one file, or every `*.yaml`/`*.yml` of a directory."""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from reconciler.desired.model import Location
from reconciler.desired.nodes import nodes_at_most
from reconciler.desired.problems import Problem
from reconciler.regular import KINDS

_SUFFIXES = (".yaml", ".yml")
_BOM = "\ufeff"
#: The most bytes one load reads, in all its files (documented in docs/safety.md): a state of
#: 100,000 workers is about 26 MB; a file of hundreds of megabytes would take gigabytes of
#: memory to parse. A file that would take the total over it is refused before it is read.
MAX_INPUT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SourceText:
    """The text of one file, under the name its problems are reported with, the most YAML
    nodes it can hold (`nodes.nodes_at_most`; None: counted from the text when parsed), and
    the SHA-256 of the very bytes it was decoded from (hex; empty for a text not read from a
    file, or when not asked for), which a saved plan's review is bound to."""

    name: str
    text: str
    nodes_at_most: int | None = None
    sha256: str = ""


def read_sources(
    path: str | Path, *, digests: bool = False
) -> tuple[list[SourceText], list[Problem]]:
    """The files a path names, decoded, and the problems met reading them (with `digests`,
    the SHA-256 of each file's bytes: `validate` never imports what hashes them).

    In a directory, every entry named `*.yaml` or `*.yml` (in any case; hidden `.*` entries,
    such as an editor's lock files, aside) must be a readable regular file once links are
    followed: a dangling link, a link loop, a directory or a FIFO is an error naming it, never
    skipped, since a file that silently drops out of the state would inactivate its workers.
    A link in a directory must lead to a file inside that directory: one leading out of it
    (to a credential file, say) is refused unread. The files are read while their sizes add
    up to at most `MAX_INPUT_BYTES`; the one that would pass it is refused unread.
    """
    path = Path(path)
    try:
        listing = _listing(path)
    except _Unreadable as error:
        return [], [Problem(Location(str(path), 1, 1), str(error))]
    sources: list[SourceText] = []
    problems: list[Problem] = []
    budget = MAX_INPUT_BYTES
    for file in listing.files:
        try:
            raw = _read_all(listing.open(file, budget), budget)
            budget -= len(raw)
        except _Unreadable as error:
            problems.append(Problem(Location(str(file), 1, 1), str(error)))
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.append(_encoding_problem(str(file), raw, error.start))
            continue
        sha256 = _sha256(raw) if digests else ""
        sources.append(SourceText(str(file), text.removeprefix(_BOM), nodes_at_most(raw), sha256))
    return sources, problems


@dataclass(frozen=True, slots=True)
class _Listing:
    """The files a desired-state path names, and the folder their links must stay in: the
    one place that says which files a load opens, for the load and for the guess before it."""

    files: list[Path]
    inside: Path | None  # None: a file named on the command line, read wherever it is

    def open(self, file: Path, budget: int) -> int:
        """A blocking descriptor of `file` (the caller closes it), if the load may read it
        with `budget` bytes left; `_Unreadable` otherwise."""
        if self.inside is not None:
            _refuse_link_out(file, self.inside)
        return _open_regular(file, budget)


def _listing(path: Path) -> _Listing:
    """The files at `path`, or `_Unreadable` saying why none is read."""
    if (leaving := _leaves_repository(path)) is not None:
        raise _Unreadable(leaving)
    if path.is_dir():
        files = _yaml_files(path)
        if not files:
            raise _Unreadable("the directory holds no *.yaml or *.yml file")
        return _Listing(files, Path(os.path.realpath(path)))
    if path.exists() or path.is_symlink():
        return _Listing([path], None)
    raise _Unreadable("no such file or directory")


def _sha256(raw: bytes) -> str:
    import hashlib  # OpenSSL: only a saved plan's review needs it

    return hashlib.sha256(raw).hexdigest()


def _yaml_files(directory: Path) -> list[Path]:
    return sorted(
        entry
        for entry in directory.iterdir()
        if entry.suffix.lower() in _SUFFIXES and not entry.name.startswith(".")
    )


#: A top-level `payruns:` key whose value begins a sequence with an item: on the next line
#: (`- `, after an optional comment) or in flow style (`[{...`).
_PAYRUNS = re.compile(rb"payruns:[ \t]*(?:#[^\n]*)?(?:\r?\n[ \t]*-[ \t\r\n]|\[[ \t]*[^\]\s])")


def payruns_written(path: str | Path) -> bool:
    """Whether the file at `path`, or a `*.yaml` file of the directory, writes payruns: a guess
    from its bytes, before anything is parsed, so that a plan starts reading the money payruns
    need with the workers (`session.reading`). A file that writes them as most do (a top-level
    `payruns:` key, its first item on the next line or in flow style) is found; one that does
    not is read as before, once loaded. Only the files the load would read are opened (the
    same listing and rules: no link out of the repository or the folder, nothing past the
    size limit); the guess is False when one is refused. Never raises: an unreadable path is
    for the loader to report."""
    try:
        listing = _listing(Path(path))
        budget = MAX_INPUT_BYTES
        for file in listing.files:
            descriptor = listing.open(file, budget)
            try:
                budget -= os.fstat(descriptor).st_size
                if _writes_payruns(descriptor):
                    return True
            finally:
                os.close(descriptor)
        return False
    except (_Unreadable, OSError, ValueError):
        return False


#: Read in pieces below glibc's threshold for mapping memory apart: one read of a large file
#: would raise that threshold, and a plan of 100,000 then kept more of its heap (its peak RSS
#: rose by about 30 MB). The carry is what a match needs past a piece's end.
_PIECE = 64 * 1024
_CARRY = 1024


def _writes_payruns(descriptor: int) -> bool:
    data = b"\n"  # the file's first line starts after a new line
    while piece := os.read(descriptor, _PIECE):
        data = data[-_CARRY:] + piece
        start = 0
        while (found := data.find(b"\npayruns:", start)) >= 0:
            if _PAYRUNS.match(data, found + 1):
                return True
            start = found + 1
    return False


class _Unreadable(Exception):
    """Why an entry cannot be read as a desired-state file."""


def _leaves_repository(path: Path) -> str | None:
    """Why `path` is refused when, inside a git work tree, a link takes it out of that tree
    (a pull request can turn the desired-state folder itself into a link to the runner's
    files); None when it stays inside, or when no work tree holds it."""
    written = Path(os.path.abspath(path))
    root = next((folder for folder in written.parents if (folder / ".git").exists()), None)
    if root is None:
        return None
    real_root = Path(os.path.realpath(root))
    target = Path(os.path.realpath(written))
    if target == real_root or real_root in target.parents:
        return None
    return (
        f"a symbolic link on the way leads out of the repository at {root}: a desired state "
        "inside a repository is read only from files of that repository (nothing was read)"
    )


def _refuse_link_out(file: Path, inside: Path) -> None:
    """Refuse a symbolic link (or a chain of them) that leads out of the directory."""
    if not file.is_symlink():
        return
    target = Path(os.path.realpath(file))
    if not target.exists():
        return  # dangling, or a loop: reading it says which, and reads nothing
    if target == inside or inside not in target.parents:
        raise _Unreadable(
            "a symbolic link that leads out of the directory: a desired-state directory may "
            "link only to files inside it (copy the file in, or link to one inside)"
        )
    if any(part.startswith(".") for part in target.relative_to(inside).parts):
        # Hidden entries are never read (`.git/config` may hold the checkout's credentials).
        raise _Unreadable(
            "a symbolic link to a hidden file or directory (one whose name starts with `.`): "
            "a desired-state directory may link only to files it would read"
        )


def _read_all(descriptor: int, budget: int) -> bytes:
    """The bytes of an open regular file (`_open_regular`'s), at most `budget` of them; the
    descriptor is closed."""
    try:
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            raw = stream.read(budget + 1)  # a file growing while read stops at the limit
    except OSError as error:
        raise _Unreadable(f"cannot read: {error.strerror}") from None
    finally:
        os.close(descriptor)
    if len(raw) > budget:
        raise _Unreadable(_too_large(len(raw)))
    return raw


def _open_regular(file: Path, budget: int) -> int:
    """A blocking descriptor of a regular file of at most `budget` bytes (the caller closes
    it), or `_Unreadable`.

    Opened non-blocking and checked on the open descriptor, so a FIFO (or a file swapped for
    one after a look) is refused at once rather than read forever.
    """
    try:
        descriptor = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if file.is_symlink():
            raise _Unreadable(
                f"a symbolic link to {os.readlink(file)!r}, which does not exist"
            ) from None
        raise _Unreadable("no such file (it went away while being read)") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _Unreadable("a symbolic link that loops back on itself") from None
        raise _Unreadable(f"cannot read: {error.strerror}") from None
    try:
        kind = stat.S_IFMT(os.fstat(descriptor).st_mode)
        if kind != stat.S_IFREG:
            raise _Unreadable(f"not a regular file but {KINDS.get(kind, 'a special file')}")
        size = os.fstat(descriptor).st_size
        if size > budget:
            raise _Unreadable(_too_large(size))
        os.set_blocking(descriptor, True)
    except OSError as error:
        os.close(descriptor)
        raise _Unreadable(f"cannot read: {error.strerror}") from None
    except _Unreadable:
        os.close(descriptor)
        raise
    return descriptor


def _too_large(size: int) -> str:
    limit = MAX_INPUT_BYTES // (1024 * 1024)
    return (
        f"refused unread: {size:,} bytes would take the desired state over {limit} MiB in all "
        f"(the most one run reads, in all its files; see docs/safety.md)"
    )


def _encoding_problem(name: str, raw: bytes, offset: int) -> Problem:
    line_start = raw.rfind(b"\n", 0, offset) + 1
    line = raw.count(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", errors="replace")) + 1
    message = f"the file is not UTF-8 text: byte 0x{raw[offset]:02x} cannot be decoded"
    return Problem(Location(name, line, column), message)
