"""The look commands write a list while they read it: JSON and CSV as the pages come, byte for
byte what `json.dumps(rows, indent=2, ensure_ascii=False)` and the CSV writer make of the whole
list; a read that fails part-way leaves no JSON that parses, and exits 1 with the error."""

from __future__ import annotations

import csv
import dataclasses
import enum
import io
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.cli.look import JOURNAL_COLUMNS, PAYMENT_COLUMNS, WORKER_COLUMNS
from reconciler.cli.look_more import PAYLIST_COLUMNS, PAYLISTS_COLUMNS
from reconciler.render.rows import record, row_json, write_json_list
from reconciler.secrets import Secret
from reconciler.service.models import PaymentItem, WebhookHeader
from tests.cli import user_environment
from tests.service.helpers import client_for, control, invitation
from tests.service.paged_service import PagedService, serving

# -- the writer, beside json.dumps -----------------------------------------------------------

LISTS: dict[str, list[Any]] = {
    "no row": [],
    "one row": [{"agreement_id": 1, "email": "a@example.com", "first_name": None}],
    "rows": [{"id": n, "amount": f"{n}.50", "status": "SUCCESS"} for n in range(1, 4)],
    "text that JSON escapes": [
        {"name": 'Zoë "Q" \\ \n\t\r \u2028 \x00 \x7f 😀 العربية', "e\u0301": "\ud800"}
    ],
    "numbers and truth": [
        {"i": -3, "big": 10**30, "f": 1.5, "nan": float("nan"), "inf": float("-inf")},
        {"true": True, "false": False, "none": None, "zero": 0},
    ],
    "nested values": [
        {
            "headers": [{"name": "X-Token", "value": "****"}],
            "event_types": ["KYC", "PAYMENT"],
            "no_list": [],
            "no_object": {},
            "deep": {"a": {"b": [1, [2, {"c": None}]]}},
        }
    ],
    "an empty record": [{}, {"a": 1}],
    "keys that are not text": [{1: "one", None: "none", 2.5: "x", False: "f"}],
    "items that are not records": [1, "two", None, [3, []], {"a": [{}]}, 0.1],
}


@pytest.mark.parametrize("items", LISTS.values(), ids=LISTS.keys())
def test_a_list_is_written_as_json_dumps_writes_it(items: list[Any]) -> None:
    out = io.StringIO()
    write_json_list(iter(items), out)
    assert out.getvalue() == json.dumps(items, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("items", LISTS.values(), ids=LISTS.keys())
def test_a_list_inside_a_document_is_indented_as_json_dumps_indents_it(items: list[Any]) -> None:
    out = io.StringIO()
    out.write('{\n  "header": {\n    "id": 7\n  },\n  "payments": ')
    write_json_list(iter(items), out, depth=1)
    out.write("\n}")
    whole = {"header": {"id": 7}, "payments": items}
    assert out.getvalue() == json.dumps(whole, indent=2, ensure_ascii=False)


class _Stage(enum.Enum):
    DONE = "COMPLETED"


@dataclasses.dataclass
class _Row:
    """A row with a value of every kind the look commands show."""

    id: int
    text: str
    none: None
    flag: bool
    ratio: float
    amount: Decimal
    at: datetime
    stage: _Stage
    secret: Secret
    headers: list[WebhookHeader]
    tags: tuple[str, ...]


ROW = _Row(
    id=7,
    text="Zoë «A» \n",
    none=None,
    flag=True,
    ratio=0.5,
    amount=Decimal("1500"),
    at=datetime(2026, 11, 25, 9, 30, tzinfo=UTC),
    stage=_Stage.DONE,
    secret=Secret("s3cret-value"),
    headers=[WebhookHeader("X-Token", Secret("hv-123456"))],
    tags=(),
)


@pytest.mark.parametrize("columns", [tuple(f.name for f in dataclasses.fields(_Row)), ("id",), ()])
def test_rows_are_written_as_json_dumps_writes_their_records(columns: tuple[str, ...]) -> None:
    out = io.StringIO()
    write_json_list([ROW, ROW], out, text=row_json(columns))
    records = [record(ROW, columns)] * 2
    assert out.getvalue() == json.dumps(records, indent=2, ensure_ascii=False)
    assert "s3cret-value" not in out.getvalue() and "hv-123456" not in out.getvalue()


def _failing(rows: int) -> Iterator[dict[str, int]]:
    for n in range(rows):
        yield {"a": n}
    raise RuntimeError("page 2 failed")


def test_a_list_that_fails_part_way_is_left_unterminated() -> None:
    out = io.StringIO()
    with pytest.raises(RuntimeError, match="page 2 failed"):
        write_json_list(_failing(2), out)
    assert out.getvalue() == '[\n  {\n    "a": 0\n  },\n  {\n    "a": 1\n  }\n'
    with pytest.raises(json.JSONDecodeError):
        json.loads(out.getvalue())


def test_a_list_that_fails_before_its_first_row_writes_nothing() -> None:
    out = io.StringIO()
    with pytest.raises(RuntimeError):
        write_json_list(_failing(0), out)
    assert out.getvalue() == ""  # not "[]": an empty list would look whole


# -- the commands, against the sandbox --------------------------------------------------------


def _run(sandbox: Any, *args: str) -> str:
    result = CliRunner().invoke(
        main,
        [*args, "--base-url", sandbox.base_url],
        env={"RECONCILER_TOKEN": sandbox.token},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return result.output


def _dumped(rows: Any, columns: tuple[str, ...]) -> str:
    return json.dumps([record(row, columns) for row in rows], indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("count", [0, 1, 3])
def test_workers_json_is_json_dumps_of_the_same_rows(sandbox: Any, count: int) -> None:
    with client_for(sandbox) as client:
        if count:
            client.invite_workers(
                [
                    invitation(n, worker_name=f"Zoë{n}", job_title="Ingénieur «A»")
                    for n in range(count)
                ]
            )
        rows = client.list_workers()
    assert len(rows) == count
    assert _run(sandbox, "workers", "--format", "json") == _dumped(rows, WORKER_COLUMNS)


@pytest.fixture
def paid(sandbox: Any) -> tuple[Any, int]:
    """One ACTIVE worker, a top-up and a processed paylist of two payments."""
    with client_for(sandbox) as client:
        agreement = client.invite_workers([invitation(1)])[0].agreement_id
        control(sandbox, f"agreements/{agreement}/status", {"status": "ACTIVE"})
        control(sandbox, f"clients/{sandbox.client_id}/top-up", {"amount": 25})
        paylist = client.create_paylist(
            "Juin «été»",
            [
                PaymentItem("Juin travail", Decimal("12.50"), "worker1@example.com"),
                PaymentItem("Juin extra", Decimal("0.25"), "worker1@example.com"),
            ],
        )
    control(sandbox, "process")
    return sandbox, paylist.id


def test_every_list_command_writes_json_dumps_of_its_rows(paid: tuple[Any, int]) -> None:
    sandbox, paylist_id = paid
    with client_for(sandbox) as client:
        payments = client.list_payments()
        journal = client.list_transactions()
        paylists = list(client.iter_paylists())
        header = client.get_paylist(paylist_id)
        in_paylist = client.list_paylist_payments(paylist_id)
    assert len(payments) == 2 and len(journal) == 3 and len(paylists) == 1
    assert _run(sandbox, "payments", "--format", "json") == _dumped(payments, PAYMENT_COLUMNS)
    assert _run(sandbox, "transactions", "--format", "json") == _dumped(journal, JOURNAL_COLUMNS)
    assert _run(sandbox, "paylists", "--format", "json") == _dumped(paylists, PAYLISTS_COLUMNS)
    document = {
        "paylist": record(header, PAYLIST_COLUMNS),
        "payments": [record(row, PAYMENT_COLUMNS) for row in in_paylist],
    }
    shown = _run(sandbox, "paylist", str(paylist_id), "--format", "json")
    assert shown == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    csv_rows = list(csv.reader(io.StringIO(_run(sandbox, "payments", "--format", "csv"))))
    assert csv_rows[0] == list(PAYMENT_COLUMNS)
    assert [row[3] for row in csv_rows[1:]] == ["12.50", "0.25"]


# -- a real command against a service that pages slowly, or fails part-way -------------------

COUNT = 1000  # five pages of 200


@pytest.fixture
def service() -> Iterator[tuple[PagedService, str]]:
    fake = PagedService(count=COUNT, one_indexed=True)
    with serving(fake.app()) as base_url:
        yield fake, base_url


def _start(base_url: str, *args: str, unbuffered: str = "") -> subprocess.Popen[bytes]:
    environment = user_environment(
        RECONCILER_BASE_URL=base_url,
        RECONCILER_TOKEN="stream-test-token",
        PYTHONUNBUFFERED=unbuffered,  # "" is unset: stdout to a pipe is buffered
    )
    return subprocess.Popen(
        [sys.executable, "-m", "reconciler", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=environment,
    )


def _read_until(process: subprocess.Popen[bytes], wanted: bytes, seconds: float) -> bytes:
    """What the process wrote on stdout until `wanted` appeared (or `seconds` passed)."""
    assert process.stdout is not None
    seen = b""
    deadline = time.monotonic() + seconds
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.1)
        if ready:
            chunk = os.read(process.stdout.fileno(), 1 << 16)
            if not chunk:
                break
            seen += chunk
    return seen


@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "PYTHONUNBUFFERED"])
@pytest.mark.parametrize("output_format", ["json", "csv"])
def test_rows_are_written_while_a_later_page_is_still_awaited(
    service: tuple[PagedService, str], output_format: str, unbuffered: str
) -> None:
    fake, base_url = service
    fake.held_pages = {4}  # the last page waits until the first rows are out
    process = _start(base_url, "workers", "--format", output_format, unbuffered=unbuffered)
    try:
        # The rows of the first four pages are out, but for the last block (16 KiB at most).
        early = _read_until(process, b"w600@example.com", seconds=30)
    finally:
        fake.released.set()
    rest, errors = process.communicate(timeout=60)
    assert b"w600@example.com" in early  # before the fifth page was answered
    assert b"w801@example.com" not in early
    assert process.returncode == 0, errors.decode()
    whole = (early + rest).decode()
    if output_format == "json":
        assert [row["agreement_id"] for row in json.loads(whole)] == list(range(1, COUNT + 1))
    else:
        assert len(list(csv.DictReader(io.StringIO(whole)))) == COUNT


@pytest.mark.parametrize("output_format", ["json", "csv"])
def test_a_page_that_fails_after_rows_were_written_leaves_no_json_that_parses(
    service: tuple[PagedService, str], output_format: str
) -> None:
    fake, base_url = service
    fake.failing_pages, fake.failing_status = {3}, 403  # refused: not retried
    process = _start(base_url, "workers", "--format", output_format)
    out, errors = process.communicate(timeout=60)
    assert process.returncode == 1
    assert errors.decode().splitlines() == [
        "Error: GET /contract/workers/list failed: 403 Forbidden: a non-JSON answer "
        "(text/plain): upstream unavailable"
    ]
    text = out.decode()
    assert "w600@example.com" in text and "w601@example.com" not in text  # pages 1 to 3
    if output_format == "json":
        assert text.startswith("[\n  {") and text.endswith("  }\n")  # no closing bracket
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)
    else:
        # CSV has no end mark: the rows are whole, and the exit status says the list is not.
        assert len(list(csv.DictReader(io.StringIO(text)))) == 600


def test_a_reader_that_leaves_early_stops_the_command_quietly(
    service: tuple[PagedService, str],
) -> None:
    _, base_url = service
    process = _start(base_url, "workers", "--format", "json")
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(10) == b"[\n  {\n    "  # then the reader goes, as `head` does
    process.stdout.close()
    errors = process.stderr.read().decode()
    assert (
        process.wait(timeout=60) == 1
    )  # as for every command (tests/foundation/test_closed_output.py)
    assert errors == ""  # no "internal error", no traceback
