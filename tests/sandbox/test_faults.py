"""POST /_sandbox/faults: latency, errors, rate limiting and dropped connections."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.sandbox.support import Controls, assert_problem, invitation

LIST = "/contract/workers/list"
INVITE = "/contract/workers/inviteWorkersBulkLocked"


def test_latency_delays_service_answers(api: httpx.Client, controls: Controls) -> None:
    controls.set_faults(latency_ms=400)
    started = time.perf_counter()
    assert api.get(LIST).status_code == 200
    assert time.perf_counter() - started >= 0.4
    controls.set_faults()
    started = time.perf_counter()
    api.get(LIST)
    assert time.perf_counter() - started < 0.4


def test_an_injected_error_answers_its_status_and_does_no_work(
    api: httpx.Client, controls: Controls
) -> None:
    controls.set_faults(error_rate=1, error_status=502)
    assert_problem(api.post(INVITE, json=[invitation()]), 502, "injected")
    controls.set_faults()
    assert api.get(LIST).json()["totalElements"] == 0
    entries = controls.requests()
    assert [(e["status"], e["dropped"]) for e in entries] == [(502, False), (200, False)]


def test_the_default_error_is_503_with_retry_after(api: httpx.Client, controls: Controls) -> None:
    controls.set_faults(error_rate=1)
    answer = api.get(LIST)
    assert_problem(answer, 503)
    assert answer.headers["Retry-After"] == "1"


def test_a_seed_makes_the_draws_repeat(api: httpx.Client, controls: Controls) -> None:
    def run() -> list[int]:
        controls.set_faults(error_rate=0.5, seed=42)
        return [api.get(LIST).status_code for _ in range(30)]

    first, second = run(), run()
    assert first == second
    assert set(first) == {200, 503}


def test_past_the_rate_limit_the_answer_is_429_with_retry_after(
    api: httpx.Client, controls: Controls
) -> None:
    controls.set_faults(rate_limit_per_s=2)
    answers = [api.get(LIST) for _ in range(10)]
    statuses = [answer.status_code for answer in answers]
    assert statuses[:2] == [200, 200]
    assert set(statuses) == {200, 429}
    limited = answers[statuses.index(429)]
    assert_problem(limited, 429, "rate limit")
    assert int(limited.headers["Retry-After"]) >= 1
    time.sleep(1.05)
    assert api.get(LIST).status_code == 200


def test_a_drop_does_the_work_then_breaks_the_connection(
    api: httpx.Client, controls: Controls
) -> None:
    controls.set_faults(drop_rate=1)
    item = invitation()
    with pytest.raises(httpx.TransportError):
        api.post(INVITE, json=[item])
    controls.set_faults()
    (worker,) = api.get(LIST).json()["content"]
    assert worker["email"] == item["workerEmail"]
    dropped, listed = controls.requests()
    assert (dropped["path"], dropped["status"], dropped["dropped"]) == (INVITE, 200, True)
    assert listed["dropped"] is False


def test_empty_settings_clear_every_fault(api: httpx.Client, controls: Controls) -> None:
    controls.set_faults(latency_ms=10, error_rate=1, rate_limit_per_s=1, drop_rate=1)
    cleared = controls.set_faults()
    assert cleared == {
        "latency_ms": 0,
        "error_rate": 0.0,
        "error_status": 503,
        "rate_limit_per_s": None,
        "drop_rate": 0.0,
        "seed": None,
        "methods": None,
    }
    assert [api.get(LIST).status_code for _ in range(3)] == [200, 200, 200]


def test_faults_can_be_kept_to_some_methods(api: httpx.Client, controls: Controls) -> None:
    assert controls.set_faults(error_rate=1, methods=["post"])["methods"] == ["POST"]
    assert [api.get(LIST).status_code for _ in range(3)] == [200, 200, 200]
    assert api.post(LIST, json={}).status_code == 503
    controls.set_faults()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"latency_ms": -1}, "latency_ms"),
        ({"latency_ms": 1.5}, "latency_ms"),
        ({"error_rate": 1.5}, "error_rate"),
        ({"error_rate": "half"}, "error_rate"),
        ({"error_status": 200}, "error_status"),
        ({"rate_limit_per_s": 0}, "rate_limit_per_s"),
        ({"drop_rate": -0.1}, "drop_rate"),
        ({"seed": "x"}, "seed"),
        ({"methods": []}, "methods"),
        ({"methods": [1]}, "methods"),
        ({"methods": "POST"}, "methods"),
        ({"chaos": True}, "chaos"),
    ],
)
def test_bad_fault_settings_are_400(
    controls: Controls, body: dict[str, object], field: str
) -> None:
    problem = assert_problem(controls.http.post("/_sandbox/faults", json=body), 400)
    assert problem["errors"][0]["field"] == field
