"""Reading the service's JSON: timestamps, amounts, countries, open statuses, unknown fields."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reconciler.identity import text_key
from reconciler.service import decode
from reconciler.service.models import PaymentStatus, WorkerStatus


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-03-14T09:26:53.589+00:00", datetime(2025, 3, 14, 9, 26, 53, 589000, UTC)),
        ("2025-03-14T09:26:53.589793238Z", datetime(2025, 3, 14, 9, 26, 53, 589793, UTC)),
        ("2025-03-14T09:26:53.589793Z", datetime(2025, 3, 14, 9, 26, 53, 589793, UTC)),
        ("2025-03-14T09:26:53Z", datetime(2025, 3, 14, 9, 26, 53, tzinfo=UTC)),
        ("2025-03-14T09:26:53.5Z", datetime(2025, 3, 14, 9, 26, 53, 500000, UTC)),
        ("2025-03-14T09:26:53.1234567Z", datetime(2025, 3, 14, 9, 26, 53, 123456, UTC)),
        (
            "2025-03-14T09:26:53.999999999-05:30",
            datetime(2025, 3, 14, 9, 26, 53, 999999, timezone(-timedelta(hours=5, minutes=30))),
        ),
        ("2025-03-14T09:26:53+0200", datetime(2025, 3, 14, 7, 26, 53, tzinfo=UTC)),
        ("2025-03-14 09:26:53,25+01:00", datetime(2025, 3, 14, 8, 26, 53, 250000, UTC)),
        ("2025-03-14T09:26Z", datetime(2025, 3, 14, 9, 26, tzinfo=UTC)),
        ("2025-03-14T09:26:53", datetime(2025, 3, 14, 9, 26, 53, tzinfo=UTC)),
    ],
)
def test_timestamps(text: str, expected: datetime) -> None:
    parsed = decode.parse_timestamp(text)
    assert parsed == expected
    assert parsed.tzinfo is not None


@pytest.mark.parametrize(
    "text",
    ["", "yesterday", "2025-03-14", "2025-13-14T09:26:53Z", "2025-03-14T25:00:00Z",
     "2025-03-14T09:26:53.1234567890Z", "2025-03-14T09:26:53+25:00"],
)  # fmt: skip
def test_bad_timestamps(text: str) -> None:
    with pytest.raises(decode.DecodeError):
        decode.parse_timestamp(text)


@pytest.mark.parametrize(
    ("name", "iso"),
    [
        ("United Kingdom", "GB"),
        ("Germany", "DE"),
        ("Korea, Republic of", "KR"),
        ("South Korea", "KR"),  # common name
        ("Bolivia, Plurinational State of", "BO"),
        ("Bolivia", "BO"),
        ("Netherlands", "NL"),
        ("Kingdom of the Netherlands", "NL"),  # official name
        ("united states", "US"),  # case is not meaning
        ("FI", "FI"),  # a service that answers the code itself
        ("Narnia", None),
        ("", None),
        (None, None),
    ],
)
def test_country_names_map_back_to_iso_codes(name: str | None, iso: str | None) -> None:
    assert decode.country_iso(name) == iso


def test_worker_keeps_unknown_status_and_country_and_ignores_unknown_fields() -> None:
    worker = decode.worker(
        {
            "agreementId": 7,
            "firstName": None,
            "lastName": None,
            "legalName": None,
            "email": "x@example.com",
            "jobTitle": "Engineer",
            "country": "Atlantis",
            "externalId": "ENG-7",
            "workerCreationDate": "2025-03-14T09:26:53.589+00:00",
            "status": "ON_HOLD",
            "somethingNew": {"nested": True},
        }
    )
    assert worker.status == "ON_HOLD"
    assert not worker.status.known
    assert (worker.country, worker.country_iso) == ("Atlantis", None)
    assert WorkerStatus("ACTIVE").known


def test_amounts_are_decimals_from_json_numbers() -> None:
    body = json.loads(
        '{"id": 1, "description": "d", "amount": 0.1, "worker_email": "a@example.com",'
        ' "paylist_id": 2, "status": "REVERSED", "cause": null,'
        ' "creation_date": "2025-03-14T09:26:53.589793Z"}',
        parse_float=Decimal,
    )
    payment = decode.payment(body)
    assert payment.amount == Decimal("0.1")
    assert payment.status == PaymentStatus("REVERSED")
    assert payment.updated_at is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [(Decimal("12.30"), Decimal("12.30")), (5, Decimal(5)), ("7.25", Decimal("7.25")),
     (0.1, Decimal("0.1"))],
)  # fmt: skip
def test_parse_amount(value: object, expected: Decimal) -> None:
    assert decode.parse_amount(value) == expected


@pytest.mark.parametrize("value", [None, True, "ten", [1]])
def test_bad_amounts(value: object) -> None:
    with pytest.raises(decode.DecodeError):
        decode.parse_amount(value)


@pytest.mark.parametrize(
    ("decoder", "body", "complaint"),
    [
        (decode.worker, {"email": "a@example.com"}, "agreementId"),
        (decode.worker, {"agreementId": "x", "email": "a"}, "agreementId"),
        (decode.worker, {"agreementId": 1.5, "email": "a"}, "agreementId"),
        (decode.inactivation_result, {"agreement_id": 1, "status": 5}, "status"),
        (decode.wallet, {"id": 1, "client_id": 2, "balance": "lots"}, "amount"),
    ],
)
def test_malformed_items_say_which_field(decoder, body, complaint: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(decode.DecodeError, match=complaint):
        decoder(body)


def test_journal_entry_reads_its_transaction_data() -> None:
    entry = decode.journal_entry(
        {
            "journal_id": 3,
            "wallet_id": 1,
            "client_id": 9,
            "idempotence_key": "k",
            "amount": Decimal("-12.50"),
            "reason": "PAYMENT",
            "operation": "WITHDRAWAL",
            "transaction_data": {"payment_order_id": "44", "payment_purpose": "March"},
            "created_at": "2025-03-14T09:26:53.589793Z",
        }
    )
    assert (entry.amount, entry.payment_order_id, entry.payment_purpose) == (
        Decimal("-12.50"),
        "44",
        "March",
    )
    assert entry.operation.known and entry.reason.known


_TEXT_FIELDS = {
    "firstName": "first_name",
    "lastName": "last_name",
    "legalName": "legal_name",
    "jobTitle": "job_title",
    "externalId": "external_id",
}

#: Any text, and text made of letters with and without their combining marks (NFD and NFC).
_TEXTS = st.text(max_size=12) | st.text(alphabet="Ae\u0301\u030a\u00e9\u00c5 -", max_size=6)


@settings(max_examples=300, derandomize=True, deadline=None)
@example(texts=dict.fromkeys(_TEXT_FIELDS, "Zoe\u0301 A\u030a"), country="Tu\u0308rkiye")
@example(texts=dict.fromkeys(_TEXT_FIELDS, 42), country=None)
@given(
    texts=st.fixed_dictionaries(
        {name: st.none() | _TEXTS | st.integers() for name in _TEXT_FIELDS}
    ),
    country=st.none() | st.sampled_from(["United Kingdom", "Atlantis", "fr", "Türkiye"]),
)
def test_a_worker_s_texts_are_compared_in_nfc_whatever_path_they_take(
    texts: dict[str, object], country: str | None
) -> None:
    """ASCII text is taken as it is, any other in NFC, a number as its text, null as None: the
    plan compares these with the file's (`reconciler.identity.text_key`)."""
    item = {
        "agreementId": 7,
        "email": "x@example.com",
        "status": "ACTIVE",
        "workerCreationDate": "2025-03-14T09:26:53.589+00:00",
        "country": country,
        **texts,
    }
    worker = decode.worker(item)
    for name, attribute in _TEXT_FIELDS.items():
        value = texts[name]
        expected = None if value is None else text_key(str(value))
        assert getattr(worker, attribute) == expected, name
    assert worker.country == country
    assert worker.country_iso == decode.country_iso(country)
