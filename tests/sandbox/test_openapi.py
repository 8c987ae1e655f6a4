"""`schemas/service-openapi.yaml` describes every answer the sandbox gives, and nothing looser.

Every kind of answer of every endpoint (successes and errors) is checked against the document
with jsonschema; so are the events a receiver gets. Altered answers must fail, so the checks
are shown to bite.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml
from openapi_spec_validator import validate as validate_openapi
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from reconciler.sandbox import SandboxServer
from tests.sandbox.paying import (
    PAYLISTS,
    PAYMENTS,
    TRANSACTIONS,
    active_worker,
    paylist,
    payment,
    post_json,
    process,
    top_up,
)
from tests.sandbox.receiver import Receiver
from tests.sandbox.support import ClientAccess, Controls, invitation, service_client

DOCUMENT = Path(__file__).resolve().parents[2] / "schemas" / "service-openapi.yaml"
SPEC: dict[str, Any] = yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))
_URI = "urn:reconciler:service-openapi"
_REGISTRY = Registry().with_resource(
    _URI, Resource.from_contents(SPEC, default_specification=DRAFT202012)
)


def _pointer(*parts: str) -> str:
    return "/".join(part.replace("~", "~0").replace("/", "~1") for part in ("", *parts))


def schema_validator(pointer: str) -> jsonschema.Draft202012Validator:
    """A validator for the schema at `pointer` in the document, `$ref`s resolved."""
    return jsonschema.Draft202012Validator(
        {"$ref": f"{_URI}#{pointer}"},
        registry=_REGISTRY,
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )


def _resolve(node: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A response object and its pointer, following one `$ref` to components/responses."""
    ref = node.get("$ref")
    if ref is None:
        return node, ""
    assert ref.startswith("#/"), ref
    target: Any = SPEC
    for part in ref[2:].split("/"):
        target = target[part.replace("~1", "/").replace("~0", "~")]
    return target, ref[1:]


def _operation(method: str, path: str) -> tuple[str, dict[str, Any] | None]:
    """The path template `path` matches, and its operation for `method` (None: not allowed)."""
    for template, item in SPEC["paths"].items():
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            return template, item.get(method.lower())
    raise AssertionError(f"{path} is not in the document")


def answer_pointer(method: str, path: str, status: int, media_type: str) -> tuple[str, str]:
    """The schema of this answer in the document, and the key it is covered under."""
    template, operation = _operation(method, path)
    if operation is None:  # a method the path does not have: 405, as any other problem
        assert status == 405, f"{method} {path} answered {status}"
        response, ref = _resolve({"$ref": "#/components/responses/Problem"})
        key = f"{method} {template} 405"
    else:
        code = str(status) if str(status) in operation["responses"] else "default"
        response, ref = _resolve(operation["responses"][code])
        ref = ref or _pointer("paths", template, method.lower(), "responses", code)
        key = f"{method} {template} {code}"
    assert media_type in response["content"], f"{method} {path} {status}: {media_type}"
    return f"{ref}{_pointer('content', media_type, 'schema')}", key


class Conformance:
    """Checks answers against the document and notes which documented answers were seen."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, answer: httpx.Response) -> httpx.Response:
        media_type = answer.headers["content-type"].split(";")[0].strip()
        pointer, key = answer_pointer(
            answer.request.method, answer.request.url.path, answer.status_code, media_type
        )
        body = json.loads(answer.text, parse_float=Decimal)
        schema_validator(pointer).validate(body)
        self.seen.add(key)
        return answer


def documented_answers() -> set[str]:
    """Every (method, path, status) the document lists, `default` included."""
    return {
        f"{method.upper()} {template} {key}"
        for template, item in SPEC["paths"].items()
        for method, operation in item.items()
        for key in operation["responses"]
    }


# --- the document itself --------------------------------------------------------------------


def test_the_document_is_valid_openapi_3_1() -> None:
    assert SPEC["openapi"].startswith("3.1")
    validate_openapi(SPEC)


def _answer_schemas() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object schema reachable from an answer or an event body, with where it is."""
    roots = [
        (f"{name}", schema)
        for name, schema in SPEC["components"]["schemas"].items()
        if not name.endswith("Request") and name not in ("Invitation", "PaymentItem")
    ]
    stack = roots
    while stack:
        where, schema = stack.pop()
        if not isinstance(schema, dict):
            continue
        if schema.get("type") == "object":
            yield where, schema
        for key, value in schema.items():
            if key == "properties":
                stack += [(f"{where}.{name}", sub) for name, sub in value.items()]
            elif key in ("items",):
                stack.append((f"{where}[]", value))
            elif key in ("oneOf", "anyOf", "allOf"):
                stack += [(f"{where}|{n}", sub) for n, sub in enumerate(value)]


def test_every_answer_object_lists_its_required_fields_and_allows_no_others() -> None:
    checked = 0
    for where, schema in _answer_schemas():
        assert schema.get("additionalProperties") is False, where
        # Every field is always there (null when empty), but for problem+json's optional ones.
        if where not in ("Problem", "FieldError", "SpringError"):
            assert set(schema.get("required", [])) == set(schema.get("properties", {})), where
        checked += 1
    assert checked > 20


def test_the_sandbox_controls_are_not_described() -> None:
    assert not [path for path in SPEC["paths"] if path.startswith("/_sandbox")]


# --- every kind of answer -------------------------------------------------------------------


def test_every_answer_of_every_endpoint_matches_the_document(
    sandbox: SandboxServer,
    api: httpx.Client,
    controls: Controls,
    other_client: ClientAccess,
) -> None:
    check = Conformance()
    with service_client(sandbox.base_url, None) as anonymous:
        _workers(check, api, anonymous, controls)
        _paylists(check, api, controls, sandbox, other_client)
        _wallet(check, api, anonymous, sandbox, other_client)
        _webhook(check, api, anonymous, other_client)
        _beyond(check, api, anonymous, controls, sandbox)
        _faults(check, api, controls)
    assert documented_answers() - check.seen == set()


def _workers(
    check: Conformance, api: httpx.Client, anonymous: httpx.Client, controls: Controls
) -> None:
    workers = "/contract/workers/list"
    invite = "/contract/workers/inviteWorkersBulkLocked"
    created = check(api.post(invite, json=[invitation(), invitation(externalId=None)])).json()
    check(api.post(invite, json=[invitation(workerEmail="not an email")]))
    check(api.post(invite, json=[invitation() for _ in range(101)]))
    check(anonymous.post(invite, json=[invitation()]))
    controls.move_agreement(created[0]["agreementId"], "ACTIVE")
    check(api.get(workers))
    check(api.get(workers, params={"statusId": 0, "page": 0, "size": 1}))
    check(api.get(workers, params={"statusId": 9}))
    check(anonymous.get(workers))
    status = "/contract-server/v2/general/worker/agreements/{}/status"
    check(api.post(status.format(created[1]["agreementId"]), json={"status": "inactivated"}))
    check(api.post(status.format(created[1]["agreementId"]), json={"status": "inactivated"}))
    check(api.post(status.format(999_999), json={"status": "inactivated"}))
    check(api.post(status.format("abc"), json={"status": "inactivated"}))
    check(anonymous.post(status.format(1), json={"status": "inactivated"}))
    check(api.delete(workers))  # 405: the default answer


def _paylists(
    check: Conformance,
    api: httpx.Client,
    controls: Controls,
    sandbox: SandboxServer,
    other: ClientAccess,
) -> None:
    email = active_worker(api, controls)[1]
    body = paylist(payment(email, "12.30"), payment(email, "20000"), payment(email, "3"))
    created = check(post_json(api, PAYLISTS, body)).json()
    check(post_json(api, PAYLISTS, body))  # the replay
    check(post_json(api, PAYLISTS, dict(body, description="Other")))  # 409
    check(post_json(api, PAYLISTS, dict(body, client_id=other.client_id)))  # 403
    check(post_json(api, PAYLISTS, dict(body, idempotence_key="short")))  # 400
    check(post_json(api, PAYLISTS, dict(body, payments=body["payments"] * 334)))  # 413
    with service_client(sandbox.base_url, None) as anonymous:
        check(post_json(anonymous, PAYLISTS, body))
        check(anonymous.get(f"{PAYLISTS}/{created['id']}/payments"))
        check(anonymous.get(PAYMENTS))
    pending = check(api.get(f"{PAYLISTS}/{created['id']}/payments")).json()
    assert {p["status"] for p in pending["content"]} <= {"PENDING", "SUCCESS", "FAILED"}
    process(controls)
    check(api.get(f"{PAYLISTS}/{created['id']}/payments", params={"size": 2}))
    check(api.get(f"{PAYLISTS}/{created['id'] + 1}/payments"))  # 404
    check(api.get(f"{PAYLISTS}/x/payments"))  # 400
    check(api.get(PAYMENTS))
    check(api.get(PAYMENTS, params={"startDate": "2000-01-01T00:00:00Z", "size": 1}))
    check(api.get(PAYMENTS, params={"endDate": "soon"}))


def _wallet(
    check: Conformance,
    api: httpx.Client,
    anonymous: httpx.Client,
    sandbox: SandboxServer,
    other: ClientAccess,
) -> None:
    check(api.get(f"/client-wallet/clients/{sandbox.client_id}/wallet"))
    check(api.get(f"/client-wallet/clients/{other.client_id}/wallet"))
    check(api.get("/client-wallet/clients/me/wallet"))
    check(anonymous.get(f"/client-wallet/clients/{sandbox.client_id}/wallet"))
    top_up(Controls(sandbox.base_url), sandbox.client_id, "5")
    journal = check(api.get(TRANSACTIONS, params={"size": 200})).json()["content"]
    assert {e["reason"] for e in journal} == {"PAYMENT", "TOP_UP"}
    check(api.get(TRANSACTIONS, params={"page": -1}))
    check(anonymous.get(TRANSACTIONS))


def _webhook(
    check: Conformance, api: httpx.Client, anonymous: httpx.Client, other: ClientAccess
) -> None:
    hooks = "/webhooks/clients"
    config = {"url": "https://hooks.example.com/w", "headers": [], "event_types": ["KYC"]}
    check(api.get(hooks))  # 404: none yet
    check(api.post(f"{hooks}/test", json={}))  # 404: nothing to send a test event to
    check(api.post(hooks, json=config))  # 201
    check(api.post(hooks, json=dict(config, headers=[{"name": "X-A", "value": "b"}])))  # 200
    check(api.get(hooks))
    check(api.post(hooks, json=dict(config, event_types=[])))  # 400
    check(api.post(hooks, json=dict(config, client_id=other.client_id)))  # 403
    check(anonymous.post(hooks, json=config))
    check(anonymous.get(hooks))


def _beyond(
    check: Conformance,
    api: httpx.Client,
    anonymous: httpx.Client,
    controls: Controls,
    sandbox: SandboxServer,
) -> None:
    """Login and the reads beyond the interface (service-contract.md)."""
    login = "/login/login/v2"
    check(anonymous.post(login, json={"email": sandbox.email, "password": sandbox.password}))
    check(anonymous.post(login, json={"email": "", "password": "x"}))  # 400
    for _ in range(5):
        check(anonymous.post(login, json={"email": "locked@example.com", "password": "x"}))
    check(anonymous.post(login, json={"email": "locked@example.com", "password": "x"}))  # 429
    agreement_id, email = active_worker(api, controls)
    check(api.get("/contract/workers", params={"email": email}))
    check(api.get("/contract/workers"))  # 400
    check(api.get("/contract/workers", params={"email": "nobody@example.com"}))  # 404
    check(anonymous.get("/contract/workers", params={"email": email}))
    created = check(post_json(api, PAYLISTS, paylist(payment(email, "1.00")))).json()
    check(api.get(PAYLISTS))
    check(api.get(PAYLISTS, params={"endDate": "soon"}))  # 400
    check(anonymous.get(PAYLISTS))
    check(api.get(f"{PAYLISTS}/{created['id']}"))
    check(api.get(f"{PAYLISTS}/x"))  # 400
    check(api.get(f"{PAYLISTS}/999999"))  # 404
    check(anonymous.get(f"{PAYLISTS}/{created['id']}"))
    paid = check(api.get(f"{PAYLISTS}/{created['id']}/payments")).json()["content"][0]
    check(api.get(f"{PAYMENTS}/{paid['id']}"))
    check(api.get(f"{PAYMENTS}/x"))  # 400
    check(api.get(f"{PAYMENTS}/999999"))  # 404
    check(anonymous.get(f"{PAYMENTS}/{paid['id']}"))
    test = "/webhooks/clients/test"
    check(api.post(test, json={}))  # the webhook of _webhook: not loopback, not delivered
    check(api.post(test, json={"event_type": "PAYMENT"}))  # 400: not subscribed
    check(anonymous.post(test, json={}))
    assert agreement_id


def _faults(check: Conformance, api: httpx.Client, controls: Controls) -> None:
    """Injected faults: every operation's `default` answer (503), and a 429."""
    controls.set_faults(error_rate=1)
    for template, item in SPEC["paths"].items():
        for method in item:
            path = re.sub(r"\{[^}]+\}", "1", template)
            check(api.request(method.upper(), path, json={}))
    controls.set_faults(rate_limit_per_s=1)
    check(api.get(PAYMENTS))
    assert check(api.get(PAYMENTS)).status_code == 429
    controls.set_faults()


def test_every_event_matches_the_document(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls
) -> None:
    with Receiver() as receiver:
        types = ["KYC", "PAYMENT", "CLIENT_WALLET_TOP_UP"]
        api.post(
            "/webhooks/clients", json={"url": receiver.url, "headers": [], "event_types": types}
        )
        email = active_worker(api, controls)[1]
        post_json(api, PAYLISTS, paylist(payment(email, "1.5"), payment(email, "99999")))
        top_up(controls, sandbox.client_id, "7")
        process(controls)
        received = receiver.wait_for(4)
    kinds = []
    for got in received:
        body = json.loads(got.body, parse_float=Decimal)
        kinds.append(body["event_type"])
        schema_validator(
            _pointer(
                "webhooks",
                body["event_type"],
                "post",
                "requestBody",
                "content",
                "application/json",
                "schema",
            )
        ).validate(body)
    assert sorted(kinds) == ["CLIENT_WALLET_TOP_UP", "KYC", "PAYMENT", "PAYMENT"]


# --- the checks bite ------------------------------------------------------------------------


def _altered(body: Any, change: str) -> Any:
    """`body` with one deliberate fault in its first object: an extra, missing or mistyped field."""
    changed = copy.deepcopy(body)
    target = changed
    while True:  # the first object, diving into `content` and lists
        if isinstance(target, list):
            target = target[0]
        elif isinstance(target, dict) and isinstance(target.get("content"), list):
            target = target["content"]
        else:
            break
    name = next(iter(target))
    if change == "extra":
        target["surprise"] = 1
    elif change == "missing":
        del target[name]
    else:
        target[name] = [target[name]]
    return changed


@pytest.mark.parametrize("change", ["extra", "missing", "wrong type"])
def test_an_altered_answer_fails_the_check(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, change: str
) -> None:
    email = active_worker(api, controls)[1]
    created = post_json(api, PAYLISTS, paylist(payment(email)))
    answers = [
        created,
        api.get(f"{PAYLISTS}/{created.json()['id']}/payments"),
        api.get(PAYMENTS),
        api.get(f"/client-wallet/clients/{sandbox.client_id}/wallet"),
        api.get("/contract/workers/list"),
        api.get("/webhooks/clients"),  # a problem+json (404)
        post_json(api, PAYLISTS, paylist(payment(email, "-1"))),  # one with errors[]
    ]
    for answer in answers:
        media_type = answer.headers["content-type"].split(";")[0]
        pointer, _ = answer_pointer(
            answer.request.method, answer.request.url.path, answer.status_code, media_type
        )
        body = json.loads(answer.text, parse_float=Decimal)
        validator = schema_validator(pointer)
        validator.validate(body)
        assert not validator.is_valid(_altered(body, change)), (answer.request.url, change)


def test_a_float_rounded_amount_is_still_a_number_but_a_string_amount_fails() -> None:
    pointer = _pointer("components", "schemas", "Wallet")
    wallet = {
        "id": 1,
        "wallet_version": 0,
        "client_id": 1,
        "enabled": True,
        "balance": Decimal("10.00"),
        "over_draft_limit": Decimal("0.00"),
        "created_at": "2025-03-14T09:26:53.589793Z",
    }
    validator = schema_validator(pointer)
    validator.validate(wallet)
    assert not validator.is_valid(dict(wallet, balance="10.00"))
    assert not validator.is_valid(dict(wallet, created_at="2025-03-14T09:26:53Z"))


def test_spring_style_errors_match_the_document() -> None:
    check = Conformance()
    with SandboxServer(error_style="spring") as server:
        with service_client(server.base_url, server.token) as api:
            check(api.post("/contract/workers/inviteWorkersBulkLocked", json=[{"x": 1}]))  # 400
            check(api.get("/payment-agent/paylists/999"))  # 404
            check(api.delete("/contract/workers/list"))  # 405
        with service_client(server.base_url, None) as anonymous:
            check(anonymous.get("/contract/workers/list"))  # 401
    assert len(check.seen) == 4
