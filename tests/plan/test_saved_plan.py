"""Saved plans: what they hold, what they never hold, and when they refuse to be applied."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import stat
import urllib.parse
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reconciler.desired.model import Policy
from reconciler.errors import ReconcilerError
from reconciler.plan import Inactivate, Invite, LiveState, WebhookUpdate, diff
from reconciler.plan.account import Account
from reconciler.plan.fingerprint import ABSENT
from reconciler.plan.resume import resume
from reconciler.plan.review import Review
from reconciler.plan.saved import (
    InvalidSavedPlan,
    SavedPlan,
    StalePlan,
    is_saved_plan,
    load_saved_plan,
    saved_plan_document,
    write_saved_plan,
)
from reconciler.plan.signing import PlanKey, UntrustedPlan, sign
from tests.plan.factories import (
    agreement,
    desired_webhook,
    live_webhook,
    quickstart,
)

TOKEN = "tok-Zk4r9Qm2Xv7Lp0Wn5Bt8"
KEY = PlanKey(TOKEN.encode(), "RECONCILER_PLAN_KEY")
ACCOUNT = Account.of("https://api.example.com", 7, None)
REVIEW = Review("hmac-sha256:" + "ab" * 32, 42, "9fceb02d0ae598e95dc970b74767f19372d61af8")
HEADER_VALUE = "hdr-Jc6Yf1Ds3Ue8Ga2Rk9"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
ENVIRON = {"WEBHOOK_TOKEN": HEADER_VALUE}


def _with_header(template: bool = True):
    desired, live = quickstart()
    webhook = desired_webhook(
        events=("KYC", "PAYMENT"),
        headers=(("X-Webhook-Token", HEADER_VALUE),),
        templates={"X-Webhook-Token": "${WEBHOOK_TOKEN}"} if template else None,
    )
    return dataclasses.replace(desired, webhook=webhook), live


def _save(tmp_path: Path, desired, live: LiveState, token: str = TOKEN) -> Path:
    document = saved_plan_document(
        diff(desired, live),
        live,
        key=PlanKey(token.encode(), "RECONCILER_PLAN_KEY"),
        account=ACCOUNT,
        review=REVIEW,
        created_at=NOW,
        tool_version="1.2.3",
        scope_prefix=desired.scope_prefix,
    )
    path = tmp_path / "plan.out"
    write_saved_plan(path, document)
    return path


def test_a_saved_plan_round_trips(tmp_path: Path) -> None:
    desired, live = _with_header()
    path = _save(tmp_path, desired, live)
    assert is_saved_plan(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    saved = load_saved_plan(path)
    assert (saved.created_at, saved.tool_version) == (NOW, "1.2.3")
    plan = _resume(saved, live, environ=ENVIRON, now=NOW + timedelta(minutes=5))
    assert [(type(c), c.address) for c in plan.changes] == [
        (Invite, 'worker["ENG-004"]'),
        (Inactivate, 'worker["ENG-006"]'),
        (WebhookUpdate, "webhook"),
    ]
    (header,) = plan.changes[-1].webhook.headers
    assert header.value.reveal() == HEADER_VALUE and header.value.template == "${WEBHOOK_TOKEN}"
    assert plan.safety.safe


def test_fingerprints_record_still_absent_for_an_invitation(tmp_path: Path) -> None:
    path = _save(tmp_path, *quickstart())
    fingerprints = {c["address"]: c["fingerprint"] for c in json.loads(path.read_text())["changes"]}
    assert fingerprints['worker["ENG-004"]'] == ABSENT
    assert fingerprints['worker["ENG-006"]'].startswith("hmac-sha256:")
    assert fingerprints["webhook"].startswith("hmac-sha256:")


def _replace_worker(live: LiveState, agreement_id: int, worker) -> LiveState:
    workers = tuple(worker if w.agreement_id == agreement_id else w for w in live.workers)
    return dataclasses.replace(live, workers=workers)


STALE = [
    (
        "the worker to invite was invited meanwhile",
        lambda live: dataclasses.replace(
            live,
            workers=(*live.workers, agreement(40, "ENG-004", "INVITATION_SENT")),
        ),
        'worker["ENG-004"]',
    ),
    (
        "the email of the worker to invite was taken meanwhile",
        lambda live: dataclasses.replace(
            live, workers=(*live.workers, agreement(41, None, email="katherine@example.com"))
        ),
        'worker["ENG-004"]',
    ),
    (
        "the worker to inactivate changed",
        lambda live: _replace_worker(
            live, 6, dataclasses.replace(live.workers[4], job_title="Professor")
        ),
        'worker["ENG-006"]',
    ),
    (
        "the webhook changed",
        lambda live: dataclasses.replace(live, webhook=live_webhook(events=("PAYMENT",))),
        "webhook",
    ),
]


@pytest.mark.parametrize(("name", "change", "address"), STALE, ids=[s[0] for s in STALE])
def test_a_plan_is_stale_when_anything_it_touches_changed(
    tmp_path: Path, name: str, change, address: str
) -> None:
    desired, live = quickstart()
    saved = load_saved_plan(_save(tmp_path, desired, live))
    with pytest.raises(StalePlan, match=address.replace("[", r"\[")):
        _resume(saved, change(live), environ={}, now=NOW)


def test_changes_elsewhere_do_not_make_it_stale(tmp_path: Path) -> None:
    desired, live = quickstart()
    saved = load_saved_plan(_save(tmp_path, desired, live))
    elsewhere = _replace_worker(live, 1, dataclasses.replace(live.workers[0], job_title="CTO"))
    elsewhere = dataclasses.replace(elsewhere, workers=(*elsewhere.workers, agreement(50, None)))
    assert len(_resume(saved, elsewhere, environ={}, now=NOW).changes) == 3


def test_a_plan_older_than_its_expiry_is_refused(tmp_path: Path) -> None:
    desired, live = quickstart()
    saved = load_saved_plan(_save(tmp_path, desired, live))
    with pytest.raises(StalePlan, match="more than 1:00:00 ago"):
        _resume(saved, live, environ={}, now=NOW + timedelta(hours=1, seconds=1))


def test_an_inactivated_agreement_gone_from_the_account_is_stale(tmp_path: Path) -> None:
    desired, live = quickstart()
    saved = load_saved_plan(_save(tmp_path, desired, live))
    gone = dataclasses.replace(live, workers=tuple(w for w in live.workers if w.agreement_id != 6))
    with pytest.raises(StalePlan, match="agreement 6 is no longer open"):
        _resume(saved, gone, environ={}, now=NOW)


def _encodings(value: str) -> set[str]:
    raw = value.encode()
    return {
        value,
        raw.hex(),
        raw.hex().upper(),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        urllib.parse.quote(value, safe=""),
    } | {getattr(hashlib, name)(raw).hexdigest() for name in ("md5", "sha1", "sha256", "sha512")}


def test_a_header_from_a_variable_is_stored_as_its_template_and_a_keyed_hash(
    tmp_path: Path,
) -> None:
    text = _save(tmp_path, *_with_header()).read_text()
    for leak in _encodings(HEADER_VALUE) | _encodings(TOKEN):
        assert leak not in text
    (record,) = [c for c in json.loads(text)["changes"] if c["address"] == "webhook"]
    (header,) = record["webhook"]["headers"]
    assert header["template"] == "${WEBHOOK_TOKEN}" and "value" not in header
    other = json.loads(_save(tmp_path, *_with_header(), token=TOKEN + "x").read_text())
    (other_header,) = next(c for c in other["changes"] if c["address"] == "webhook")["webhook"][
        "headers"
    ]
    assert other_header["hmac"] != header["hmac"]  # keyed with the token


@pytest.mark.parametrize(
    ("environ", "message"),
    [({"WEBHOOK_TOKEN": "something-else"}, "no longer has the value"), ({}, "not set")],
)
def test_a_header_variable_that_changed_refuses_the_plan(
    tmp_path: Path, environ: dict[str, str], message: str
) -> None:
    desired, live = _with_header()
    saved = load_saved_plan(_save(tmp_path, desired, live))
    with pytest.raises(StalePlan, match=message):
        _resume(saved, live, environ=environ, now=NOW)


def test_another_key_refuses_the_plan(tmp_path: Path) -> None:
    desired, live = _with_header()
    saved = load_saved_plan(_save(tmp_path, desired, live))
    with pytest.raises(UntrustedPlan, match=r"different plan key \(RECONCILER_PLAN_KEY\)"):
        resume(saved, live, key=PlanKey(b"another-key-value", "x"), environ=ENVIRON, now=NOW)


def test_a_literal_header_value_is_carried(tmp_path: Path) -> None:
    desired, live = _with_header(template=False)
    saved = load_saved_plan(_save(tmp_path, desired, live))
    plan = _resume(saved, live, environ={}, now=NOW)
    assert plan.changes[-1].webhook.headers[0].value.reveal() == HEADER_VALUE


@pytest.mark.parametrize(
    ("content", "name"),
    [
        ("version: 1\nworkers: []\n", "workers.yaml"),
        ('{"version": 1, "workers": []}', "workers.json"),
        ('{"format": "something-else"}', "plan.json"),
        ("", "empty"),
    ],
)
def test_a_desired_state_file_is_not_a_saved_plan(tmp_path: Path, content: str, name: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    assert not is_saved_plan(path)
    with pytest.raises(InvalidSavedPlan, match=name):
        load_saved_plan(path)


def test_a_directory_is_not_a_saved_plan(tmp_path: Path) -> None:
    assert not is_saved_plan(tmp_path)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(format_version=99), "format_version 99 is not supported"),
        # A plan of the version before the review was recorded: refused, saying to plan again.
        (lambda d: d.update(format_version=3), r"format_version 3 is not supported \(this vers"),
        (lambda d: d["account"].update(client_id=None), "client_id"),
        (lambda d: d.pop("review"), "review"),
        (lambda d: d["review"].update(head_sha="main"), "head_sha"),
        (lambda d: d["review"].update(pull_request="42"), "pull_request"),
        (lambda d: d.pop("created_at"), "damaged"),
        (lambda d: d["changes"].append({"action": "explode"}), "damaged"),
        (lambda d: d["changes"][0].pop("fingerprint"), "damaged"),
        (lambda d: d["changes"][0]["worker"].pop("workerEmail"), "workerEmail"),
        (lambda d: d["changes"][1].update(agreementId=True), "agreementId"),
        (lambda d: d["changes"][1].update(extra=1), "extra"),
        (lambda d: d.update(created_at="2026-01-02T03:04:05"), "has no UTC offset"),
        (lambda d: d.update(created_at="yesterday"), "damaged"),
        (lambda d: d["safety"].update(owned_open_agreements="5"), "owned_open_agreements"),
    ],
)
def test_a_damaged_saved_plan_is_a_clear_error(tmp_path: Path, mutate, message: str) -> None:
    path = _save(tmp_path, *quickstart())
    document = json.loads(path.read_text())
    mutate(document)
    path.write_text(json.dumps(document))
    with pytest.raises(InvalidSavedPlan, match=message):
        load_saved_plan(path)


@pytest.mark.parametrize(
    ("where", "said"),
    [("missing/plan.out", "cannot write the saved plan"), (".", "refusing to replace it")],
)
def test_a_saved_plan_that_cannot_be_written_is_a_clear_error(
    tmp_path: Path, where: str, said: str
) -> None:
    desired, live = quickstart()
    document = saved_plan_document(
        diff(desired, live),
        live,
        key=KEY,
        account=ACCOUNT,
        review=REVIEW,
        created_at=NOW,
        tool_version="1.2.3",
    )
    with pytest.raises(ReconcilerError, match=said):
        write_saved_plan(tmp_path / where, document)
    assert [p.name for p in tmp_path.iterdir()] == []


def _resume(saved: SavedPlan, live: LiveState, **options) -> object:
    return resume(saved, live, key=KEY, **options)


def _invite(external_id: str) -> dict:
    return {
        "action": "invite",
        "address": f'worker["{external_id}"]',
        "fingerprint": ABSENT,
        "worker": {
            "externalId": external_id,
            "typeOfWorker": "Individual",
            "workerName": "Mallory",
            "workerSurname": "Evil",
            "workerEmail": "mallory@example.com",
            "countryIso": "US",
        },
    }


# Edits made by someone who holds the plan key (or once it leaked): the signature is right,
# and apply must still refuse what no plan of this account could ask for.
SIGNED_EDITS = [
    (
        "an inactivation pointed at an unmanaged worker",
        lambda d: d["changes"][1].update(agreementId=8),
        UntrustedPlan,
        "agreement 8 belongs to",
    ),
    (
        "an inactivation pointed at a worker outside the scope",
        lambda d: d["changes"][1].update(agreementId=9),
        UntrustedPlan,
        "agreement 9 belongs to 'OPS-001'",
    ),
    (
        "an inactivation renamed to a worker outside the scope",
        lambda d: d["changes"][1].update(
            externalId="OPS-001", agreementId=9, address='worker["OPS-001"]'
        ),
        UntrustedPlan,
        "its own scope does not own",
    ),
    (
        "an invitation outside the scope",
        lambda d: d["changes"].insert(0, _invite("OPS-666")),
        UntrustedPlan,
        "its own scope does not own",
    ),
    (
        "a change recorded twice",
        lambda d: d["changes"].insert(0, _invite("ENG-004")),
        UntrustedPlan,
        "or is there twice",
    ),
    (
        "an address that does not match the change",
        lambda d: d["changes"][1].update(address='worker["ENG-001"]'),
        UntrustedPlan,
        "does not match",
    ),
    (
        "an inactivation of an agreement that is closed",
        lambda d: d["changes"][1].update(
            externalId="ENG-007", agreementId=7, address='worker["ENG-007"]'
        ),
        StalePlan,
        "agreement 7 is no longer open",
    ),
    (
        "a plan from the future",
        lambda d: d.update(created_at="2099-01-01T00:00:00Z"),
        UntrustedPlan,
        "in the future",
    ),
]


@pytest.mark.parametrize(
    ("name", "edit", "error", "message"), SIGNED_EDITS, ids=[e[0] for e in SIGNED_EDITS]
)
def test_a_signed_plan_is_still_checked_against_the_account(
    tmp_path: Path, name: str, edit, error: type[Exception], message: str
) -> None:
    desired, live = quickstart()
    path = _save(tmp_path, desired, live)
    document = json.loads(path.read_text())
    edit(document)
    document["mac"] = sign(document, KEY)
    write_saved_plan(path, document)
    saved = load_saved_plan(path, KEY)
    with pytest.raises(error, match=message):
        _resume(saved, live, environ={}, now=NOW)


def test_safety_is_judged_again_on_the_live_account(tmp_path: Path) -> None:
    desired, live = quickstart()
    path = _save(tmp_path, dataclasses.replace(desired, policy=Policy()), live)
    document = json.loads(path.read_text())
    document["safety"] = {
        "owned_open_agreements": 1000,
        "max_inactivations": {"value": "0", "is_share": False},
    }
    document["mac"] = sign(document, KEY)
    write_saved_plan(path, document)
    plan = _resume(load_saved_plan(path, KEY), live, environ={}, now=NOW)
    # ENG-001, 002, 003, 005 and 006 are open and owned; OPS-001 and the unnamed one are not.
    assert plan.safety.owned_open == diff(desired, live).safety.owned_open == 5
    assert not plan.safety.safe  # one inactivation over a limit of 0


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["changes"].insert(0, _invite("ENG-666")),
        lambda d: d["safety"].update(owned_open_agreements=1000),
        lambda d: d.update(created_at="2099-01-01T00:00:00Z"),
        lambda d: d["changes"][1].update(agreementId=8),
    ],
)
def test_any_edit_without_the_key_is_refused(tmp_path: Path, edit) -> None:
    desired, live = quickstart()
    path = _save(tmp_path, desired, live)
    document = json.loads(path.read_text())
    edit(document)
    write_saved_plan(path, document)
    with pytest.raises(UntrustedPlan, match="changed after it was made"):
        load_saved_plan(path, KEY)
