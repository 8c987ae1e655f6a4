"""The outcome of a payrun is always known: a paylist whose answer was lost is read back by key.

Over real HTTP against the sandbox, whose faults drop the answer of every POST after the work
is done: the paylist exists, the client's retries run out, and the ledger must say what the
service holds (paid), never "failed". When the read-back fails too, the ledger says the outcome
is unknown and how to find it, and the exit status is not 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import httpx

from reconciler.apply import Ledger, Outcome
from reconciler.apply.paying import PayService, pay
from reconciler.desired.model import PayrunPayment
from reconciler.plan.model import Plan
from reconciler.plan.payruns import TO_PAY, PayrunDecision, paylist_key
from reconciler.sandbox import SandboxServer
from reconciler.service.config import RetryPolicy
from reconciler.service.models import Paylist, PaylistSummary, Payment, PaymentItem
from tests.apply.support import NOVEMBER, QUICKSTART, cli
from tests.sandbox.support import Controls
from tests.service.helpers import client_for

FEW_RETRY_POLICY = RetryPolicy(attempts=2, total_seconds=5, wait_initial=0.01, wait_max=0.05)
FEW_RETRIES = {"RECONCILER_RETRY_ATTEMPTS": "2", "RECONCILER_RETRY_SECONDS": "5"}


def _paylists(server: SandboxServer) -> list[dict[str, object]]:
    headers = {"Authorization": f"Bearer {server.token}"}
    answer = httpx.get(f"{server.base_url}/payment-agent/paylists", headers=headers)
    return list(answer.json()["content"])


def test_a_paylist_whose_answer_was_lost_is_read_back_and_reported_paid(
    demo: SandboxServer, tmp_path: Path
) -> None:
    workers = tmp_path / "workers.yaml"
    workers.write_text(QUICKSTART.read_text())
    assert cli("apply", str(workers), "--auto-approve", server=demo).returncode == 0
    path = tmp_path / "desired.yaml"
    path.write_text(QUICKSTART.read_text() + NOVEMBER)
    Controls(demo.base_url).set_faults(drop_rate=1, methods=["POST"])
    applied = cli(
        "apply", str(path), "--auto-approve", "--format", "json", server=demo, **FEW_RETRIES
    )
    Controls(demo.base_url).set_faults()
    ledger = json.loads(applied.stdout)
    rows = [row for row in ledger["changes"] if row["action"] == "pay"]
    assert [row["outcome"] for row in rows] == ["applied", "applied"], applied.stdout
    assert applied.returncode == 0, applied.stderr
    (paylist,) = _paylists(demo)  # created once, though no answer came back
    assert paylist["total"] == 1750.0


class _LosesEverythingAfterCreating:
    """The real client, but once the paylist is created the service stops answering at all."""

    def __init__(self, server: SandboxServer, service: PayService) -> None:
        self.controls = Controls(server.base_url)
        self.service = service

    def create_paylist(
        self,
        description: str,
        payments: Sequence[PaymentItem],
        *,
        idempotence_key: str | None = None,
        client_id: int | None = None,
    ) -> Paylist:
        self.controls.set_faults(drop_rate=1, methods=["POST"])
        try:
            return self.service.create_paylist(
                description, payments, idempotence_key=idempotence_key
            )
        finally:
            self.controls.set_faults(drop_rate=1)

    def list_paylist_payments(self, paylist_id: int) -> list[Payment]:
        return self.service.list_paylist_payments(paylist_id)

    def iter_paylists(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> Iterator[PaylistSummary]:
        return self.service.iter_paylists(since, until)

    def get_paylist(self, paylist_id: int) -> Paylist:
        return self.service.get_paylist(paylist_id)

    def iter_payments(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> Iterator[Payment]:
        return self.service.iter_payments(since, until)


def test_when_the_read_back_fails_too_the_outcome_is_unknown_never_failed(
    demo: SandboxServer,
) -> None:
    payments = (PayrunPayment("ada@example.com", Decimal("10.00"), "x"),)
    key = paylist_key("lost")
    decision = PayrunDecision("lost", None, key, "Lost", payments, TO_PAY)
    ledger = Ledger(())
    with client_for(demo, retry=FEW_RETRY_POLICY) as client:
        try:
            pay(_LosesEverythingAfterCreating(demo, client), Plan(payruns=(decision,)), ledger)
        finally:
            Controls(demo.base_url).set_faults()
    (entry,) = ledger.entries
    assert entry.outcome is Outcome.SKIPPED
    assert entry.detail is not None and entry.detail.startswith("unknown")
    assert "run `reconciler plan` to see" in entry.detail
    assert not ledger.complete  # the exit status is 1: nothing says it was paid
    assert len(_paylists(demo)) == 1  # and the service does hold it
