"""The JSON plan is written as it is made, and its bytes are those the whole document encoded
by the standard library gave (`json_reference`, the oracle): for the plans the tests make, for
text orjson and the standard library could spell differently, and through the redaction."""

from __future__ import annotations

import io
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from reconciler.desired import load_desired_state
from reconciler.plan import Plan, PlanOptions, diff
from reconciler.plan.refresh import refresh
from reconciler.render import JsonRenderer
from reconciler.render.json import plan_document, plan_json, write_plan_json
from reconciler.render.json_stream import Stream, encode, write_document
from reconciler.sandbox import SandboxServer
from reconciler.secrets import Secret
from reconciler.service.client import ServiceClient
from reconciler.service.config import resolve_config
from reconciler.session.planning import money_window
from tests.cli import reconciler as run
from tests.plan.factories import (
    agreement,
    desired_state,
    desired_webhook,
    live_state,
    live_webhook,
    want,
)
from tests.plan.test_plan_overlap import account, desired_text
from tests.render.json_reference import reference_bytes, reference_document
from tests.render.test_render_plan import PLANS, SCHEMA

__all__ = ["account"]  # the module's sandbox of 1,000 agreements and a paid paylist


def _out_of_order() -> Plan:
    """The file's workers in no order, externalIds that sort differently from their addresses
    (`worker["ENG-1!"]` before `worker["ENG-1"]`), an invitation between kept workers, drift
    kept, text to escape, and a kept webhook whose header is secret."""
    webhook = (("X-Token", "hV3q9Zt0PpXw7LmN2bKc"),)
    desired = desired_state(
        want("ENG-9", worker_name="Zoë 😀", job_title="Tab\there \u2028 \x7f"),
        want("ENG-1"),
        want("ENG-05", worker_surname='Quote " and \\ back'),
        want("ENG-1!", job_title="Staff"),
        want("ENG-10"),
        webhook=desired_webhook(headers=webhook),
    )
    live = live_state(
        agreement(1, "ENG-1"),
        agreement(2, "ENG-1!"),
        agreement(3, "ENG-9", first_name="Zoë 😀", job_title="Tab\there \u2028 \x7f"),
        agreement(4, "ENG-10"),
        agreement(5, "ENG-2"),
        agreement(6, None, first_name="Ada\x1b[2J\x07"),
        agreement(7, "ENG-3", "ENDED"),
        webhook=live_webhook(headers=webhook),
    )
    return diff(desired, live)


def _big_identifier() -> Plan:
    """An agreement id beyond 64 bits (orjson refuses it: the standard library writes it)."""
    return diff(desired_state(want("ENG-001")), live_state(agreement(2**70, None)))


def _narrowed() -> Plan:
    desired = desired_state(want("ENG-001", job_title="Staff"), want("ENG-002"), want("ENG-004"))
    live = live_state(agreement(1, "ENG-001"), agreement(2, "ENG-002"), agreement(3, "ENG-003"))
    targets = frozenset({"ENG-001", "ENG-003", "ENG-004"})
    return diff(desired, live, PlanOptions(targets=targets, replaces=frozenset({"ENG-001"})))


def _kept_secret() -> Plan:
    """A kept worker holding a secret where text belongs (no loader makes one): written the
    general way, masked, not from its template."""
    ignored = frozenset({"jobTitle"})
    worker = want("ENG-001", job_title=Secret("s3cr3t-title"), ignore_changes=ignored)
    return diff(desired_state(worker, want("ENG-002")), live_state(agreement(1, "ENG-001")))


CORPUS = {
    **PLANS,
    "out of order": _out_of_order,
    "an identifier beyond 64 bits": _big_identifier,
    "narrowed, replaced": _narrowed,
    "a kept worker holding a secret": _kept_secret,
}


def _check(plan: Plan) -> None:
    written = plan_json(plan).encode()
    assert written == reference_bytes(plan)
    document = json.loads(written)
    assert document == plan_document(plan) == reference_document(plan)
    assert list(Draft202012Validator(SCHEMA).iter_errors(document)) == []


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_streamed_plan_is_the_whole_document_encoded(name: str) -> None:
    _check(CORPUS[name]())


def _sandbox_plan(path: Path, server: SandboxServer) -> Plan:
    desired = load_desired_state(path)
    environ = {"RECONCILER_BASE_URL": server.base_url, "RECONCILER_TOKEN": server.token}
    with ServiceClient(resolve_config(environ=environ), read_only=True) as client:
        live = refresh(
            client,
            payruns=bool(desired.payruns),
            money=money_window(desired, None),
            parallelism=client.config.parallelism,
        )
    return diff(desired, live, PlanOptions())


@pytest.mark.parametrize("payrun", [False, True], ids=["workers", "workers and a payrun"])
def test_a_plan_of_the_sandbox_streams_the_same(
    account: SandboxServer, tmp_path: Path, payrun: bool
) -> None:
    """1,000 agreements (drift, ended, unanswered, unmanaged, out of scope), a webhook to
    update, and a payrun whose paylist is planned."""
    path = tmp_path / "desired.yaml"
    # The payrun's first payment was paid already (a conflict); without it, one to pay.
    text = desired_text(range(3, 1020), payrun=payrun)
    path.write_text(text.replace('"10.00", description: Paid before', '"12.00", description: New'))
    plan = _sandbox_plan(path, account)
    assert plan.kept_pairs and plan.unmanaged and plan.history and plan.drift
    assert bool(plan.to_pay) == payrun, plan.payruns
    _check(plan)


class _Writes:
    """A binary output that keeps only what it is asked to keep."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.ends: set[bytes] = set()
        self.data = io.BytesIO()

    def write(self, data: bytes) -> int:
        self.sizes.append(len(data))
        self.ends.add(data[-1:])
        return self.data.write(data)


def _kept(count: int) -> Plan:
    workers = [want(f"ENG-{n:06d}") for n in range(count)]
    agreements = [agreement(n + 1, f"ENG-{n:06d}") for n in range(count)]
    return diff(desired_state(*workers), live_state(*agreements))


def test_the_plan_is_written_in_pieces_ending_at_a_new_line() -> None:
    plan = _kept(3000)  # about 2 MB
    out = _Writes()
    JsonRenderer().write(plan, out)
    assert len(out.sizes) > 4 and max(out.sizes) < 2**20
    assert out.ends == {b"\n"}
    assert out.data.getvalue() == reference_bytes(plan)


def test_the_plan_of_many_workers_is_never_held_whole() -> None:
    """Writing the plan of 20,000 kept workers (14 MB) holds a fraction of it at a time: the
    document built whole, then encoded, held several times the output."""
    plan = _kept(20_000)

    class Sink:
        size = 0

        def write(self, data: bytes) -> int:
            Sink.size += len(data)
            return len(data)

    tracemalloc.start()
    try:
        write_plan_json(plan, Sink())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert Sink.size > 13_000_000
    assert peak < Sink.size / 2, (peak, Sink.size)  # about a quarter: the kept workers sorted


# --- the encoder ------------------------------------------------------------------------------


VALUES: dict[str, Any] = {
    "empty containers": {"a": {}, "b": [], "c": [{}, []], "d": None},
    "every control character and the escapes": "".join(map(chr, range(0x20))) + '"\\/\x7f',
    "text beyond ASCII": "Zoë \u2028\u2029 \ufeff 😀 \U0010ffff",
    "integers at and beyond 64 bits": [2**63 - 1, -(2**63), 2**64, -(2**70), 0, True, False],
    "keys that are not text": {1: "one", None: "none", 2.5: "half"},
    "a tuple": ("a", ("b",)),
}


@pytest.mark.parametrize("name", sorted(VALUES))
@pytest.mark.parametrize("depth", [0, 3])
def test_encode_is_the_standard_librarys(name: str, depth: int) -> None:
    value = VALUES[name]
    expected = json.dumps({"v": value}, indent=2, ensure_ascii=False).encode()
    nested = b'{\n  "v": ' + encode(value, 1) + b"\n}"
    assert nested == expected
    indented = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + "  " * depth)
    assert encode(value, depth) == indented.encode()


def test_a_lone_surrogate_is_written_escaped() -> None:
    """The standard library wrote it raw, which UTF-8 cannot carry: the output failed."""
    value = {"name": "Ada \ud800", "ok": "Zoë"}
    written = encode(value)
    assert b"\\ud800" in written
    assert json.loads(written) == value


def _streams(items: list[Any]) -> Iterator[Any]:
    yield from items


@pytest.mark.parametrize("items", [[], [{}], [1, {"a": [1, {}]}, "x"]], ids=["0", "1", "3"])
def test_streams_at_any_depth(items: list[Any]) -> None:
    document = {
        "first": Stream(_streams(items)),
        "deep": {"deeper": {"list": Stream(_streams(items)), "after": 1}, "empty": {}},
        "last": [],
    }
    whole = {
        "first": items,
        "deep": {"deeper": {"list": items, "after": 1}, "empty": {}},
        "last": [],
    }
    out = io.BytesIO()
    write_document(document, out)
    assert out.getvalue() == (json.dumps(whole, indent=2, ensure_ascii=False) + "\n").encode()


# --- the command line -------------------------------------------------------------------------


SEED = """\
workers:
  - {firstName: Ada, lastName: Lovelace, email: ada@example.com, country: GB,
     jobTitle: VALUE, status: ACTIVE}
"""
DESIRED = """\
version: 1
scope: {externalIdPrefix: "ENG-"}
workers: []
webhook:
  url: https://hooks.example.com/workforce
  event_types: [KYC]
  headers:
    - {name: X-Token, value: "${HOOK_TOKEN}"}
"""


def test_a_secret_the_service_echoes_is_redacted_in_the_json_plan(tmp_path: Path) -> None:
    """The JSON plan skips the text stream, not the redaction every output goes through."""
    secret = "s3cr3t-Echoed-By-The-Service"
    (tmp_path / "seed.yaml").write_text(SEED.replace("VALUE", secret))
    path = tmp_path / "desired.yaml"
    path.write_text(DESIRED)
    with SandboxServer(seed=tmp_path / "seed.yaml", process_delay_ms=0) as server:
        result = run("plan", str(path), "--format", "json", server=server, HOOK_TOKEN=secret)
    assert result.returncode == 0, result.stderr
    assert secret not in result.stdout
    (unmanaged,) = json.loads(result.stdout)["unmanaged"]
    assert unmanaged["jobTitle"] == "[redacted]"
