"""Pages whose JSON SQLite writes (`sandbox/sqljson.py`) write only their own rows: the SQL
functions behind a field (a timestamp, an amount) are called once per row of the page, not
for every row a sorted query passes over before it skips to the page."""

from __future__ import annotations

import collections
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.sandbox import clients, payments, workers
from reconciler.sandbox.app import FUNCTIONS, SCHEMA
from reconciler.sandbox.paging import Paging
from reconciler.sandbox.store import Store
from reconciler.sandbox.workers import Invitation

ROWS = 450


def _counted(calls: collections.Counter[str]) -> dict[str, Callable[[Any], Any]]:
    def wrap(name: str, function: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def counted(value: Any) -> Any:
            calls[name] += 1
            return function(value)

        return counted

    return {name: wrap(name, function) for name, function in FUNCTIONS.items()}


@pytest.fixture
def account(tmp_path: Path) -> Iterator[tuple[Store, int, int, collections.Counter[str]]]:
    """A store holding one client with ROWS agreements and one paylist of ROWS payments."""
    calls: collections.Counter[str] = collections.Counter()
    store = Store(tmp_path / "sandbox.db", SCHEMA, _counted(calls))
    with store.write() as conn:
        client_id = clients.ensure_demo_client(conn)[0].client_id
        for n in range(ROWS):
            invitation = Invitation("Ada", "Lovelace", "Worker", f"w{n}@example.com", "GB")
            worker_id = workers.insert_agreement(conn, client_id, invitation, "ACTIVE", n)
        paylist_id = conn.execute(
            "INSERT INTO paylists (client_id, description, idempotence_key, content,"
            " created_ns, due_ns) VALUES (?, 'p', 'k', '{}', 0, 0)",
            (client_id,),
        ).lastrowid
        for n in range(ROWS):
            # Created in the opposite order of their ids: the date range's index is no help
            # for ORDER BY id, so SQLite sorts.
            conn.execute(
                "INSERT INTO payments (paylist_id, client_id, worker_id, description,"
                " amount_cents, worker_email, idempotence_key, status, created_ns, updated_ns)"
                " VALUES (?, ?, ?, ?, 105, 'w@example.com', ?, 'SUCCESS', ?, ?)",
                (paylist_id, client_id, worker_id, f"item {n}", f"k{n}", ROWS - n, ROWS - n),
            )
    calls.clear()
    yield store, client_id, int(paylist_id or 0), calls
    store.close()


@pytest.mark.parametrize("page", [0, 1, 2, 3])
def test_a_page_of_payments_writes_only_its_rows(
    account: tuple[Store, int, int, collections.Counter[str]], page: int
) -> None:
    store, client_id, paylist_id, calls = account
    paging = Paging(page, 200)
    expected = max(0, min(200, ROWS - paging.offset))
    with store.read() as conn:
        for read in (
            lambda: payments.range_page(conn, client_id, None, 10**18, paging),
            lambda: payments.range_page(conn, client_id, 1, 10**18, paging),
            lambda: payments.paylist_page(conn, paylist_id, paging),
        ):
            calls.clear()
            items, count, total = read()
            assert (count, total) == (expected, ROWS)
            listed = json.loads(items.text)
            assert [p["id"] for p in listed] == sorted(p["id"] for p in listed)
            assert len(listed) == expected
            assert calls == collections.Counter(
                {"sandbox_amount": expected, "sandbox_iso_us": 2 * expected}
            )


def test_a_page_of_workers_writes_only_its_rows(
    account: tuple[Store, int, int, collections.Counter[str]],
) -> None:
    store, client_id, _, calls = account
    with store.read() as conn:
        items, count, total = workers.list_page(conn, client_id, None, Paging(1, 200))
    assert (count, total) == (200, ROWS)
    assert len(json.loads(items.text)) == 200
    assert calls == collections.Counter({"sandbox_country_name": 200, "sandbox_iso_ms_offset": 200})
