"""Generated bad input (hypothesis): never a 500, and a refused request changes nothing.

Each example takes a snapshot of everything the client can read, sends one generated request,
and, when it is refused (4xx), reads the state again: it must be the same. Bounded to ~100
examples a test, so the whole file runs in seconds.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.sandbox import SandboxServer
from reconciler.sandbox.validation import numeric_string
from tests.sandbox.paying import (
    PAYLISTS,
    PAYMENTS,
    TRANSACTIONS,
    active_worker,
    encode,
    paylist,
    payment,
    post_json,
    snapshot,
)
from tests.sandbox.support import PROBLEM_JSON, Controls, service_client

BOUNDED = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEWER = settings(BOUNDED, max_examples=50)


class Account:
    """A sandbox that never changes by itself: nothing falls due, no webhook sends."""

    def __init__(self, sandbox: SandboxServer) -> None:
        self.sandbox = sandbox
        self.controls = Controls(sandbox.base_url)
        self.api = service_client(sandbox.base_url, sandbox.token)
        self.agreement_id, self.email = active_worker(self.api, self.controls)
        created = post_json(self.api, PAYLISTS, paylist(payment(self.email, "12.34")))
        self.paylist_id: int = created.json()["id"]
        self.key: str = created.json()["idempotence_key"]
        self._known: dict[str, Any] | None = None

    def state(self) -> dict[str, Any]:
        return snapshot(self.api, self.controls, self.sandbox.client_id)

    def send_and_check(self, request: httpx.Request) -> httpx.Response:
        """Send one request: no 5xx, a problem+json on 4xx, and then nothing changed."""
        # The state after a refusal is the state before the next request: read it once.
        before = self._known if self._known is not None else self.state()
        self._known = None
        answer = self.api.send(request)
        assert answer.status_code < 500, f"{request.method} {request.url}: {answer.text}"
        if answer.status_code >= 400:
            assert answer.headers["content-type"] == PROBLEM_JSON, answer.text
            problem = answer.json()
            assert problem["status"] == answer.status_code and problem["detail"]
            after = self.state()
            assert after == before, f"{request.method} {request.url} changed the state"
            self._known = after
        return answer


@pytest.fixture(scope="module")
def account() -> Iterator[Account]:
    with SandboxServer(process_delay_ms=3_600_000) as sandbox:
        account = Account(sandbox)
        yield account
        account.api.close()
        account.controls.close()


# --- strategies -----------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.decimals(allow_nan=False, allow_infinity=False, places=None),
    st.text(max_size=40),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
#: Amounts that are never valid: not above 0, more than two decimals, not a number, too big.
bad_amounts = st.one_of(
    st.decimals(max_value=0, allow_nan=False, allow_infinity=False, places=2),
    st.decimals(min_value=Decimal("0.001"), max_value=Decimal("1e6"), places=3).filter(
        lambda d: d != d.quantize(Decimal("0.01"))
    ),
    st.decimals(min_value=Decimal("1e13"), max_value=Decimal("1e40"), places=0),
    # Text that stays text: a numeric string (`"1"`) is read as its number, as the service
    # reads it, and the numbers that are no amount are drawn above.
    st.text(max_size=10).filter(lambda text: numeric_string(text, whole=False) is text),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
)
bad_keys = st.one_of(
    st.text(max_size=31),
    st.text(min_size=33, max_size=80),
    st.integers(),
    st.none(),
)
bad_descriptions = st.one_of(
    st.text(min_size=256, max_size=2000),
    st.sampled_from(["", " ", "\t\n"]),
    st.integers(),
    st.none(),
)
unknown_emails = st.emails().map(lambda e: "zz" + e) | st.text(max_size=30)


@st.composite
def bad_paylists(draw: st.DrawFn, email: str) -> Any:
    """A paylist body with at least one fault in it (or any JSON at all)."""
    body: dict[str, Any] = paylist(
        *[payment(email, f"{n}.00") for n in range(1, draw(st.integers(1, 3)) + 1)]
    )
    index = draw(st.integers(0, len(body["payments"]) - 1))
    fault = draw(
        st.sampled_from(
            [
                "amount",
                "key",
                "description",
                "paylist description",
                "email",
                "extra",
                "drop",
                "repeat",
                "any json",
                "payments",
            ]
        )
    )
    item = body["payments"][index]
    if fault == "amount":
        item["amount"] = draw(bad_amounts)
    elif fault == "key":
        body["idempotence_key"] = draw(bad_keys)
    elif fault == "description":
        item["description"] = draw(bad_descriptions)
    elif fault == "paylist description":
        body["description"] = draw(bad_descriptions)
    elif fault == "email":
        item["worker_email"] = draw(unknown_emails)
    elif fault == "extra":
        target = draw(st.sampled_from([body, item]))
        target[draw(st.text(min_size=1, max_size=10).filter(lambda k: k not in target))] = draw(
            json_values
        )
    elif fault == "drop":
        del item[draw(st.sampled_from(sorted(item)))]
    elif fault == "repeat":
        body["payments"].append(dict(item, worker_email=item["worker_email"].upper()))
    elif fault == "payments":
        body["payments"] = draw(
            st.one_of(st.just([]), json_scalars, st.dictionaries(st.text(), json_scalars))
        )
    else:
        return draw(json_values)
    return body


query_values = st.one_of(
    st.text(max_size=30),
    st.integers(min_value=-(2**66), max_value=2**66).map(str),
    st.datetimes().map(lambda d: d.isoformat() + "Q"),
    st.sampled_from(["2025-02-30", "2025-03-14T24:00:00Z", "2025-03-14T09:26:53.1234567890Z"]),
)
path_segments = st.one_of(
    st.text(alphabet=string.printable, min_size=1, max_size=30),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
)


# --- the tests ------------------------------------------------------------------------------


@BOUNDED
@given(data=st.data())
def test_generated_paylists_never_crash_and_refusals_change_nothing(
    account: Account, data: st.DataObject
) -> None:
    body = data.draw(bad_paylists(account.email))
    request = account.api.build_request(
        "POST", PAYLISTS, content=encode(body), headers={"Content-Type": "application/json"}
    )
    answer = account.send_and_check(request)
    assert answer.status_code in (400, 413), answer.text


@FEWER
@given(
    key=st.one_of(st.text(max_size=31), st.text(min_size=33, max_size=40)),
    amount=bad_amounts,
)
def test_a_reused_key_with_bad_content_is_refused_and_changes_nothing(
    account: Account, key: str, amount: Any
) -> None:
    body = paylist(payment(account.email, "12.34"), key=account.key)
    body["payments"][0]["amount"] = amount
    answer = account.send_and_check(
        account.api.build_request("POST", PAYLISTS, content=encode(body))
    )
    assert answer.status_code in (400, 409)
    answer = account.send_and_check(
        account.api.build_request("POST", PAYLISTS, content=encode(dict(body, idempotence_key=key)))
    )
    assert answer.status_code == 400


@BOUNDED
@given(
    path=st.sampled_from(
        [PAYMENTS, TRANSACTIONS, "/contract/workers/list", "paylist", PAYLISTS, "/contract/workers"]
    ),
    params=st.dictionaries(
        st.sampled_from(["startDate", "endDate", "page", "size", "statusId", "email"]),
        query_values,
        max_size=3,
    ),
)
def test_generated_queries_never_crash_and_change_nothing(
    account: Account, path: str, params: dict[str, str]
) -> None:
    if path == "paylist":
        path = f"{PAYLISTS}/{account.paylist_id}/payments"
    account.send_and_check(account.api.build_request("GET", path, params=params))


@FEWER
@given(
    segment=path_segments,
    which=st.sampled_from(["paylist", "wallet", "agreement", "one paylist", "payment"]),
)
def test_generated_path_ids_never_crash_and_change_nothing(
    account: Account, segment: str, which: str
) -> None:
    quoted = quote(segment, safe="")
    if which == "paylist":
        request = account.api.build_request("GET", f"{PAYLISTS}/{quoted}/payments")
    elif which == "wallet":
        request = account.api.build_request("GET", f"/client-wallet/clients/{quoted}/wallet")
    elif which == "one paylist":
        request = account.api.build_request("GET", f"{PAYLISTS}/{quoted}")
    elif which == "payment":
        request = account.api.build_request("GET", f"{PAYMENTS}/{quoted}")
    else:
        request = account.api.build_request(
            "POST",
            f"/contract-server/v2/general/worker/agreements/{quoted}/status",
            json={"status": "inactivate"},
        )
    answer = account.send_and_check(request)
    # A generated id may name the account's own paylist or payment: then it is found.
    if segment != str(account.sandbox.client_id) and which in ("paylist", "wallet", "agreement"):
        assert answer.status_code in (400, 404, 405)


@BOUNDED
@given(
    path=st.sampled_from(
        [
            PAYLISTS,
            "/contract/workers/inviteWorkersBulkLocked",
            "/webhooks/clients",
            "/webhooks/clients/test",
            "/login/login/v2",
        ]
    ),
    body=st.one_of(
        json_values.map(lambda v: json.dumps(v, default=str).encode()),
        st.binary(max_size=200),
    ),
)
def test_generated_bodies_never_crash_and_refusals_change_nothing(
    account: Account, path: str, body: bytes
) -> None:
    account.send_and_check(account.api.build_request("POST", path, content=body))
