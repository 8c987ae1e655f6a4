"""The seed file: the quickstart's demo account, and every error a bad seed gets."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from reconciler.sandbox.seed import SeedError, load_seed
from tests.sandbox.support import service_client

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sandbox-seed.yaml"


def test_the_example_seed_is_the_quickstart_account() -> None:
    with (
        SandboxServer(seed=EXAMPLE) as server,
        service_client(server.base_url, server.token) as api,
    ):
        workers = api.get("/contract/workers/list", params={"size": 200}).json()["content"]
        webhook = api.get("/webhooks/clients").json()
    by_email = {w["email"]: w for w in workers}
    assert [(w["externalId"], w["status"]) for w in workers] == [
        ("ENG-001", "ACTIVE"),
        ("ENG-002", "ACTIVE"),
        ("ENG-003", "INVITATION_SENT"),
        ("ENG-005", "VERIFICATION_PENDING"),
        ("ENG-006", "ACTIVE"),
        ("ENG-007", "ENDED"),
        (None, "ACTIVE"),
        ("OPS-001", "ACTIVE"),
    ]
    ada = by_email["ada@example.com"]
    assert (ada["firstName"], ada["lastName"], ada["country"], ada["jobTitle"]) == (
        "Ada",
        "Lovelace",
        "United Kingdom",
        "Engineer",
    )
    assert by_email["grace@example.com"]["jobTitle"] == "Engineer"
    alan = by_email["alan@example.com"]
    assert (alan["firstName"], alan["lastName"], alan["country"]) == (None, None, None)
    acme = by_email["acme@example.com"]
    assert (acme["legalName"], acme["firstName"], acme["country"]) == (
        "Acme Consulting Ltd",
        "Wile",
        "United States",
    )
    assert by_email["edsger@example.com"]["country"] == "Netherlands"
    assert by_email["linus@example.com"]["country"] == "Finland"
    assert by_email["freelance@example.com"]["firstName"] == "Freelance"
    assert (webhook["url"], webhook["event_types"], webhook["headers"], webhook["enabled"]) == (
        "https://hooks.example.com/workforce",
        ["KYC"],
        [],
        True,
    )


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "seed.yaml"
    path.write_text(text, encoding="utf-8")
    return path


ADA = "{firstName: Ada, lastName: Lovelace, email: ada@example.com, country: GB, status: ACTIVE}"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("workers: [", ["not valid YAML"]),
        ("- a\n- b\n", ["must be a mapping"]),
        ("clients: []\n", ["clients: unknown key"]),
        ("workers: {a: 1}\n", ["workers: must be a list"]),
        ("workers: [5]\n", ["workers[0]: must be a JSON object"]),
        (
            "workers:\n  - {firstName: Ada, lastName: L, email: a@example.com, country: XX,"
            " status: ACTIVE}\n",
            ["workers[0].country", "alpha-2"],
        ),
        (
            "workers:\n  - {firstName: Ada, lastName: L, email: a@example.com, country: GB}\n",
            ["workers[0].status: is required"],
        ),
        (
            "workers:\n  - {firstName: Ada, lastName: L, email: a@example.com, country: GB,"
            " status: SLEEPING}\n",
            ["workers[0].status", "must be one of"],
        ),
        (
            f"workers:\n  - {ADA}\n  - {{type: Business, firstName: W, lastName: C,"
            " email: acme@example.com, country: US, status: ACTIVE}\n",
            ["workers[1].legalName: is required"],
        ),
        (
            "workers:\n  - {firstName: Ada, lastName: L, mail: a@example.com, country: GB,"
            " status: ACTIVE}\n",
            ["workers[0].mail: unknown field", "workers[0].email: is required"],
        ),
        (
            # A key the seed itself wrote is named as written, not as the key it maps to.
            "workers:\n  - {firstName: Ada, lastName: L, email: a@example.com, country: GB,"
            " typeOfWorker: Worker, status: ACTIVE}\n",
            ["workers[0].typeOfWorker: unknown field"],
        ),
        (
            "webhook: {url: 'http://hooks.example.com/h', event_types: [KYC]}\n",
            ["webhook.url", "https"],
        ),
        ("webhook: {url: 'https://h.example.com/h'}\n", ["webhook.event_types: is required"]),
        ("webhook: [1]\n", ["webhook: must be a JSON object"]),
    ],
)
def test_a_bad_seed_says_what_is_wrong_and_where(
    tmp_path: Path, text: str, words: list[str]
) -> None:
    with pytest.raises(SeedError) as caught:
        load_seed(write(tmp_path, text))
    for word in words:
        assert word in str(caught.value)
    assert str(tmp_path / "seed.yaml") in str(caught.value)


def test_a_missing_seed_file_is_a_seed_error(tmp_path: Path) -> None:
    with pytest.raises(SeedError, match="cannot read"):
        load_seed(tmp_path / "absent.yaml")


def test_two_open_agreements_for_one_person_are_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    seed = write(tmp_path, f"workers:\n  - {ADA}\n  - {ADA}\n")
    db = tmp_path / "sandbox.db"
    with pytest.raises(SeedError, match=r"workers\[1\]\.email: .*open agreement"):
        SandboxServer(db=db, seed=seed).start()
    with SandboxServer(db=db) as server, service_client(server.base_url, server.token) as api:
        assert api.get("/contract/workers/list").json()["totalElements"] == 0


def test_history_may_repeat_a_person(tmp_path: Path) -> None:
    ended = ADA.replace("ACTIVE", "ENDED")
    seed = write(tmp_path, f"workers:\n  - {ended}\n  - {ADA}\n")
    with SandboxServer(seed=seed) as server, service_client(server.base_url, server.token) as api:
        statuses = [w["status"] for w in api.get("/contract/workers/list").json()["content"]]
    assert statuses == ["ENDED", "ACTIVE"]


def test_a_file_database_keeps_the_account_and_the_token(tmp_path: Path) -> None:
    db = tmp_path / "sandbox.db"
    with SandboxServer(db=db, seed=EXAMPLE) as first:
        assert first.seeded
        token, client_id = first.token, first.client_id
        with service_client(first.base_url, token) as api:
            ids = [w["agreementId"] for w in api.get("/contract/workers/list").json()["content"]]
            api.post(
                f"/contract-server/v2/general/worker/agreements/{ids[0]}/status",
                json={"status": "inactivated"},
            )
    with SandboxServer(db=db, seed=EXAMPLE) as second:
        assert not second.seeded  # a seed loads only into a new database
        assert (second.token, second.client_id) == (token, client_id)
        with service_client(second.base_url, token) as api:
            workers = api.get("/contract/workers/list").json()["content"]
    assert [w["agreementId"] for w in workers] == ids
    assert workers[0]["status"] == "INACTIVATED"
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_unknown_token_from_another_database_is_401(tmp_path: Path) -> None:
    with SandboxServer(db=tmp_path / "a.db") as a, SandboxServer(db=tmp_path / "b.db") as b:
        assert a.token != b.token
        answer = httpx.get(
            f"{b.base_url}/contract/workers/list", headers={"Authorization": f"Bearer {a.token}"}
        )
    assert answer.status_code == 401


def test_a_seed_takes_top_ups_and_paylists_so_an_account_has_history(tmp_path: Path) -> None:
    """Issue 48: an account with history, without a script: the wallet is topped up, then each
    paylist is made and settled against it (a payment it cannot pay FAILED), dated back."""
    seed = write(
        tmp_path,
        "workers:\n"
        "  - {firstName: Ada, lastName: L, email: ada@example.com, country: GB, status: ACTIVE}\n"
        "topUps: ['50.00']\n"
        "paylists:\n"
        "  - description: October by hand\n"
        "    daysAgo: 10\n"
        "    payments:\n"
        "      - {worker_email: ada@example.com, amount: '10040.00', description: big}\n"
        "      - {worker_email: ada@example.com, amount: '30.00', description: small}\n",
    )
    with (
        SandboxServer(seed=seed) as server,
        service_client(server.base_url, server.token) as api,
    ):
        (paylist,) = api.get("/payment-agent/paylists").json()["content"]
        path = f"/payment-agent/paylists/{paylist['paylistId']}/payments"
        payments = api.get(path).json()["content"]
    assert paylist["description"] == "October by hand"
    ten_days_ago = (datetime.now(UTC) - timedelta(days=10)).date().isoformat()
    assert all(p["creation_date"].startswith(ten_days_ago) for p in payments)
    # The demo wallet's 10,000.00 and the top-up pay the first; 10.00 is left for the second.
    assert sorted((p["description"], p["status"]) for p in payments) == [
        ("big", "SUCCESS"),
        ("small", "FAILED"),
    ]


def test_a_bad_paylist_in_a_seed_is_named(tmp_path: Path) -> None:
    seed = write(tmp_path, "paylists:\n  - {description: x, daysAgo: -1, payments: []}\n")
    with pytest.raises(SeedError) as caught:
        load_seed(seed)
    assert "paylists[0].daysAgo" in str(caught.value)
    assert "paylists[0].payments" in str(caught.value)
