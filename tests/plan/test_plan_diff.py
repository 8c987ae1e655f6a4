"""The decision table of the spec ("What a plan decides"), one row per case."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pytest

from reconciler.plan import (
    Inactivate,
    Invite,
    Plan,
    PlanOptions,
    Replace,
    WebhookCreate,
    WebhookUpdate,
    diff,
)
from reconciler.service.models import Worker
from tests.plan.factories import (
    T0,
    agreement,
    desired_state,
    desired_webhook,
    live_state,
    live_webhook,
    quickstart,
    want,
)

_KIND = {
    Invite: "invite",
    Inactivate: "inactivate",
    Replace: "replace",
    WebhookCreate: "webhook create",
    WebhookUpdate: "webhook update",
}


@dataclass
class Case:
    """One row: the file's workers, the live agreements, options, and what the plan must hold."""

    name: str
    file: list[Any]
    live: list[Worker]
    changes: dict[str, str] = field(default_factory=dict)
    drift: dict[str, list[str]] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    unmanaged: list[int] = field(default_factory=list)
    history: list[int] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    options: PlanOptions = field(default_factory=PlanOptions)
    prefix: str | None = "ENG-"
    prune: bool = True


def outcome(plan: Plan) -> dict[str, Any]:
    return {
        "changes": {change.address: _KIND[type(change)] for change in plan.changes},
        "drift": {d.address: [f.name for f in d.fields] for d in plan.drift},
        "conflicts": [c.address or c.email for c in plan.conflicts],
        "unmanaged": [u.agreement.agreement_id for u in plan.unmanaged],
        "history": [h.agreement.agreement_id for h in plan.history],
        "closed": [c.address for c in plan.closed],
    }


E1 = 'worker["ENG-001"]'
E2 = 'worker["ENG-002"]'

CASES = [
    # --- no open agreement -------------------------------------------------------------
    Case("absent from the account: invite", [want("ENG-001")], [], changes={E1: "invite"}),
    Case(
        "only an ENDED agreement: closed in the service, not invited again",
        [want("ENG-001")],
        [agreement(1, "ENG-001", "ENDED")],
        history=[1],
        closed=[E1],
    ),
    Case(
        "only INACTIVATED agreements: closed in the service, not invited again",
        [want("ENG-001")],
        [agreement(1, "ENG-001", "INACTIVATED"), agreement(2, "ENG-001", "INACTIVATED")],
        history=[1, 2],
        closed=[E1],
    ),
    Case(
        "closed, rehire: after every agreement was made: invite again (once)",
        [want("ENG-001", rehire=date(2026, 12, 1))],
        [agreement(1, "ENG-001", "INACTIVATED"), agreement(2, "ENG-001", "ENDED")],
        changes={E1: "invite"},
        history=[1, 2],
    ),
    Case(
        "closed, rehire: spent (an agreement made on or after that day): not invited",
        [want("ENG-001", rehire=T0.date())],
        [agreement(1, "ENG-001", "ENDED")],
        history=[1],
        closed=[E1],
    ),
    Case(
        "closed, rehire: a day ahead: not invited until that day (its agreement spends it)",
        [want("ENG-001", rehire=date(2026, 12, 1))],
        [agreement(1, "ENG-001", "ENDED")],
        options=PlanOptions(today=date(2026, 11, 30)),
        history=[1],
        closed=[E1],
    ),
    Case(
        "closed, --replace ID: invite again, no warning",
        [want("ENG-001")],
        [agreement(1, "ENG-001", "ENDED")],
        options=PlanOptions(replaces=frozenset({"ENG-001"})),
        changes={E1: "invite"},
        history=[1],
    ),
    Case(
        "ended: and no open agreement: nothing, never invited",
        [want("ENG-001", ended=date(2026, 11, 30)), want("ENG-002", ended=date(2026, 11, 30))],
        [agreement(1, "ENG-001", "ENDED")],
        history=[1],
    ),
    Case(
        "ended: with an open agreement: inactivate (offboarding from git)",
        [want("ENG-001", ended=date(2026, 11, 30))],
        [agreement(1, "ENG-001", "ACTIVE")],
        changes={E1: "inactivate"},
    ),
    Case(
        "closed and not in the file: history only",
        [],
        [agreement(7, "ENG-007", "ENDED")],
        history=[7],
    ),
    # --- one open agreement, same fields -----------------------------------------------
    Case("ACTIVE, same fields: nothing", [want("ENG-001")], [agreement(1, "ENG-001")]),
    Case(
        "INVITATION_SENT counts as present; null names and country are not drift",
        [want("ENG-001")],
        [agreement(1, "ENG-001", "INVITATION_SENT")],
    ),
    Case(
        "VERIFICATION_PENDING counts as present",
        [want("ENG-001")],
        [agreement(1, "ENG-001", "VERIFICATION_PENDING")],
    ),
    Case(
        "email compared ignoring case",
        [want("ENG-001", worker_email="Ada.Lovelace@Example.com")],
        [agreement(1, "ENG-001", email="ada.lovelace@example.COM")],
    ),
    Case(
        "country compared by ISO code, not by the name the service answers",
        [want("ENG-001", country_iso="FR")],
        [agreement(1, "ENG-001", country="France", country_iso="FR")],
    ),
    Case(
        "typeOfWorker and workerEmailText are never compared",
        [want("ENG-001", worker_email_text="Welcome!")],
        [agreement(1, "ENG-001")],
    ),
    Case(
        "a Business is recognised by its legal name",
        [want("ENG-001", type_of_worker="Business", worker_legal_name="Acme Ltd")],
        [agreement(1, "ENG-001", legal_name="Acme Ltd")],
    ),
    Case(
        "a missing job title and an empty one are the same",
        [want("ENG-001", job_title=None)],
        [agreement(1, "ENG-001", job_title="")],
    ),
    # --- one open agreement, fields differ: drift ----------------------------------------
    Case(
        "job title differs: drift",
        [want("ENG-001", job_title="Staff Engineer")],
        [agreement(1, "ENG-001")],
        drift={E1: ["jobTitle"]},
    ),
    Case(
        "names and country differ once shown: drift",
        [want("ENG-001", worker_name="Grace", worker_surname="Hopper", country_iso="US")],
        [agreement(1, "ENG-001")],
        drift={E1: ["workerName", "workerSurname", "countryIso"]},
    ),
    Case(
        "email differs: drift",
        [want("ENG-001", worker_email="new@example.com")],
        [agreement(1, "ENG-001")],
        drift={E1: ["workerEmail"]},
    ),
    Case(
        "job title differs on a pending invitation: drift",
        [want("ENG-001", job_title="Staff Engineer")],
        [agreement(1, "ENG-001", "INVITATION_SENT")],
        drift={E1: ["jobTitle"]},
    ),
    Case(
        "a country name that maps to no code differs",
        [want("ENG-001")],
        [agreement(1, "ENG-001", country="Atlantis", country_iso=None)],
        drift={E1: ["countryIso"]},
    ),
    Case(
        "the file's Business is a plain worker in the account: drift on the legal name",
        [want("ENG-001", type_of_worker="Business", worker_legal_name="Acme Ltd")],
        [agreement(1, "ENG-001")],
        drift={E1: ["workerLegalName"]},
    ),
    Case(
        "the file's worker is a Business in the account",
        [want("ENG-001")],
        [agreement(1, "ENG-001", legal_name="Acme Ltd")],
        drift={E1: ["workerLegalName"]},
    ),
    Case(
        "every field differs: each named once, in the order a plan shows them",
        [want("ENG-001", job_title="Boss", country_iso="US", worker_legal_name="Acme Ltd")],
        [agreement(1, "ENG-001", first_name="Ada B", last_name="King", email="other@example.com")],
        drift={
            E1: [
                "workerName",
                "workerSurname",
                "workerLegalName",
                "workerEmail",
                "countryIso",
                "jobTitle",
            ]
        },
    ),
    Case(
        "an empty job title and none are the same",
        [want("ENG-001", job_title="")],
        [agreement(1, "ENG-001", job_title=None)],
    ),
    Case(
        "a country the service names but the reconciler cannot map is compared as named",
        [want("ENG-001", country_iso="GB")],
        [agreement(1, "ENG-001", country="Atlantis", country_iso=None)],
        drift={E1: ["countryIso"]},
    ),
    Case(
        "ignoreChanges fields are never drift",
        [want("ENG-001", job_title="Boss", country_iso="US", ignore_changes={"jobTitle"})],
        [agreement(1, "ENG-001")],
        drift={E1: ["countryIso"]},
    ),
    # --- several open agreements ---------------------------------------------------------
    Case(
        "several open agreements, worker present: conflict, no invitation",
        [want("ENG-001")],
        [agreement(1, "ENG-001"), agreement(2, "ENG-001", "INVITATION_SENT")],
        conflicts=[E1],
    ),
    Case(
        "several open agreements, worker absent: conflict, no inactivation",
        [],
        [agreement(1, "ENG-001"), agreement(2, "ENG-001", "VERIFICATION_PENDING")],
        conflicts=[E1],
    ),
    # --- absent from the file --------------------------------------------------------------
    Case(
        "owned, absent, prune on: inactivate",
        [],
        [agreement(1, "ENG-001", "INVITATION_SENT")],
        changes={E1: "inactivate"},
    ),
    Case(
        "owned, absent, prune off: kept, with a warning",
        [],
        [agreement(1, "ENG-001")],
        prune=False,
        warnings=["1 owned open agreement is not in the file and is kept because policy.prune"],
    ),
    Case(
        "owned, two absent, prune off: kept, counted in the plural",
        [],
        [agreement(1, "ENG-001"), agreement(2, "ENG-002")],
        prune=False,
        warnings=["2 owned open agreements are not in the file and are kept because"],
    ),
    # --- not owned -------------------------------------------------------------------------
    Case(
        "open agreement with a null externalId: unmanaged",
        [],
        [agreement(8, None), agreement(9, None, "ENDED")],
        unmanaged=[8],
    ),
    Case(
        "open agreement outside the scope: unmanaged, never inactivated",
        [],
        [agreement(9, "OPS-001"), agreement(10, "OPS-002", "INACTIVATED")],
        unmanaged=[9],
    ),
    Case(
        "no scope prefix: every non-null externalId is owned",
        [],
        [agreement(9, "OPS-001"), agreement(8, None)],
        prefix=None,
        changes={'worker["OPS-001"]': "inactivate"},
        unmanaged=[8],
    ),
    # --- the email is taken ----------------------------------------------------------------
    Case(
        "email held by an open agreement with a null externalId: conflict, no invitation",
        [want("ENG-001", worker_email="fred@example.com")],
        [agreement(8, None, email="Fred@Example.com")],
        conflicts=[E1],
        unmanaged=[8],
    ),
    Case(
        "email held under another externalId: conflict, no invitation",
        [want("ENG-001", worker_email="shared@example.com")],
        [agreement(9, "OPS-001", email="shared@example.com")],
        conflicts=[E1],
        unmanaged=[9],
    ),
    Case(
        "email held only by a closed agreement: invite",
        [want("ENG-001", worker_email="shared@example.com")],
        [agreement(9, None, "ENDED", email="shared@example.com")],
        changes={E1: "invite"},
    ),
    # --- options ---------------------------------------------------------------------------
    Case(
        "--target keeps only the named workers",
        [want("ENG-001"), want("ENG-002", job_title="X")],
        [agreement(2, "ENG-002"), agreement(3, "ENG-003")],
        options=PlanOptions(targets=frozenset({"ENG-001"})),
        changes={E1: "invite"},
    ),
    Case(
        "--exclude leaves the named workers out",
        [want("ENG-001"), want("ENG-002", job_title="X")],
        [agreement(2, "ENG-002"), agreement(3, "ENG-003")],
        options=PlanOptions(excludes=frozenset({"ENG-001", "ENG-003"})),
        drift={E2: ["jobTitle"]},
    ),
    Case(
        "--target naming nothing known: a warning",
        [want("ENG-001")],
        [],
        options=PlanOptions(targets=frozenset({"ENG-404"})),
        warnings=["--target ENG-404: no such worker"],
    ),
    Case(
        "--replace turns drift into inactivate + invite",
        [want("ENG-001", job_title="Staff Engineer")],
        [agreement(1, "ENG-001")],
        options=PlanOptions(replaces=frozenset({"ENG-001"})),
        changes={E1: "replace"},
    ),
    Case(
        "--replace on a worker in sync replaces it anyway, as Terraform does",
        [want("ENG-001")],
        [agreement(1, "ENG-001")],
        options=PlanOptions(replaces=frozenset({"ENG-001"})),
        changes={E1: "replace"},
    ),
    Case(
        "--replace whose new email another agreement holds: conflict",
        [want("ENG-001", worker_email="fred@example.com")],
        [agreement(1, "ENG-001"), agreement(8, None, email="fred@example.com")],
        options=PlanOptions(replaces=frozenset({"ENG-001"})),
        conflicts=[E1],
        unmanaged=[8],
    ),
    Case(
        "--replace of a worker with no open agreement: a warning, the invitation stays",
        [want("ENG-001")],
        [],
        options=PlanOptions(replaces=frozenset({"ENG-001"})),
        changes={E1: "invite"},
        warnings=["--replace ENG-001: nothing to replace"],
    ),
    # --- the service's future -------------------------------------------------------------
    Case(
        "a status the reconciler does not know is treated as closed, with a warning",
        [want("ENG-001")],
        [agreement(1, "ENG-001", "SUSPENDED")],
        history=[1],
        closed=[E1],
        warnings=["status the reconciler does not know (SUSPENDED)"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_decision_table(case: Case) -> None:
    desired = desired_state(*case.file, prefix=case.prefix, prune=case.prune)
    plan = diff(desired, live_state(*case.live), case.options)
    assert outcome(plan) == {
        "changes": case.changes,
        "drift": case.drift,
        "conflicts": case.conflicts,
        "unmanaged": case.unmanaged,
        "history": case.history,
        "closed": case.closed,
    }
    assert len(plan.warnings) == len(case.warnings)
    for expected, warning in zip(case.warnings, plan.warnings, strict=True):
        assert expected in warning


def test_the_quickstart_account_shows_one_of_each() -> None:
    plan = diff(*quickstart())
    assert outcome(plan) == {
        "changes": {'worker["ENG-004"]': "invite", 'worker["ENG-006"]': "inactivate"}
        | {"webhook": "webhook update"},
        "drift": {E2: ["jobTitle"]},
        "conflicts": [],
        "unmanaged": [8, 9],
        "history": [7],
        "closed": [],
    }
    assert plan.summary.line() == (
        "1 to invite, 1 to inactivate, 1 to update, 1 drifted, 2 unmanaged"
    )
    assert plan.summary.invitation_emails == 1


def test_drift_carries_the_values_as_written_and_as_live() -> None:
    desired = desired_state(want("ENG-001", worker_email="ENG-001@Example.com", job_title="Boss"))
    (drift,) = diff(desired, live_state(agreement(1, "ENG-001"))).drift
    (field_change,) = drift.fields
    assert (field_change.name, field_change.before, field_change.after) == (
        "jobTitle",
        "Engineer",
        "Boss",
    )


def test_changes_come_in_address_order_with_the_webhook_last() -> None:
    desired = desired_state(
        want("ENG-003"), want("ENG-001"), webhook=desired_webhook(events=("PAYMENT",))
    )
    plan = diff(desired, live_state(agreement(2, "ENG-002")))
    assert [c.address for c in plan.changes] == [
        'worker["ENG-001"]',
        'worker["ENG-002"]',
        'worker["ENG-003"]',
        "webhook",
    ]


# --- the webhook ------------------------------------------------------------------------------

HEADERS = (("X-Token", "s3cret-value"),)

WEBHOOK_CASES = [
    ("none live: create", desired_webhook(), None, "webhook create", []),
    ("same: nothing", desired_webhook(), live_webhook(), None, []),
    (
        "event types in another order: nothing",
        desired_webhook(events=("PAYMENT", "KYC")),
        live_webhook(events=("KYC", "PAYMENT")),
        None,
        [],
    ),
    (
        "url differs",
        desired_webhook(url="https://new.example.com/h"),
        live_webhook(),
        "webhook update",
        ["url"],
    ),
    (
        "enabled differs",
        desired_webhook(),
        live_webhook(enabled=False),
        "webhook update",
        ["enabled"],
    ),
    (
        "event type set differs",
        desired_webhook(events=("KYC", "PAYMENT")),
        live_webhook(),
        "webhook update",
        ["event_types"],
    ),
    (
        "header names compared ignoring case",
        desired_webhook(headers=(("x-token", "s3cret-value"),)),
        live_webhook(headers=HEADERS),
        None,
        [],
    ),
    (
        "header value differs",
        desired_webhook(headers=(("X-Token", "other-value"),)),
        live_webhook(headers=HEADERS),
        "webhook update",
        ['headers["X-Token"]'],
    ),
    (
        "header added and header removed",
        desired_webhook(headers=(("X-New", "v-1234"),)),
        live_webhook(headers=HEADERS),
        "webhook update",
        ['headers["X-New"]', 'headers["X-Token"]'],
    ),
]


@pytest.mark.parametrize(
    ("name", "wanted", "live", "kind", "fields"), WEBHOOK_CASES, ids=[c[0] for c in WEBHOOK_CASES]
)
def test_webhook(name: str, wanted: Any, live: Any, kind: str | None, fields: list[str]) -> None:
    plan = diff(desired_state(webhook=wanted), live_state(webhook=live))
    kinds = [_KIND[type(change)] for change in plan.changes]
    assert kinds == ([kind] if kind else [])
    if kind:
        (change,) = plan.changes
        assert [f.name for f in change.fields] == fields
        assert all(f.sensitive for f in change.fields if f.name.startswith("headers"))


def test_a_webhook_absent_from_the_file_is_not_managed() -> None:
    plan = diff(desired_state(), live_state(webhook=live_webhook(events=("PAYMENT",))))
    assert plan.changes == ()


def test_target_leaves_the_webhook_out_unless_named() -> None:
    desired = desired_state(want("ENG-001"), webhook=desired_webhook())
    only_worker = diff(desired, live_state(), PlanOptions(targets=frozenset({"ENG-001"})))
    only_webhook = diff(desired, live_state(), PlanOptions(targets=frozenset({"webhook"})))
    assert [c.address for c in only_worker.changes] == [E1]
    assert [c.address for c in only_webhook.changes] == ["webhook"]
