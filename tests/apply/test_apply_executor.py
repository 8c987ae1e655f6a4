"""The executor against the sandbox over real HTTP: order, refusals, replaces, the webhook."""

from __future__ import annotations

from dataclasses import replace

from reconciler.apply import Executor, Outcome
from reconciler.plan import Inactivate, Invite, Plan, PlanOptions, diff
from reconciler.plan.refresh import refresh
from reconciler.sandbox import SandboxServer
from reconciler.service.models import WorkerStatus
from tests.apply.support import (
    INVITE_PATH,
    apply_once,
    assert_ledger_matches,
    invitation,
    seed_workers,
    wanting,
    worker,
)
from tests.plan.factories import agreement, desired_state, desired_webhook
from tests.sandbox.support import Controls
from tests.service.helpers import client_for

STATUS_PATH = "/contract-server/v2/general/worker/agreements/"


def test_a_plan_is_applied_inactivations_first_then_batches_then_the_webhook(
    sandbox: SandboxServer, controls: Controls
) -> None:
    with client_for(sandbox, parallelism=4) as client:
        seed_workers(client, range(1, 6))
        since = controls.last_seq()
        webhook = desired_webhook(headers=(("X-Token", "s3cret-value"),))
        plan, ledger = apply_once(client, wanting(range(3, 254), webhook=webhook))
        assert plan.summary.invite == 248 and plan.summary.inactivate == 2
        assert ledger.complete, ledger.entries
        writes = [e for e in controls.requests(since) if e["method"] == "POST"]
        kinds = ["status" if e["path"].startswith(STATUS_PATH) else e["path"] for e in writes]
        assert kinds == ["status"] * 2 + [INVITE_PATH] * 3 + ["/webhooks/clients"]
        live = client.list_workers()
        assert_ledger_matches(ledger, live)
        assert sum(w.status.is_open for w in live) == 251
        stored = client.get_webhook()
        assert stored is not None and stored.headers[0].value.reveal() == "s3cret-value"
        # Applying again finds nothing to do.
        plan, ledger = apply_once(client, wanting(range(3, 254), webhook=webhook))
        assert not plan.has_changes and ledger.complete


def test_a_replace_inactivates_before_it_invites(
    sandbox: SandboxServer, controls: Controls
) -> None:
    with client_for(sandbox) as client:
        seed_workers(client, [1])
        old = client.list_workers()[0]
        desired = desired_state(worker(1, job_title="CTO"))
        plan = diff(desired, refresh(client), PlanOptions(replaces=frozenset({"ENG-00001"})))
        since = controls.last_seq()
        ledger = Executor(client).apply(plan)
        assert [(e.action, e.outcome) for e in ledger.entries] == [("replace", Outcome.APPLIED)]
        assert ledger.entries[0].detail == "inactivated, then invited again"
        writes = [e["path"] for e in controls.requests(since) if e["method"] == "POST"]
        assert writes == [f"{STATUS_PATH}{old.agreement_id}/status", INVITE_PATH]
        statuses = {w.agreement_id: w.status for w in client.list_workers()}
        assert statuses[old.agreement_id] == WorkerStatus.INACTIVATED
        assert ledger.entries[0].agreement_id not in (None, old.agreement_id)


def test_a_batch_refused_for_some_items_is_sent_again_without_them(
    sandbox: SandboxServer, controls: Controls
) -> None:
    with client_for(sandbox) as client:
        plan = diff(wanting(range(1, 11)), refresh(client))
        # Between plan and apply someone else invites workers 4 and 7 by email.
        client.invite_workers([replace(invitation(n), external_id=None) for n in (4, 7)])
        since = controls.last_seq()
        ledger = Executor(client).apply(plan)
        outcomes = {e.address: (e.outcome, e.detail) for e in ledger.entries}
        for n in (4, 7):
            outcome, detail = outcomes[f'worker["ENG-{n:05d}"]']
            assert outcome is Outcome.FAILED
            assert detail and "open agreement" in detail, detail
        assert sum(o is Outcome.APPLIED for o, _ in outcomes.values()) == 8
        answers = [e["status"] for e in controls.requests(since) if e["path"] == INVITE_PATH]
        assert answers == [400, 200]
        assert not ledger.complete


def test_inactivation_already_done_applies_and_a_vanished_one_is_skipped(
    sandbox: SandboxServer, controls: Controls
) -> None:
    with client_for(sandbox) as client:
        seed_workers(client, [1])
        live = client.list_workers()[0]
        client.inactivate_agreement(live.agreement_id)
        plan = Plan(
            changes=(
                Inactivate("ENG-00001", live),
                Inactivate("ENG-00002", agreement(987654, "ENG-00002")),
                Invite(worker(3)),
            )
        )
        ledger = Executor(client).apply(plan)
        entries = ledger.entries
        assert (entries[0].outcome, entries[0].detail) == (
            Outcome.APPLIED,
            "inactive when confirmed by the service",
        )
        assert entries[1].outcome is Outcome.SKIPPED
        assert "agreement 987654 no longer exists" in (entries[1].detail or "")
        assert entries[2].outcome is Outcome.APPLIED
        assert not ledger.complete  # a skip is not an apply: exit 1, and the next plan is empty


def test_a_stop_before_the_start_sends_nothing(sandbox: SandboxServer, controls: Controls) -> None:
    with client_for(sandbox) as client:
        seed_workers(client, [1])
        plan = diff(wanting([2], webhook=desired_webhook()), refresh(client))
        since = controls.last_seq()
        executor = Executor(client)
        executor.stop.set()
        ledger = executor.apply(plan)
        assert ledger.interrupted
        assert {e.outcome for e in ledger.entries} == {Outcome.SKIPPED}
        assert [e for e in controls.requests(since) if e["method"] == "POST"] == []
