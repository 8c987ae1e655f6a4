"""Money drift through the command line against the sandbox, over real HTTP.

A paylist made outside the reconciler is reported (text, JSON, Markdown) and makes `drift
--strict` exit 2; the reconciler's own paylists are not; a FAILED payment of a payrun is listed
with its cause and what to do, a payment held PENDING past the threshold as stuck; a paylist
older than the window is never read, and an account read without payruns reads no money at all.
The sandbox's request log says what was read.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from reconciler.sandbox import SandboxServer
from tests.apply.support import ROOT, cli
from tests.apply.test_payruns import NOVEMBER

WORKERS = """\
version: 1
workers:
  - {externalId: ENG-001, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,
     workerEmail: ada@example.com, countryIso: GB}
  - {externalId: ENG-002, typeOfWorker: Worker, workerName: Grace, workerSurname: Hopper,
     workerEmail: grace@example.com, countryIso: US}
"""
PLAN_SCHEMA = json.loads((ROOT / "schemas" / "plan.schema.json").read_text())


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[SandboxServer]:
    """An account in sync with WORKERS: two ACTIVE workers, no paylist yet."""
    with SandboxServer(process_delay_ms=0) as server:
        _activate(server, tmp_path)
        yield server


def _activate(server: SandboxServer, tmp_path: Path) -> None:
    _applied(server, _file(tmp_path, ""))
    with _api(server) as api:
        listed = api.get("/contract/workers/list").json()["content"]
    for worker in listed:
        moved = httpx.post(
            f"{server.base_url}/_sandbox/agreements/{worker['agreementId']}/status",
            json={"status": "ACTIVE"},
        )
        assert moved.status_code == 200, moved.text


def _file(tmp_path: Path, extra: str = NOVEMBER) -> Path:
    path = tmp_path / "desired.yaml"
    path.write_text(WORKERS + extra)
    return path


def _api(server: SandboxServer) -> httpx.Client:
    headers = {"Authorization": f"Bearer {server.token}"}
    return httpx.Client(base_url=server.base_url, headers=headers, timeout=30)


def _paylist_outside(
    server: SandboxServer, amount: str, description: str, *, days_ago: int | None = None
) -> int:
    """A paylist made directly in the service (as its web app would), optionally dated back."""
    body = {
        "description": description,
        "idempotence_key": f"{description[:20]:_<20}{amount:_>12}"[:32],
        "payments": [
            {"worker_email": "ada@example.com", "amount": amount, "description": description}
        ],
    }
    with _api(server) as api:
        made = api.post("/payment-agent/paylists", json=body)
        assert made.status_code == 200, made.text
    paylist_id: int = made.json()["id"]
    if days_ago is not None:
        when = (datetime.now(UTC) - timedelta(days=days_ago)).isoformat()
        dated = httpx.post(
            f"{server.base_url}/_sandbox/paylists/{paylist_id}/creation-date",
            json={"creation_date": when},
        )
        assert dated.status_code == 200, dated.text
    return paylist_id


def _process(server: SandboxServer) -> None:
    assert httpx.post(f"{server.base_url}/_sandbox/process").status_code == 200


def _seq(server: SandboxServer) -> int:
    log = httpx.get(f"{server.base_url}/_sandbox/requests").json()
    return int(log[-1]["seq"]) if log else 0


def _reads(server: SandboxServer, since: int) -> list[dict[str, Any]]:
    log = httpx.get(f"{server.base_url}/_sandbox/requests", params={"since": since}).json()
    return [entry for entry in log if entry["method"] == "GET"]


def _money_paths(reads: list[dict[str, Any]]) -> list[str]:
    return [e["path"] for e in reads if e["path"].startswith(("/payment-agent", "/client-wallet"))]


def _run(*args: str, server: SandboxServer) -> subprocess.CompletedProcess[str]:
    """The CLI against `server`'s demo client (its id given: the wallet's path needs it)."""
    return cli(*args, server=server, RECONCILER_CLIENT_ID=str(server.client_id))


def _applied(server: SandboxServer, path: Path, *args: str) -> None:
    applied = _run("apply", str(path), "--auto-approve", *args, server=server)
    assert applied.returncode == 0, applied.stdout + applied.stderr


def test_a_paylist_made_outside_is_untraced_in_every_output_and_strict_drift_exits_2(
    demo: SandboxServer, tmp_path: Path
) -> None:
    path = _file(tmp_path)
    _applied(demo, path)  # the reconciler's own paylist, and the workers in sync
    assert _run("drift", str(path), "--strict", server=demo).returncode == 0  # all traced
    outside = _paylist_outside(demo, "300.00", "Side bonus")
    _process(demo)
    topped = httpx.post(
        f"{demo.base_url}/_sandbox/clients/{demo.client_id}/top-up", json={"amount": 500}
    )
    assert topped.status_code == 201, topped.text

    text = _run("drift", str(path), server=demo)
    assert text.returncode == 0, text.stdout + text.stderr  # money is --strict's to judge
    assert text.stdout.startswith("No changes to apply, but money was paid outside")
    assert f'paylist {outside}, made {datetime.now(UTC):%Y-%m-%d}, "Side bonus"' in text.stdout
    assert "1 payment, 300.00" in text.stdout
    assert "untraced 1 paylist (300.00)" in text.stdout
    assert "paid through payruns 1 paylist (1,750.00)" in text.stdout
    strict = _run("drift", str(path), "--strict", server=demo)
    assert strict.returncode == 2, strict.stdout + strict.stderr
    assert "money: 1 untraced paylist (300.00)" in strict.stdout

    as_json = _run("drift", str(path), "--format", "json", server=demo)
    document = json.loads(as_json.stdout)
    jsonschema.validate(document, PLAN_SCHEMA)
    money = document["money"]
    (untraced,) = money["untraced"]["paylists"]
    assert (untraced["paylist_id"], untraced["total"], untraced["payments"]) == (
        outside,
        "300.00",
        1,
    )
    assert untraced["description"] == "Side bonus"
    own = [p["paylist_id"] for p in document["payruns"]]
    assert own and outside not in own  # the reconciler's own paylist is traced
    assert money["paid"] == {"count": 1, "total": "1750.00"}
    assert money["wallet_balance"] == "8450.00"  # 10,000 - 1,750 - 300 + 500
    assert money["top_ups"] == {"count": 1, "total": "500.00"}
    assert money["needs_action"] is True

    markdown = _run("drift", str(path), "--format", "markdown", server=demo).stdout
    assert "| untraced | 1 | 300.00 |" in markdown
    assert "| paid through payruns | 1 | 1,750.00 |" in markdown
    assert "| money of the last 35 days | count | total |" in markdown  # the same bytes daily
    assert f"paylist {outside}, made" in markdown
    assert "| wallet balance | | 8,450.00 |" in markdown
    assert "| top-ups | 1 | 500.00 |" in markdown


def test_a_failed_payment_is_listed_with_its_cause_and_what_to_do(
    demo: SandboxServer, tmp_path: Path
) -> None:
    short = NOVEMBER.replace('"1500.00"', '"9900.00"')  # 10,150 against a balance of 10,000
    path = _file(tmp_path, short)
    applied = _run("apply", str(path), "--auto-approve", "--force", server=demo)
    assert applied.returncode == 1, applied.stdout + applied.stderr  # one payment failed

    drift = _run("drift", str(path), "--format", "json", server=demo)
    (failed,) = json.loads(drift.stdout)["money"]["failed"]["payments"]
    assert (failed["email"], failed["amount"], failed["cause"]) == (
        "grace@example.com",
        "250.00",
        "INSUFFICIENT_FUNDS",
    )
    assert "top up the wallet" in failed["action"]
    text = _run("drift", str(path), "--strict", server=demo)
    assert text.returncode == 2
    assert "250.00 to grace@example.com, INSUFFICIENT_FUNDS: top up the wallet" in text.stdout
    assert "untraced 0 paylists (0.00)" in text.stdout


def test_a_payment_pending_past_the_threshold_is_stuck(tmp_path: Path) -> None:
    with SandboxServer(process_delay_ms=600_000) as slow:
        _activate(slow, tmp_path)
        path = _file(tmp_path)  # the threshold: 24 hours by default
        _applied(slow, path, "--no-wait")
        (paylist_id,) = [p["paylistId"] for p in _listed(slow)]
        held = httpx.post(f"{slow.base_url}/_sandbox/paylists/{paylist_id}/hold", json={"held": 1})
        assert held.status_code == 400  # `held` is true or false
        httpx.post(f"{slow.base_url}/_sandbox/paylists/{paylist_id}/hold", json={"held": True})
        _process(slow)

        fresh = _run("drift", str(path), "--format", "json", server=slow)
        money = json.loads(fresh.stdout)["money"]
        assert money["pending"] == {"count": 2, "total": "1750.00"}
        assert money["stuck"]["payments"] == []  # PENDING for a moment: not stuck yet

        when = (datetime.now(UTC) - timedelta(hours=30)).isoformat()
        httpx.post(
            f"{slow.base_url}/_sandbox/paylists/{paylist_id}/creation-date",
            json={"creation_date": when},
        )
        stuck = _run("drift", str(path), "--strict", server=slow)
        assert stuck.returncode == 2
        assert f"payment of paylist {paylist_id}" not in stuck.stdout
        assert "1,500.00 to ada@example.com, PENDING since" in stuck.stdout
        assert f"ask its support about paylist {paylist_id}" in stuck.stdout


def _listed(server: SandboxServer) -> list[dict[str, Any]]:
    with _api(server) as api:
        return list(api.get("/payment-agent/paylists").json()["content"])


def test_a_paylist_older_than_the_window_is_not_read(demo: SandboxServer, tmp_path: Path) -> None:
    path = _file(tmp_path, "")  # no payruns: the option alone turns the money report on
    old = _paylist_outside(demo, "40.00", "Summer bonus")
    recent = _paylist_outside(demo, "60.00", "Autumn bonus")
    _process(demo)
    for paylist_id, days_ago in ((old, 100), (recent, 3)):  # made and settled then
        when = (datetime.now(UTC) - timedelta(days=days_ago)).isoformat()
        dated = httpx.post(
            f"{demo.base_url}/_sandbox/paylists/{paylist_id}/creation-date",
            json={"creation_date": when},
        )
        assert dated.status_code == 200, dated.text
    since = _seq(demo)
    window = f"{datetime.now(UTC) - timedelta(days=35):%Y-%m-%d}"
    drift = _run("drift", str(path), "--money-since", window, "--format", "json", server=demo)
    assert drift.returncode == 0, drift.stdout + drift.stderr
    untraced = json.loads(drift.stdout)["money"]["untraced"]["paylists"]
    assert [p["paylist_id"] for p in untraced] == [recent]
    read = _money_paths(_reads(demo, since))
    assert f"/payment-agent/paylists/{recent}" in read
    assert f"/payment-agent/paylists/{old}" not in read
    assert not any(p.endswith("/payments") and "/paylists/" in p for p in read)

    policy = _file(tmp_path, "")
    policy.write_text(policy.read_text() + "policy:\n  moneyWindow: 150d\n")
    wider = _run("drift", str(policy), "--format", "json", server=demo)
    listed = json.loads(wider.stdout)["money"]["untraced"]["paylists"]
    assert [p["paylist_id"] for p in listed] == [old, recent]


def test_an_account_read_without_payruns_or_a_window_reads_no_money(
    demo: SandboxServer, tmp_path: Path
) -> None:
    path = _file(tmp_path, "")
    _paylist_outside(demo, "40.00", "Summer bonus")
    since = _seq(demo)
    drift = _run("drift", str(path), "--format", "json", server=demo)
    assert json.loads(drift.stdout)["money"] is None
    assert _money_paths(_reads(demo, since)) == []
    assert _reads(demo, since)  # the workers were read


@pytest.mark.parametrize(
    ("value", "said"),
    [("last week", "is not an ISO 8601 date"), ("2999-01-01", "is in the future")],
)
def test_a_bad_money_since_says_what_is_wrong(
    demo: SandboxServer, tmp_path: Path, value: str, said: str
) -> None:
    drift = _run("drift", str(_file(tmp_path)), "--money-since", value, server=demo)
    assert drift.returncode != 0, drift.stdout
    assert drift.stdout == ""  # refused before anything is read or reported
    assert said in drift.stderr
    assert "Traceback" not in drift.stderr


def test_a_plan_with_a_payrun_reads_each_past_paylist_once_and_concurrently(
    demo: SandboxServer, tmp_path: Path
) -> None:
    past = [_paylist_outside(demo, f"{n}.00", f"Past bonus {n}") for n in range(1, 11)]
    _process(demo)
    httpx.post(f"{demo.base_url}/_sandbox/faults", json={"latency_ms": 150})
    since = _seq(demo)
    planned = _run("plan", str(_file(tmp_path)), "--format", "json", server=demo)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert [p["state"] for p in json.loads(planned.stdout)["payruns"]] == ["to_pay"]
    reads = _reads(demo, since)
    by_id = [e for e in reads if e["path"].rsplit("/", 1)[-1] in {str(p) for p in past}]
    assert sorted(e["path"] for e in by_id) == sorted(f"/payment-agent/paylists/{p}" for p in past)
    paths = _money_paths(reads)
    assert not [p for p in paths if p.endswith("/payments") and "/paylists/" in p]
    assert paths.count("/payment-agent/payments") <= 2  # one page of 10 payments (and a probe)
    # Ten reads of 150 ms one after another take 1.5 s; eight at a time, about 0.3 s.
    moments = sorted(datetime.fromisoformat(e["at"]) for e in by_id)
    assert moments[-1] - moments[0] < timedelta(seconds=0.9)


def test_the_drift_issue_shows_the_money_table_and_names_the_untraced_paylist(
    demo: SandboxServer, tmp_path: Path
) -> None:
    from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
    from tests.gitops.test_drift_issue import TOKEN, drift_issue

    path = _file(tmp_path)
    _applied(demo, path)
    outside = _paylist_outside(demo, "300.00", "Side bonus")
    _process(demo)
    with FakeGitHub(TOKEN) as github:
        for said in ("drift issue: open #1", "drift issue: nothing #1"):  # two daily runs
            drift = _run("drift", str(path), "--strict", "--format", "markdown", server=demo)
            assert drift.returncode == 2, drift.stderr
            synced = drift_issue(github, tmp_path, drift.returncode, drift.stdout)
            assert synced.stdout.startswith(said), synced.stdout + synced.stderr
        (issue,) = github.state.issues
    assert issue["html_url"].startswith(f"https://github.com/{OWNER_REPO}/")
    assert "| money of the last 35 days | count | total |" in issue["body"]
    assert "| untraced | 1 | 300.00 |" in issue["body"]
    assert f"paylist {outside}, made" in issue["body"]


def test_an_exported_account_s_own_paylists_are_known_history_not_untraced(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """Issue 48: export writes the paylists the account already has as known history (by id,
    with the total), so the first payrun does not make them untraced money; a later paylist
    made by hand is untraced again."""
    before = _paylist_outside(demo, "300.00", "October by hand", days_ago=10)
    _process(demo)
    path = tmp_path / "exported.yaml"
    exported = _run("export", "--out", str(path), server=demo)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    text = path.read_text()
    assert f'    - {{id: {before}, total: "300.00", reason: "paid before export: October' in text
    assert _run("validate", str(path), server=demo).returncode == 0
    path.write_text(text + NOVEMBER)
    _applied(demo, path)  # the first payrun
    drift = _run("drift", str(path), "--strict", server=demo)
    assert drift.returncode == 0, drift.stdout + drift.stderr
    assert "untraced" not in drift.stdout or "untraced 0 paylists" in drift.stdout
    assert f"history.paylists: paylist {before} (300.00, 'October by hand') is known" in (
        drift.stdout
    )  # the risk line a pull request adding to the list shows
    later = _paylist_outside(demo, "20.00", "Side bonus")
    _process(demo)
    strict = _run("drift", str(path), "--strict", server=demo)
    assert strict.returncode == 2
    assert "money: 1 untraced paylist (20.00)" in strict.stdout
    assert f"paylist {later}," in strict.stdout and f"paylist {before}," not in strict.stdout


def _history(*known: tuple[int, str]) -> str:
    items = "".join(
        f'    - {{id: {paylist_id}, total: "{total}", reason: "paid before export"}}\n'
        for paylist_id, total in known
    )
    return f"history:\n  paylists:\n{items}"


def test_a_pull_request_adding_to_history_is_warned_of_what_it_adds_only(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """Issue 48: the default branch's files already know paylist `first`; a pull request adds
    `second`. Its plan compares with the base (the merge base with the default branch the
    remote names): the risk line names `second` alone. Outside git, with no base, both."""
    first = _paylist_outside(demo, "300.00", "October by hand", days_ago=10)
    second = _paylist_outside(demo, "20.00", "Side bonus", days_ago=5)
    _process(demo)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / "desired.yaml").write_text(WORKERS + _history((first, "300.00")) + NOVEMBER)
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "export"]):
        subprocess.run([*git, *args], cwd=origin, check=True, capture_output=True)
    subprocess.run([*git, "clone", "-q", str(origin), "work"], cwd=tmp_path, check=True)
    work = tmp_path / "work"
    both = WORKERS + _history((first, "300.00"), (second, "20.00")) + NOVEMBER
    (work / "desired.yaml").write_text(both)
    for args in (["checkout", "-qb", "history"], ["commit", "-qam", "the side bonus is ours"]):
        subprocess.run([*git, *args], cwd=work, check=True, capture_output=True)

    planned = _run("plan", str(work / "desired.yaml"), server=demo)

    assert planned.returncode == 0, planned.stdout + planned.stderr
    said = " ".join(planned.stdout.split())
    assert f"history.paylists: paylist {second} (20.00, 'Side bonus') is known" in said
    assert f"paylist {first} (300.00" not in said
    outside = tmp_path / "outside.yaml"
    outside.write_text(both)
    plain = " ".join(_run("plan", str(outside), server=demo).stdout.split())
    assert f"history.paylists: paylist {second} (20.00" in plain
    assert f"history.paylists: paylist {first} (300.00" in plain
