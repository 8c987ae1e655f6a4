"""SQLite persistence: one connection, one lock, one transaction per request.

Every request runs inside `read()` or `write()`. Writes start with `BEGIN IMMEDIATE` under a
process-wide lock, so two requests never interleave and a failure anywhere rolls the whole
request back: a crash never leaves half a batch. Files use WAL; tests use `:memory:`.

Each resource module owns its tables (a `SCHEMA` tuple of statements); `app.SCHEMA` gathers
them, so a new resource adds its own module without touching this one.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

MEMORY = ":memory:"

_META_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS sandbox_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )
    """,
)


_SQLITE_HEADER = b"SQLite format 3\x00"


def is_sandbox_database(path: str | Path) -> bool:
    """Whether `path` is a sandbox's database (or an empty file): the only file that
    `--sandbox-reset` may delete. Read without writing, and never created."""
    path = Path(path)
    try:
        if path.is_symlink() or not path.is_file():
            return False
        # Read, not stat: a file of /proc says 0 bytes and holds text.
        with path.open("rb") as stream:
            header = stream.read(len(_SQLITE_HEADER))
        if not header:
            return True
        if header != _SQLITE_HEADER:
            return False
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sandbox_meta'"
            ).fetchone()
        finally:
            conn.close()
    except (OSError, sqlite3.Error):
        return False
    return found is not None


_SERIALS = itertools.count(1)


class Store:
    """The sandbox's database."""

    def __init__(
        self,
        path: str | Path,
        schema: Sequence[str],
        functions: Mapping[str, Callable[[Any], str | int | float | None]] | None = None,
    ) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        #: This store among all of the process (ids of dead objects are reused), and its write
        #: version, bumped by every write transaction that changed a row: a cache of reads keyed
        #: by both is good.
        self.serial = next(_SERIALS)
        self.version = 0
        if self.path != MEMORY and not self.path.startswith("file:"):
            # Owner-only from its first byte: after an apply it holds real header values.
            # (SQLite gives its -wal and -shm files the database file's mode.)
            try:
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                pass
            except OSError as error:  # said as SQLite would say it, by the caller
                raise sqlite3.OperationalError(
                    f"unable to open database file ({error.strerror})"
                ) from None
        # isolation_level=None: transactions are ours (BEGIN/COMMIT), never implicit.
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        for name, function in (functions or {}).items():  # SQL functions of one argument
            self._conn.create_function(name, 1, function, deterministic=True)
        self._conn.execute("PRAGMA foreign_keys = ON")
        if self.path != MEMORY:
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
        with self.write() as conn:
            for statement in (*_META_SCHEMA, *schema):
                conn.execute(statement)

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed when the block ends, rolled back if it raises."""
        with self._lock:
            changes = self._conn.total_changes
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            finally:
                # What was read before may be stale now, unless no row changed: the background
                # worker's idle look every second must not throw away a refresh's cached ids.
                if self._conn.total_changes != changes:
                    self.version += 1
            self._conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot (a count and a page agree)."""
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def empty_tables(conn: sqlite3.Connection) -> None:
    """Delete every row of every table but `sandbox_meta`, and restart the id sequences."""
    tables = [
        row["name"]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    conn.execute("PRAGMA defer_foreign_keys = ON")
    for table in tables:
        if table != "sandbox_meta":
            conn.execute(f'DELETE FROM "{table}"')
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").fetchone():
        conn.execute("DELETE FROM sqlite_sequence")


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM sandbox_meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row["value"])


def meta_once(conn: sqlite3.Connection, key: str, make: Callable[[], str]) -> str:
    """The value kept under `key`, made (and kept) the first time it is asked for."""
    value = get_meta(conn, key)
    if value is None:
        value = make()
        set_meta(conn, key, value)
    return value


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO sandbox_meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
