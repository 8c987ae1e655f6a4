"""Small builders for desired and live states, so a table row reads as the case it tests."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from reconciler.desired.model import (
    DesiredState,
    DesiredWebhook,
    DesiredWorker,
    InactivationLimit,
    Policy,
)
from reconciler.desired.model import WebhookHeader as DesiredHeader
from reconciler.plan.model import LiveState
from reconciler.secrets import Secret
from reconciler.service.models import Webhook, WebhookHeader, Worker, WorkerStatus

T0 = datetime(2025, 3, 14, 9, 26, 53, tzinfo=UTC)

COUNTRIES = {"GB": "United Kingdom", "US": "United States", "NL": "Netherlands", "FR": "France"}


def want(external_id: str, **fields: Any) -> DesiredWorker:
    """A worker as the file writes it; the email derives from the externalId unless given."""
    values: dict[str, Any] = {
        "type_of_worker": "Worker",
        "worker_name": "Ada",
        "worker_surname": "Lovelace",
        "worker_email": f"{external_id.lower()}@example.com",
        "country_iso": "GB",
        "job_title": "Engineer",
    }
    values.update(fields)
    return DesiredWorker(external_id=external_id, **values)


def agreement(
    agreement_id: int,
    external_id: str | None,
    status: str = "ACTIVE",
    **fields: Any,
) -> Worker:
    """A live agreement matching `want(external_id)`; names and country null while invited."""
    invited = status == "INVITATION_SENT"
    email = f"{external_id.lower()}@example.com" if external_id else f"a{agreement_id}@example.com"
    values: dict[str, Any] = {
        "email": email,
        "first_name": None if invited else "Ada",
        "last_name": None if invited else "Lovelace",
        "job_title": "Engineer",
        "country": None if invited else "United Kingdom",
        "country_iso": None if invited else "GB",
    }
    values.update(fields)
    if "country_iso" in fields and "country" not in fields:
        values["country"] = COUNTRIES.get(fields["country_iso"], fields["country_iso"])
    return Worker(
        agreement_id=agreement_id,
        status=WorkerStatus(status),
        created_at=T0,
        external_id=external_id,
        **values,
    )


def desired_state(
    *workers: DesiredWorker,
    prefix: str | None = "ENG-",
    prune: bool = True,
    limit: str | None = None,
    webhook: DesiredWebhook | None = None,
) -> DesiredState:
    policy = Policy(prune=prune)
    if limit is not None:
        share = limit.endswith("%")
        value = Decimal(limit.rstrip("%"))
        policy = Policy(prune=prune, max_inactivations=InactivationLimit(value, is_share=share))
    return DesiredState(workers=workers, webhook=webhook, scope_prefix=prefix, policy=policy)


def desired_webhook(
    url: str = "https://hooks.example.com/workforce",
    events: tuple[str, ...] = ("KYC",),
    headers: tuple[tuple[str, str], ...] = (),
    enabled: bool = True,
    templates: dict[str, str] | None = None,
) -> DesiredWebhook:
    templates = templates or {}
    return DesiredWebhook(
        url=url,
        headers=tuple(DesiredHeader(n, Secret(v, templates.get(n))) for n, v in headers),
        event_types=frozenset(events),
        enabled=enabled,
    )


def live_webhook(
    url: str = "https://hooks.example.com/workforce",
    events: tuple[str, ...] = ("KYC",),
    headers: tuple[tuple[str, str], ...] = (),
    enabled: bool = True,
) -> Webhook:
    return Webhook(
        url=url,
        enabled=enabled,
        headers=tuple(WebhookHeader(n, Secret(v)) for n, v in headers),
        event_types=events,
        client_id=1,
        created_at=T0,
        updated_at=T0,
    )


def live_state(*workers: Worker, webhook: Webhook | None = None) -> LiveState:
    return LiveState(workers=workers, webhook=webhook)


def quickstart() -> tuple[DesiredState, LiveState]:
    """The demo account of the README's first command, as values."""
    business = {
        "type_of_worker": "Business",
        "worker_legal_name": "Acme Consulting Ltd",
        "worker_name": "Wile",
        "worker_surname": "Coyote",
        "worker_email": "acme@example.com",
        "country_iso": "US",
        "job_title": None,
    }
    desired = desired_state(
        want("ENG-001", worker_email="ada@example.com"),
        want(
            "ENG-002",
            worker_name="Grace",
            worker_surname="Hopper",
            worker_email="grace@example.com",
            country_iso="US",
            job_title="Staff Engineer",
        ),
        want(
            "ENG-003", worker_name="Alan", worker_surname="Turing", worker_email="alan@example.com"
        ),
        want(
            "ENG-004",
            worker_name="Katherine",
            worker_surname="Johnson",
            worker_email="katherine@example.com",
            country_iso="US",
        ),
        want("ENG-005", **business),
        webhook=desired_webhook(events=("KYC", "PAYMENT")),
    )
    live = live_state(
        agreement(1, "ENG-001", email="ada@example.com"),
        agreement(
            2,
            "ENG-002",
            email="grace@example.com",
            first_name="Grace",
            last_name="Hopper",
            country_iso="US",
        ),
        agreement(3, "ENG-003", "INVITATION_SENT", email="alan@example.com"),
        agreement(
            5,
            "ENG-005",
            "VERIFICATION_PENDING",
            email="acme@example.com",
            first_name="Wile",
            last_name="Coyote",
            legal_name="Acme Consulting Ltd",
            country_iso="US",
            job_title=None,
        ),
        agreement(
            6, "ENG-006", email="edsger@example.com", first_name="Edsger", last_name="Dijkstra"
        ),
        agreement(7, "ENG-007", "ENDED", email="barbara@example.com"),
        agreement(8, None, email="freelance@example.com", first_name="Freelance"),
        agreement(9, "OPS-001", email="linus@example.com", first_name="Linus"),
        webhook=live_webhook(events=("KYC",)),
    )
    return desired, live
