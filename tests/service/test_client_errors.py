"""Error answers that are not problem+json, and what every request carries, over real HTTP.

The sandbox always answers problem+json; a real service (or a proxy before it) may answer an
empty body, an HTML page or a success that is not JSON. A tiny service here does exactly that.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reconciler import logs
from reconciler.secrets import Secret
from reconciler.service.client import ServiceClient
from reconciler.service.config import ClientConfig
from reconciler.service.errors import (
    Conflict,
    InvalidRequest,
    ServerError,
    ServiceError,
    UnexpectedResponse,
)
from tests.service.helpers import FAST_RETRY
from tests.service.paged_service import serving

SEEN_HEADERS: list[dict[str, str]] = []
ECHOED_TOKEN = "tok-Zk4r9Qm2Xv7Lp0Wn5B"  # 20 characters: 19 of them fit under the cut
ECHOED_HEADER = "hdr-Jc6Yf1Ds3Ue8Ga2Rk"


async def _status(request: Request) -> Response:
    SEEN_HEADERS.append(dict(request.headers))
    answers = {
        "1": Response(status_code=400),  # no body at all
        "2": Response("<html><body>Bad gateway</body></html>", 502, media_type="text/html"),
        "3": JSONResponse({"error": "Conflict", "message": "key reused"}, status_code=409),
        "4": Response("not json", 200, media_type="text/plain"),
        "5": JSONResponse(["a", "list"], status_code=418),
        # A proxy echoing the token (and a header value) just where the snippet is cut.
        "6": Response("x" * 181 + ECHOED_TOKEN, 502, media_type="text/plain"),
        "7": JSONResponse(["y" * 185, ECHOED_HEADER], status_code=418),
        "8": Response("[" * 100_000 + "]" * 100_000, 200, media_type="application/json"),
        "9": Response("[" * 100_000 + "]" * 100_000, 400, media_type="application/json"),
    }
    return answers[request.path_params["agreement_id"]]


@pytest.fixture(scope="module")
def service() -> Iterator[ServiceClient]:
    route = "/contract-server/v2/general/worker/agreements/{agreement_id}/status"
    app = Starlette(routes=[Route(route, _status, methods=["POST"])])
    with serving(app) as base_url:
        config = ClientConfig(
            base_url=base_url,
            token=Secret("errors-test-token"),
            token_source="the test",
            retry=FAST_RETRY,
        )
        with ServiceClient(config) as client:
            yield client


@pytest.mark.parametrize(
    ("agreement_id", "error", "message"),
    [
        (1, InvalidRequest, "failed: 400 Bad Request: the answer had no body"),
        (2, ServerError, "502 Bad Gateway: a non-JSON answer (text/html): <html><body>Bad"),
        (3, Conflict, "failed: 409 Conflict: key reused"),
        (4, UnexpectedResponse, "(200) is not JSON"),
        (5, ServiceError, '418 I\'m a Teapot: an unexpected JSON answer: ["a", "list"]'),
    ],
)
def test_any_answer_gives_a_clear_error(
    service: ServiceClient, agreement_id: int, error: type[ServiceError], message: str
) -> None:
    with pytest.raises(error) as caught:
        service.inactivate_agreement(agreement_id)
    assert message in str(caught.value)


@pytest.mark.parametrize(("agreement_id", "secret"), [(6, ECHOED_TOKEN), (7, ECHOED_HEADER)])
def test_a_secret_is_redacted_before_the_answer_is_cut(
    service: ServiceClient, agreement_id: int, secret: str
) -> None:
    logs.register_secret(secret)
    with pytest.raises(ServiceError) as caught:
        service.inactivate_agreement(agreement_id)
    message = str(caught.value)
    for length in range(6, len(secret) + 1):  # no piece of it long enough to mean anything
        assert secret[:length] not in message, message


@pytest.mark.parametrize(("agreement_id", "said"), [(8, "nested too deeply"), (9, "nested too")])
def test_an_answer_nested_too_deeply_is_a_clear_error(
    service: ServiceClient, agreement_id: int, said: str
) -> None:
    with pytest.raises(ServiceError, match=said):
        service.inactivate_agreement(agreement_id)


def test_every_request_names_the_reconciler_and_carries_the_token(service: ServiceClient) -> None:
    SEEN_HEADERS.clear()
    with pytest.raises(InvalidRequest):
        service.inactivate_agreement(1)
    [headers] = SEEN_HEADERS
    assert headers["user-agent"].startswith("reconciler/")
    assert headers["authorization"] == "Bearer errors-test-token"
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "application/json"


def test_amounts_go_out_with_their_own_digits_never_through_a_float() -> None:
    from reconciler.service.encode import dumps, json_amount

    body = {"payments": [{"amount": json_amount(Decimal(x))} for x in ("12.5", "0.10", "1e12")]}
    assert dumps(body) == (
        '{"payments": [{"amount": 12.50}, {"amount": 0.10}, {"amount": 1000000000000.00}]}'
    )
