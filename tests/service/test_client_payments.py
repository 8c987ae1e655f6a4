"""Paylists, payments and the wallet against the sandbox, over real HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from reconciler.service.errors import ClientIdUnknown, Conflict, InvalidRequest
from reconciler.service.models import (
    JournalOperation,
    JournalReason,
    PaymentItem,
    PaymentStatus,
)
from tests.service.helpers import client_for, control, invitation, last_seq, request_log

KEY = "0123456789abcdef0123456789abcdef"


def _active_workers(sandbox: Any, count: int) -> list[str]:
    with client_for(sandbox) as client:
        results = client.invite_workers([invitation(n) for n in range(1, count + 1)])
    for result in results:
        control(sandbox, f"agreements/{result.agreement_id}/status", {"status": "ACTIVE"})
    return [result.worker_email for result in results]


def test_a_paylist_is_created_once_processed_and_read_back(sandbox: Any) -> None:
    ada, grace = _active_workers(sandbox, 2)
    items = [
        PaymentItem("March invoice", Decimal("120.50"), ada),
        PaymentItem("March invoice", Decimal("0.10"), grace),
    ]
    with client_for(sandbox) as client:
        paylist = client.create_paylist("March", items, idempotence_key=KEY)
        again = client.create_paylist("March", items, idempotence_key=KEY)
        control(sandbox, "process")
        payments = client.list_paylist_payments(paylist.id)
    assert again == paylist
    assert (paylist.description, paylist.idempotence_key, paylist.client_id) == (
        "March",
        KEY,
        sandbox.client_id,
    )
    assert paylist.created_at is not None and paylist.created_at.tzinfo is not None
    assert [(p.worker_email, p.amount, p.status, p.cause) for p in payments] == [
        (ada, Decimal("120.50"), PaymentStatus.SUCCESS, None),
        (grace, Decimal("0.10"), PaymentStatus.SUCCESS, None),
    ]
    assert all(p.paylist_id == paylist.id and p.created_at is not None for p in payments)


def test_a_reused_key_with_other_content_is_a_conflict(sandbox: Any) -> None:
    [ada] = _active_workers(sandbox, 1)
    with client_for(sandbox) as client:
        client.create_paylist("March", [PaymentItem("a", Decimal(1), ada)], idempotence_key=KEY)
        with pytest.raises(Conflict) as caught:
            client.create_paylist("March", [PaymentItem("b", Decimal(2), ada)], idempotence_key=KEY)
    assert caught.value.status == 409


def test_invalid_payments_are_named_by_index(sandbox: Any) -> None:
    [ada] = _active_workers(sandbox, 1)
    with client_for(sandbox) as client, pytest.raises(InvalidRequest) as caught:
        client.create_paylist(
            "March",
            [PaymentItem("ok", Decimal(1), ada), PaymentItem("who", Decimal(1), "no@example.com")],
        )
    assert [item.index for item in caught.value.item_errors] == [1]


def test_paylist_creation_is_retried_and_lands_once(sandbox: Any) -> None:
    [ada] = _active_workers(sandbox, 1)
    since = last_seq(sandbox)
    # With this seed the first answer is dropped (after the paylist was made) and the second
    # gets through: the retry must find the same paylist by its key, not make another.
    control(sandbox, "faults", {"drop_rate": 0.7, "seed": 9})
    with client_for(sandbox) as client:
        try:
            paylist = client.create_paylist("April", [PaymentItem("x", Decimal("5.00"), ada)])
        finally:
            control(sandbox, "faults", {})
        control(sandbox, "process")
        payments = client.list_payments()
    posts = [e for e in request_log(sandbox, since) if e["path"] == "/payment-agent/paylists"]
    assert [entry["dropped"] for entry in posts] == [True, False]
    assert [p.paylist_id for p in payments] == [paylist.id]


def test_wallet_journal_and_date_range(sandbox: Any) -> None:
    ada, grace = _active_workers(sandbox, 2)
    with client_for(sandbox) as client:
        before = client.get_wallet(sandbox.client_id)
        control(sandbox, f"clients/{sandbox.client_id}/top-up", {"amount": 50})
        client.create_paylist(
            "May",
            [PaymentItem("May", Decimal("10.25"), ada), PaymentItem("May", Decimal("4.75"), grace)],
        )
        control(sandbox, "process")
        after = client.get_wallet()  # the id comes from the settings: the sandbox's demo client
        journal = client.list_transactions()
        now = datetime.now(UTC)
        in_range = client.list_payments(since=now - timedelta(hours=1), until=now)
        none_yet = client.list_payments(until=now - timedelta(hours=1))
    assert before.client_id == sandbox.client_id and before.enabled
    assert after.balance == before.balance + Decimal(50) - Decimal("15.00")
    assert isinstance(after.over_draft_limit, Decimal)
    assert [(e.operation, e.reason, e.amount) for e in journal] == [
        (JournalOperation.DEPOSIT, JournalReason.TOP_UP, Decimal(50)),
        (JournalOperation.WITHDRAWAL, JournalReason.PAYMENT, Decimal("-10.25")),
        (JournalOperation.WITHDRAWAL, JournalReason.PAYMENT, Decimal("-4.75")),
    ]
    assert journal[1].payment_purpose == "May" and journal[1].payment_order_id
    assert sorted(p.amount for p in in_range) == [Decimal("4.75"), Decimal("10.25")]
    assert none_yet == []


def test_a_payment_the_wallet_cannot_cover_fails_with_its_cause(sandbox: Any) -> None:
    [ada] = _active_workers(sandbox, 1)
    with client_for(sandbox) as client:
        balance = client.get_wallet(sandbox.client_id).balance
        paylist = client.create_paylist("Big", [PaymentItem("big", balance + 1, ada)])
        control(sandbox, "process")
        [payment] = client.list_paylist_payments(paylist.id)
    assert (payment.status, payment.cause) == (PaymentStatus.FAILED, "INSUFFICIENT_FUNDS")


def test_the_client_id_is_found_from_the_account_or_asked_for(sandbox: Any) -> None:
    with client_for(sandbox, client_id=None) as client, pytest.raises(ClientIdUnknown) as caught:
        client.get_wallet()
    assert "--client-id" in str(caught.value)
    control(sandbox, f"clients/{sandbox.client_id}/top-up", {"amount": 1})
    with client_for(sandbox, client_id=None) as client:
        assert client.get_wallet().client_id == sandbox.client_id  # from the journal
    with client_for(sandbox, client_id=None) as client:
        client.set_webhook("https://hooks.example.com/x", [], ["KYC"])
        assert client.client_id() == sandbox.client_id  # from the webhook


def test_the_journal_since_a_moment_reads_a_few_pages_not_the_history(sandbox: Any) -> None:
    for amount in range(1, 121):
        control(sandbox, f"clients/{sandbox.client_id}/top-up", {"amount": amount})
    with client_for(sandbox, page_size=5) as client:
        client.list_workers()  # a first walk learns how the service numbers its pages
        every = client.list_transactions()
        assert len(every) == 120
        for index in (0, 57, 119):
            since = every[index].created_at
            assert since is not None
            start = last_seq(sandbox)
            found = list(client.iter_transactions_since(since))
            assert found == [e for e in every if e.created_at and e.created_at >= since]
            pages = [e for e in request_log(sandbox, start) if "transactions" in e["path"]]
            # The pages holding the window, about two probes per doubling of the history (the
            # whole journal is 24 pages of 5: reading it all costs 25 requests), and the pages
            # asked at once past its end (the journal does not say where it ends).
            ahead = client.config.parallelism
            assert len(pages) <= (120 - index) // 5 + 1 + 9 + ahead, (index, len(pages))
        later = datetime.now(UTC) + timedelta(seconds=1)
        assert list(client.iter_transactions_since(later)) == []
    # A client that has walked nothing yet (drift reads the journal beside the workers' first
    # page) learns the numbering from the journal's opening, not by reading all of it.
    with client_for(sandbox, page_size=5) as fresh:
        start = last_seq(sandbox)
        assert list(fresh.iter_transactions_since(every[-1].created_at)) == every[-1:]
        pages = [e for e in request_log(sandbox, start) if "transactions" in e["path"]]
        assert len(pages) <= 2 + 1 + 9 + fresh.config.parallelism, len(pages)
