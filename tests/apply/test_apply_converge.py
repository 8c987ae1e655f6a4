"""What to send again after an ambiguous outcome or a partial refusal: tables of cases."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from reconciler.apply.converge import LiveAgreements, landed, refusals
from reconciler.apply.schedule import InvitationStep, invitation_for
from tests.plan.factories import agreement, want


def step(index: int, external_id: str, email: str | None = None) -> InvitationStep:
    worker = want(external_id) if email is None else want(external_id, worker_email=email)
    return InvitationStep(index, invitation_for(worker))


BATCH = [step(0, "ENG-001"), step(1, "ENG-002"), step(2, "ENG-003")]


@pytest.mark.parametrize(
    ("live", "done", "rest"),
    [
        pytest.param([], [], ["ENG-001", "ENG-002", "ENG-003"], id="nothing landed"),
        pytest.param(
            [agreement(7, "ENG-002", "INVITATION_SENT")],
            [("ENG-002", 7)],
            ["ENG-001", "ENG-003"],
            id="one landed, by externalId",
        ),
        pytest.param(
            [agreement(8, None, "INVITATION_SENT", email="ENG-003@Example.com")],
            [("ENG-003", 8)],
            ["ENG-001", "ENG-002"],
            id="by email, ignoring case (an externalId the service dropped)",
        ),
        pytest.param(
            [agreement(n, f"ENG-00{n}", "INVITATION_SENT") for n in (1, 2, 3)],
            [("ENG-001", 1), ("ENG-002", 2), ("ENG-003", 3)],
            [],
            id="all landed",
        ),
        pytest.param(
            [agreement(4, "ENG-001", "INACTIVATED"), agreement(5, "ENG-002", "ENDED")],
            [],
            ["ENG-001", "ENG-002", "ENG-003"],
            id="closed agreements are history, not a landing",
        ),
        pytest.param(
            [agreement(9, "ENG-001", "ACTIVE")],
            [("ENG-001", 9)],
            ["ENG-002", "ENG-003"],
            id="any open status counts",
        ),
    ],
)
def test_landed_counts_open_agreements_as_done(
    live: list[object], done: list[tuple[str, int]], rest: list[str]
) -> None:
    found, remaining = landed(BATCH, LiveAgreements.of(live))  # type: ignore[arg-type]
    assert [(s.external_id, w.agreement_id) for s, w in found] == done
    assert [s.external_id for s in remaining] == rest


@dataclass(frozen=True)
class Problem:
    message: str
    index: int | None = None
    field: str | None = None


@pytest.mark.parametrize(
    ("problems", "refused", "rest"),
    [
        pytest.param(
            [Problem("already has an open agreement", 1, "workerEmail")],
            [("ENG-002", "workerEmail: already has an open agreement")],
            ["ENG-001", "ENG-003"],
            id="one item refused",
        ),
        pytest.param(
            [Problem("bad", 0, "countryIso"), Problem("too long", 0, "jobTitle")],
            [("ENG-001", "countryIso: bad; jobTitle: too long")],
            ["ENG-002", "ENG-003"],
            id="two problems with one item are both said",
        ),
        pytest.param(
            [Problem("x", 2), Problem("y", 0)],
            [("ENG-001", "y"), ("ENG-003", "x")],
            ["ENG-002"],
            id="in request order, a problem without a field",
        ),
        pytest.param(
            [Problem("no index"), Problem("out of range", 3)],
            None,
            None,
            id="nothing names an item: the whole request was refused",
        ),
        pytest.param([], None, None, id="no per-item errors at all"),
    ],
)
def test_refusals_split_a_batch(
    problems: list[Problem],
    refused: list[tuple[str, str]] | None,
    rest: list[str] | None,
) -> None:
    split = refusals(BATCH, problems)
    if refused is None:
        assert split is None
        return
    assert split is not None
    assert [(s.external_id, reason) for s, reason in split[0]] == refused
    assert [s.external_id for s in split[1]] == rest


def test_live_agreements_know_inactivated_ones() -> None:
    live = LiveAgreements.of([agreement(1, "ENG-001", "INACTIVATED"), agreement(2, "ENG-002")])
    assert live.is_inactivated(1)
    assert not live.is_inactivated(2)
    assert not live.is_inactivated(3)
