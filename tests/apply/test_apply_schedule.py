"""The order of an apply, and its batches: tables of plans and the steps they become."""

from __future__ import annotations

import pytest

from reconciler.apply.schedule import MAX_BATCH, batches, invitation_for, schedule
from reconciler.plan import Inactivate, Invite, Plan, Replace, WebhookCreate
from reconciler.service.models import Invitation
from tests.plan.factories import agreement, desired_webhook, want

INVITE = Invite(want("ENG-010"))
INACTIVATE = Inactivate("ENG-020", agreement(20, "ENG-020"))
REPLACE = Replace(agreement(30, "ENG-030"), want("ENG-030", job_title="CTO"), ())
WEBHOOK = WebhookCreate(desired_webhook())


@pytest.mark.parametrize(
    ("changes", "inactivated", "invited", "webhook"),
    [
        pytest.param((), [], [], None, id="nothing"),
        pytest.param((INVITE,), [], [(0, False)], None, id="one invitation"),
        pytest.param((INACTIVATE,), [(0, 20, False)], [], None, id="one inactivation"),
        pytest.param(
            (REPLACE,), [(0, 30, True)], [(0, True)], None, id="a replace inactivates and invites"
        ),
        pytest.param((WEBHOOK,), [], [], 0, id="webhook only"),
        pytest.param(
            (INVITE, INACTIVATE, REPLACE, WEBHOOK),
            [(1, 20, False), (2, 30, True)],
            [(0, False), (2, True)],
            3,
            id="some of everything keeps plan order within each phase",
        ),
    ],
)
def test_schedule_splits_a_plan_into_phases(
    changes: tuple[object, ...],
    inactivated: list[tuple[int, int, bool]],
    invited: list[tuple[int, bool]],
    webhook: int | None,
) -> None:
    steps = schedule(Plan(changes=changes))  # type: ignore[arg-type]
    assert [(s.index, s.agreement_id, s.replace) for s in steps.inactivations] == inactivated
    assert [(s.index, s.replace) for s in steps.invitations] == invited
    assert (steps.webhook.index if steps.webhook else None) == webhook


@pytest.mark.parametrize(
    ("count", "size", "sizes"),
    [
        (0, 100, []),
        (1, 100, [1]),
        (100, 100, [100]),
        (101, 100, [100, 1]),
        (250, 100, [100, 100, 50]),
        (7, 3, [3, 3, 1]),
    ],
)
def test_batches_hold_at_most_the_size_in_order(count: int, size: int, sizes: list[int]) -> None:
    steps = schedule(Plan(changes=tuple(Invite(want(f"ENG-{n:04d}")) for n in range(count))))
    result = batches(steps.invitations, size)
    assert [len(batch) for batch in result] == sizes
    assert [step.index for batch in result for step in batch] == list(range(count))


@pytest.mark.parametrize("size", [0, MAX_BATCH + 1])
def test_a_batch_size_outside_the_contract_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match="1 to 100"):
        batches([], size)


def test_an_invitation_carries_every_field_the_file_gives() -> None:
    worker = want(
        "ENG-001",
        type_of_worker="Business",
        worker_legal_name="Acme Ltd",
        worker_email_text="Welcome",
        ignore_changes=frozenset({"jobTitle"}),
    )
    assert invitation_for(worker) == Invitation(
        worker_name="Ada",
        worker_surname="Lovelace",
        type_of_worker="Business",
        worker_email="eng-001@example.com",
        country_iso="GB",
        worker_legal_name="Acme Ltd",
        job_title="Engineer",
        worker_email_text="Welcome",
        external_id="ENG-001",
    )
