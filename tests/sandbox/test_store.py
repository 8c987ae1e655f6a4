"""The sandbox store's write version: what a cache of reads (the keyset of the workers' list)
is keyed by."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.sandbox.store import Store

SCHEMA = ["CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT)"]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "sandbox.db", SCHEMA)


def test_a_write_that_changes_no_row_keeps_the_version(store: Store) -> None:
    """The background worker looks for due paylists every second in a write transaction; when
    it finds none, a refresh reading pages must keep its cached ids (re-reading them cost a
    page of 100,000 workers about 40 ms, once a second)."""
    before = store.version
    with store.write() as conn:
        conn.execute("UPDATE things SET name = 'x' WHERE id = 1")  # no such row
        conn.execute("SELECT COUNT(*) FROM things").fetchone()
    with store.read() as conn:
        conn.execute("SELECT * FROM things").fetchall()
    assert store.version == before


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO things (name) VALUES ('a')",
        "UPDATE things SET name = 'b'",
        "DELETE FROM things",
    ],
)
def test_a_write_that_changes_a_row_bumps_the_version(store: Store, statement: str) -> None:
    with store.write() as conn:
        conn.execute("INSERT INTO things (name) VALUES ('first')")
    before = store.version
    with store.write() as conn:
        conn.execute(statement)
    assert store.version > before


def test_a_write_rolled_back_after_a_change_still_bumps_the_version(store: Store) -> None:
    """Conservative: a cache is dropped for nothing rather than kept over a change."""
    before = store.version
    with pytest.raises(RuntimeError), store.write() as conn:
        conn.execute("INSERT INTO things (name) VALUES ('a')")
        raise RuntimeError("the handler failed")
    assert store.version > before
    with store.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM things").fetchone()[0] == 0
