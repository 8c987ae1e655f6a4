"""Reading a file the reconciler wrote itself (a saved plan, an apply's record): a regular file.

Opened non-blocking and checked on the open descriptor, so a FIFO, a socket or a device where
the file should be (or a file swapped for one after a look) is refused at once, never read
forever; and read up to a bound, so a file that grows while it is read is refused too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

#: What a path is when it is no regular file, as an error says it.
KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


class NotRegular(OSError):
    """The path is something else than a regular file; `kind` says what."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"not a regular file but {kind}")
        self.kind = kind
        self.strerror = str(self)


class TooLarge(OSError):
    """The file holds more than the bytes asked for."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size:,} bytes, more than the {limit:,} it may hold")
        self.strerror = str(self)


def open_regular(path: Path) -> BinaryIO:
    """`path` (a symbolic link followed) opened for reading, if it is a regular file; else
    `NotRegular` (an `OSError`), at once."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        kind = stat.S_IFMT(os.fstat(descriptor).st_mode)
        if kind != stat.S_IFREG:
            raise NotRegular(KINDS.get(kind, "a special file"))
        os.set_blocking(descriptor, True)
    except OSError:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "rb")


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them (`TooLarge` beyond)."""
    with open_regular(path) as stream:
        size = os.fstat(stream.fileno()).st_size
        if size > limit:
            raise TooLarge(size, limit)
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(len(data), limit)
    return data
