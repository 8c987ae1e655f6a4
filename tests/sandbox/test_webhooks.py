"""POST and GET /webhooks/clients: the client's single webhook configuration."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest

from tests.sandbox.support import assert_problem

WEBHOOK = "/webhooks/clients"
MICROSECONDS_Z = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"


def config(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "url": "https://hooks.example.com/workforce",
        "headers": [{"name": "X-Signature", "value": "s3cr3t"}],
        "event_types": ["KYC", "PAYMENT"],
    }
    body.update(changes)
    return body


def test_none_configured_is_404(api: httpx.Client) -> None:
    assert_problem(api.get(WEBHOOK), 404, "no webhook")


def test_the_first_post_creates_201_and_get_reads_it_back(api: httpx.Client) -> None:
    created = api.post(WEBHOOK, json=config())
    assert created.status_code == 201
    body = created.json()
    assert body == {
        "client_id": body["client_id"],
        "url": "https://hooks.example.com/workforce",
        "enabled": True,
        "headers": [{"name": "X-Signature", "value": "s3cr3t"}],
        "event_types": ["KYC", "PAYMENT"],
        "created_at": body["created_at"],
        "updated_at": body["updated_at"],
    }
    assert re.fullmatch(MICROSECONDS_Z, body["created_at"])
    assert body["created_at"] == body["updated_at"]
    # A body on GET is ignored, as the interface's own example sends one.
    read = api.request("GET", WEBHOOK, json={"event_types": ["KYC"]})
    assert read.status_code == 200
    assert read.json() == body


def test_a_second_post_replaces_the_whole_configuration_keeping_created_at(
    api: httpx.Client,
) -> None:
    first = api.post(WEBHOOK, json=config()).json()
    time.sleep(0.002)
    replaced = api.post(
        WEBHOOK,
        json=config(url="http://127.0.0.1:9/hook", headers=[], event_types=["KYC"], enabled=False),
    )
    assert replaced.status_code == 200
    body = replaced.json()
    assert (body["url"], body["headers"], body["event_types"], body["enabled"]) == (
        "http://127.0.0.1:9/hook",
        [],
        ["KYC"],
        False,
    )
    assert body["created_at"] == first["created_at"]
    assert body["updated_at"] > first["updated_at"]
    assert api.get(WEBHOOK).json() == body


def test_clients_have_their_own_configuration(api: httpx.Client, other_api: httpx.Client) -> None:
    mine = api.post(WEBHOOK, json=config()).json()
    assert_problem(other_api.get(WEBHOOK), 404)
    theirs = other_api.post(WEBHOOK, json=config(url="https://other.example.com/h"))
    assert theirs.status_code == 201
    assert theirs.json()["client_id"] != mine["client_id"]
    assert api.get(WEBHOOK).json() == mine


@pytest.mark.parametrize(
    "url", ["http://localhost:8080/h", "http://[::1]/h", "http://127.0.0.2/x", "https://a.b/c?d=e"]
)
def test_acceptable_urls(api: httpx.Client, url: str) -> None:
    assert api.post(WEBHOOK, json=config(url=url)).status_code == 201
    api.post("/_sandbox/reset")


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"url": "http://hooks.example.com/h"}, "url", ["https"]),
        ({"url": "ftp://hooks.example.com/h"}, "url", ["https"]),
        ({"url": "/relative/path"}, "url", ["absolute"]),
        ({"url": "https://"}, "url", ["absolute"]),
        ({"url": "https://bad host/h"}, "url", ["white space"]),
        ({"url": "https://host:99999/h"}, "url", ["port"]),
        ({"url": ""}, "url", ["blank"]),
        ({"url": 5}, "url", ["string"]),
        ({"url": "https://h.example.com/" + "a" * 3000}, "url", ["2048"]),
        ({"event_types": []}, "event_types", ["at least one"]),
        ({"event_types": ["KYC", "KYC"]}, "event_types[1]", ["repeats"]),
        ({"event_types": ["PAYMENTS"]}, "event_types[0]", ["KYC, CLIENT_WALLET_TOP_UP, PAYMENT"]),
        ({"event_types": [1]}, "event_types[0]", ["must be one of"]),
        ({"event_types": "KYC"}, "event_types", ["array"]),
        ({"event_types": None}, "event_types", ["required"]),
        ({"headers": None}, "headers", ["required"]),
        ({"headers": {"X-A": "b"}}, "headers", ["array"]),
        ({"headers": [{"name": "X A", "value": "v"}]}, "headers[0].name", ["header name"]),
        ({"headers": [{"name": "", "value": "v"}]}, "headers[0].name", ["blank"]),
        ({"headers": [{"name": "Host", "value": "v"}]}, "headers[0].name", ["cannot"]),
        ({"headers": [{"name": "content-type", "value": "v"}]}, "headers[0].name", ["cannot"]),
        ({"headers": [{"name": "Content-Length", "value": "1"}]}, "headers[0].name", ["cannot"]),
        ({"headers": [{"name": "Transfer-Encoding", "value": "x"}]}, "headers[0].name", ["cannot"]),
        (
            {"headers": [{"name": "X-A", "value": "1"}, {"name": "x-a", "value": "2"}]},
            "headers[1].name",
            ["repeats", "ignore case"],
        ),
        ({"headers": [{"name": "X-A", "value": "a\r\nEvil: 1"}]}, "headers[0].value", ["line"]),
        ({"headers": [{"name": "X-A"}]}, "headers[0].value", ["required"]),
        ({"headers": [{"name": "X-A", "value": "v", "x": 1}]}, "headers[0].x", ["unknown"]),
        ({"headers": ["X-A: v"]}, "headers[0]", ["object"]),
        (
            {"headers": [{"name": f"X-{n}", "value": "v"} for n in range(21)]},
            "headers",
            ["at most 20"],
        ),
        ({"enabled": "yes"}, "enabled", ["true or false"]),
        ({"secret": "x"}, "secret", ["unknown field"]),
    ],
)
def test_an_invalid_configuration_is_400_and_changes_nothing(
    api: httpx.Client, changes: dict[str, Any], field: str, words: list[str]
) -> None:
    before = api.post(WEBHOOK, json=config()).json()
    problem = assert_problem(api.post(WEBHOOK, json=config(**changes)), 400, *words)
    assert [error["field"] for error in problem["errors"]] == [field]
    assert api.get(WEBHOOK).json() == before


def test_twenty_headers_are_allowed(api: httpx.Client) -> None:
    headers = [{"name": f"X-{n}", "value": "v"} for n in range(20)]
    assert api.post(WEBHOOK, json=config(headers=headers)).status_code == 201


def test_a_client_id_that_is_not_an_id_is_400(api: httpx.Client) -> None:
    assert_problem(api.post(WEBHOOK, json=config(client_id="1a")), 400, "client_id", "integer")


def test_a_body_naming_another_client_is_403(api: httpx.Client, other_client: Any) -> None:
    assert_problem(api.post(WEBHOOK, json=config(client_id=other_client.client_id)), 403)
    assert_problem(api.get(WEBHOOK), 404)
    mine = api.post(WEBHOOK, json=config()).json()["client_id"]
    assert api.post(WEBHOOK, json=config(client_id=mine)).status_code == 200
