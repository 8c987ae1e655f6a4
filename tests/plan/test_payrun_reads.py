"""The money reads of a plan with payruns, over real HTTP against the sandbox.

They start as soon as the file is known and good, beside the workers' refresh still running,
or, for a file that writes payruns, as soon as the client is open;
an error keeps its order (the file's first, then the workers' refresh's, then the money's);
a plan reads no journal (the top-ups are `drift`'s money summary); a paylist made while the
payments were listed is priced with its payments; the wallet is read once. Where a test must
slow down or fail one endpoint alone, a small proxy stands between the CLI and the sandbox and
passes everything else through unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reconciler.desired.source import payruns_written
from reconciler.sandbox import SandboxServer
from tests.apply.support import cli
from tests.plan.test_money_drift import (
    _file,
    _money_paths,
    _paylist_outside,
    _process,
    _reads,
    _run,
    _seq,
    demo,
)
from tests.service.paged_service import serving

__all__ = ["demo"]  # the fixture, used by name

JOURNAL = "/client-wallet/clients/transactions"
WORKERS_LIST = "/contract/workers/list"

#: Decides one request before it reaches the sandbox: an answer of its own, or None to pass
#: it on (it may wait first).
Rule = Callable[[Request], Awaitable[Response | None]]


@dataclass
class Proxy:
    """What the proxy saw: (path, arrived, answered) in seconds of `time.monotonic()`."""

    base_url: str = ""
    seen: list[tuple[str, float, float]] = field(default_factory=list)

    def arrivals(self, *prefixes: str) -> list[float]:
        return [arrived for path, arrived, _ in self.seen if path.startswith(prefixes)]

    def answers(self, *prefixes: str) -> list[float]:
        return [answered for path, _, answered in self.seen if path.startswith(prefixes)]


@contextmanager
def proxied(server: SandboxServer, rule: Rule) -> Iterator[Proxy]:
    """A proxy to `server` that asks `rule` first about every request."""
    proxy = Proxy()
    upstream = httpx.AsyncClient(base_url=server.base_url, timeout=30)

    async def forward(request: Request) -> Response:
        arrived = time.monotonic()
        answer = await rule(request)
        if answer is None:
            passed = await upstream.request(
                request.method,
                request.url.path,
                params=request.query_params,
                headers={"Authorization": request.headers.get("Authorization", "")},
                content=await request.body(),
            )
            answer = Response(
                passed.content,
                passed.status_code,
                media_type=passed.headers.get("content-type"),
            )
        proxy.seen.append((request.url.path, arrived, time.monotonic()))
        return answer

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    app = Starlette(routes=[Route("/{path:path}", forward, methods=methods)])
    with serving(app) as base_url:
        proxy.base_url = base_url
        yield proxy


def _through(proxy: Proxy, *args: str, server: SandboxServer, **extra: str) -> tuple[int, str, str]:
    """The CLI against `server`'s demo client, through `proxy` (`extra`: more environment)."""
    done = cli(
        *args,
        server=server,
        RECONCILER_CLIENT_ID=str(server.client_id),
        RECONCILER_BASE_URL=proxy.base_url,
        **extra,
    )
    return done.returncode, done.stdout, done.stderr


def _refused(detail: str) -> Response:
    return JSONResponse({"title": "Bad Request", "status": 400, "detail": detail}, 400)


def _paylist_by_id(path: str) -> bool:
    return path.startswith("/payment-agent/paylists/") and path.rsplit("/", 1)[-1].isdigit()


def _slow_workers(seconds: float) -> Rule:
    async def rule(request: Request) -> Response | None:
        if request.url.path == WORKERS_LIST:
            await asyncio.sleep(seconds)
        return None

    return rule


def test_the_money_is_read_while_the_workers_are_and_the_plan_is_the_same(
    demo: SandboxServer, tmp_path: Path
) -> None:
    _paylist_outside(demo, "40.00", "Summer bonus")
    _process(demo)
    path = _file(tmp_path)
    alone = _run("plan", str(path), "--format", "json", server=demo)
    assert alone.returncode == 0, alone.stderr
    with proxied(demo, _slow_workers(0.8)) as proxy:
        code, out, err = _through(proxy, "plan", str(path), "--format", "json", server=demo)
    assert code == 0, err
    plan, before = json.loads(out), json.loads(alone.stdout)
    del plan["money"]["since"], before["money"]["since"]  # `now` less the window
    assert plan == before
    money = proxy.arrivals("/payment-agent", "/client-wallet")
    assert money, "the payrun's money was not read"
    # Every money read is asked before the workers' page is answered: none waits for them.
    assert max(money) < min(proxy.answers(WORKERS_LIST))


def test_a_plan_reads_no_journal_and_drift_reads_its_top_ups(
    demo: SandboxServer, tmp_path: Path
) -> None:
    path = _file(tmp_path)
    topped = httpx.post(
        f"{demo.base_url}/_sandbox/clients/{demo.client_id}/top-up", json={"amount": 500}
    )
    assert topped.status_code == 201, topped.text
    since = _seq(demo)
    plan = _run("plan", str(path), "--format", "json", server=demo)
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["money"]["top_ups"] is None
    assert JOURNAL not in _money_paths(_reads(demo, since))
    text = _run("plan", str(path), server=demo).stdout
    assert "Money since" in text and "wallet balance 10,500.00" in text
    assert "topped up" not in text
    assert "top-ups" not in _run("plan", str(path), "--format", "markdown", server=demo).stdout

    since = _seq(demo)
    drift = _run("drift", str(path), "--format", "json", server=demo)
    assert json.loads(drift.stdout)["money"]["top_ups"] == {"count": 1, "total": "500.00"}
    assert JOURNAL in _money_paths(_reads(demo, since))
    assert "wallet topped up 1 time (500.00)" in _run("drift", str(path), server=demo).stdout


def test_a_file_whose_payrun_is_invalid_is_reported_whatever_the_money_reads_met(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """The money reads start with the workers' for a file that writes payruns (next test):
    they only read, and a file found invalid is reported alone."""
    _paylist_outside(demo, "40.00", "Summer bonus")
    path = _file(
        tmp_path,
        "payruns:\n  - id: p\n    description: d\n    payments:\n"
        '      - {worker: ENG-001, amount: "ten", description: x}\n',
    )
    problems = _run("validate", str(path), server=demo).stdout
    assert "amount" in problems
    since = _seq(demo)
    for command in ("plan", "drift"):
        done = _run(command, str(path), server=demo)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.startswith("Error: invalid desired state:"), done.stderr
        assert problems.splitlines()[0] in done.stderr
    assert {entry["method"] for entry in _reads(demo, since)} <= {"GET"}


def test_the_money_payruns_need_is_asked_before_the_file_is_loaded(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """A file that writes payruns has every paylist, the payments and the wallet asked as soon
    as the client is open, not once the file is loaded: here 20,000 workers take a good part
    of a second to load and are found invalid at the end, and the money was asked meanwhile
    (before, nothing of it was ever asked for an invalid file)."""
    workers = "".join(
        f"  - {{externalId: BIG-{n:05d}, typeOfWorker: Worker, workerName: Ada, "
        f"workerSurname: Lovelace, workerEmail: big{n}@example.com, countryIso: GB}}\n"
        for n in range(20_000)
    )
    payrun = (
        "payruns:\n  - id: p\n    description: d\n    payments:\n"
        '      - {worker: ENG-001, amount: "10.00", description: x}\n'
    )
    path = _file(tmp_path, workers.replace("countryIso: GB}\n", "countryIso: XX}\n", 1) + payrun)
    since = _seq(demo)
    done = _run("plan", str(path), server=demo)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("Error: invalid desired state:"), done.stderr
    assert "XX" in done.stderr
    asked = set(_money_paths(_reads(demo, since)))
    assert "/payment-agent/paylists" in asked or "/payment-agent/payments" in asked, asked


def test_a_file_that_writes_payruns_is_told_from_its_bytes(tmp_path: Path) -> None:
    """The guess that starts the money reads early (`payruns_written`): the usual ways of
    writing payruns, and what only looks like them."""
    written = {
        "version: 1\npayruns:\n  - id: x\n": True,
        "version: 1\npayruns:\n- id: x\n": True,
        "payruns: # this month\n  - id: x\n": True,
        "payruns: [{id: x}]\n": True,
        "payruns:\r\n  -\r\n    id: x\r\n": True,
        "payruns: []\n": False,
        "payruns:\n": False,
        "workers:\n  - {externalId: payruns}\n  # payruns:\n": False,
        'policy: {note: "payruns: [x]"}\n': False,
    }
    for number, (text, expected) in enumerate(written.items()):
        path = tmp_path / f"f{number}.yaml"
        path.write_text(text)
        assert payruns_written(path) is expected, text
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "workers.yaml").write_text("workers: []\n")
    assert payruns_written(folder) is False
    (folder / "pay.yml").write_text("payruns:\n  - id: x\n")
    assert payruns_written(folder) is True
    assert payruns_written(tmp_path / "missing.yaml") is False
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)  # refused without waiting for a writer
    assert payruns_written(fifo) is False


def test_a_paylist_read_refused_while_the_workers_are_read_is_reported(
    demo: SandboxServer, tmp_path: Path
) -> None:
    _paylist_outside(demo, "40.00", "Summer bonus")

    async def rule(request: Request) -> Response | None:
        if _paylist_by_id(request.url.path):
            return _refused("the paylist read is refused by the test")
        return await _slow_workers(0.8)(request)

    with proxied(demo, rule) as proxy:
        code, out, err = _through(proxy, "plan", str(_file(tmp_path)), server=demo)
    assert (code, out) == (1, "")
    assert err.startswith("Error:") and "Traceback" not in err
    assert "the paylist read is refused by the test" in err
    refused = [answered for p, _, answered in proxy.seen if _paylist_by_id(p)]
    assert refused and refused[0] < min(proxy.answers(WORKERS_LIST))


def test_when_the_workers_and_a_paylist_read_both_fail_the_workers_error_is_reported(
    demo: SandboxServer, tmp_path: Path
) -> None:
    _paylist_outside(demo, "40.00", "Summer bonus")

    async def rule(request: Request) -> Response | None:
        if _paylist_by_id(request.url.path):
            return _refused("the paylist read is refused by the test")
        if request.url.path == WORKERS_LIST:
            await asyncio.sleep(0.8)
            return _refused("the workers read is refused by the test")
        return None

    with proxied(demo, rule) as proxy:
        code, out, err = _through(proxy, "plan", str(_file(tmp_path)), server=demo)
    assert (code, out) == (1, "")
    assert "the workers read is refused by the test" in err, err
    assert "the paylist read" not in err and "Traceback" not in err
    assert proxy.answers("/payment-agent/paylists/")  # it failed first, and was read meanwhile


def test_a_paylist_made_while_the_payments_are_listed_is_priced_with_its_payments(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """The payments listing passes before a paylist paying the payrun's first payment is made,
    and the paylists listing after: that payment is a duplicate all the same."""
    made: asyncio.Event | None = None
    paylist: list[int] = []

    async def rule(request: Request) -> Response | None:
        nonlocal made
        made = made or asyncio.Event()
        path = request.url.path
        if path == "/payment-agent/payments" and not paylist:
            async with httpx.AsyncClient(base_url=demo.base_url, timeout=30) as upstream:
                listed = await upstream.get(
                    path, params=request.query_params, headers=dict(request.headers)
                )
                paylist.append(
                    await asyncio.to_thread(
                        _paylist_outside, demo, "1500.00", "November 2026 retainer"
                    )
                )
                await asyncio.to_thread(_process, demo)
            made.set()
            return Response(listed.content, listed.status_code, media_type="application/json")
        if path == "/payment-agent/paylists":  # not before that paylist is made (or 2 s)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(made.wait(), timeout=2)
        return None

    with proxied(demo, rule) as proxy:
        code, out, err = _through(proxy, "plan", str(_file(tmp_path)), server=demo)
    assert code == 0, err
    assert paylist, "the payments were never listed"
    assert "is refused" in out and "DUPLICATE_PAYMENT" in out, out
    assert f"paid already in paylist {paylist[0]}" in out
    assert f"/payment-agent/paylists/{paylist[0]}/payments" in [p for p, _, _ in proxy.seen]


def test_a_saved_plan_with_a_client_id_reads_the_wallet_once(
    demo: SandboxServer, tmp_path: Path
) -> None:
    wallet = f"/client-wallet/clients/{demo.client_id}/wallet"
    for extra, name in (("", "plain"), (None, "payrun")):
        path = _file(tmp_path) if extra is None else _file(tmp_path, extra)
        since = _seq(demo)
        saved = _run("plan", str(path), "--out", str(tmp_path / f"{name}.json"), server=demo)
        assert saved.returncode == 0, saved.stderr
        assert _money_paths(_reads(demo, since)).count(wallet) == 1, name
    wrong = cli(  # another client's id is still refused
        "plan",
        str(_file(tmp_path, "")),
        "--out",
        str(tmp_path / "wrong.json"),
        server=demo,
        RECONCILER_CLIENT_ID=str(demo.client_id + 1000),
    )
    assert wrong.returncode == 1
    assert "is not the client of this token" in wrong.stderr


def test_a_saved_plan_whose_workers_read_fails_does_not_wait_out_the_money_retries(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """apply PLAN reads the money beside the workers (`refresh`): when the workers' read fails,
    a money read still being retried is abandoned, not waited for through its retries."""
    _paylist_outside(demo, "40.00", "Summer bonus")
    failing = {"now": False}

    async def rule(request: Request) -> Response | None:
        if not failing["now"]:
            return None
        if _paylist_by_id(request.url.path):  # retried, 1 s apart, for up to 30 s
            return JSONResponse({"title": "Service Unavailable", "status": 503}, 503)
        if request.url.path == WORKERS_LIST:
            await asyncio.sleep(0.5)
            return _refused("the workers read is refused by the test")
        return None

    with proxied(demo, rule) as proxy:
        saved = tmp_path / "plan.json"
        code, _, err = _through(
            proxy, "plan", str(_file(tmp_path)), "--out", str(saved), server=demo
        )
        assert code == 0, err
        failing["now"] = True
        started = time.monotonic()
        code, _, err = _through(
            proxy,
            "apply",
            str(saved),
            server=demo,
            RECONCILER_RETRY_SECONDS="30",
            RECONCILER_RETRY_ATTEMPTS="30",
        )
        took = time.monotonic() - started
    assert code == 1
    assert "the workers read is refused by the test" in err, err
    assert "Traceback" not in err
    assert took < 10, f"{took:.1f} s: the paylist read's retries were waited out"
