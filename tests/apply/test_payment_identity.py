"""One identity for a payment, through the CLI against the sandbox.

A description that only looks like a paid one (NFD for NFC, an invisible character on the
service's side) is "paid before"; an invisible character in the files is refused at its line;
a payee written in another form of a worker's email is paid at the email the service knows,
and one that matches two workers alike is refused. The sandbox's request log says what was sent.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.apply.support import QUICKSTART, SEED, cli, paylist_posts, request_seq
from tests.cli import reconciler

PAID = "Prime de décembre"  # NFC: é is one code point
NFD = unicodedata.normalize("NFD", PAID)


def _payrun(payrun_id: str, description: str, email: str = "ada@example.com") -> str:
    return (
        f"payruns:\n  - id: {payrun_id}\n    description: December\n    payments:\n"
        f'      - {{email: "{email}", amount: "1500.00", description: "{description}"}}\n'
    )


def _file(folder: Path, text: str, name: str) -> Path:
    path = folder / name
    path.write_text(QUICKSTART.read_text() + text, encoding="utf-8")
    return path


def _headers(server: SandboxServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}"}


def _payments(server: SandboxServer) -> list[dict[str, Any]]:
    base = f"{server.base_url}/payment-agent/paylists"
    found = []
    for paylist in httpx.get(base, headers=_headers(server)).json()["content"]:
        url = f"{base}/{paylist['paylistId']}/payments"
        found += httpx.get(url, headers=_headers(server)).json()["content"]
    return found


@pytest.fixture
def demo() -> Iterator[SandboxServer]:
    with SandboxServer(seed=SEED, process_delay_ms=0) as server:
        yield server


def _paid_through_the_service(server: SandboxServer, description: str) -> None:
    """A SUCCESS payment made outside the files (by the service's API), settled at once."""
    body = {
        "description": "paid by hand",
        "idempotence_key": "paid-by-hand".ljust(32, "0"),
        "payments": [
            {"description": description, "amount": 1500, "worker_email": "ada@example.com"}
        ],
    }
    made = httpx.post(
        f"{server.base_url}/payment-agent/paylists", json=body, headers=_headers(server)
    )
    assert made.is_success, made.text
    httpx.post(f"{server.base_url}/_sandbox/process")
    assert [p["status"] for p in _payments(server)] == ["SUCCESS"]


@pytest.mark.parametrize(
    ("paid_as", "written"),
    [
        (PAID, NFD),
        (NFD, PAID),
        (PAID + "\u200b", PAID),
        ("\u200e" + PAID, PAID),
        # Every other way to look the same: a space that is not U+0020, two spaces (a Markdown
        # comment shows one), a default-ignorable or blank character, full-width letters.
        (PAID.replace(" ", "\u00a0"), PAID),
        (PAID.replace(" ", "\u3000"), PAID),
        (PAID.replace(" ", "  "), PAID),
        (PAID.replace(" ", "\u2028", 1), PAID),
        (PAID + "\ufe0f", PAID),
        ("Prime de d\u034fécembre", PAID),
        (PAID + "\u3164", PAID),
        (PAID + "\u2800", PAID),
        ("Ｐrime de décembre", PAID),
    ],
    ids=[
        "NFD-after-NFC",
        "NFC-after-NFD",
        "trailing-zero-width-space-paid",
        "bidi-mark-paid",
        "no-break-spaces-paid",
        "ideographic-spaces-paid",
        "double-spaces-paid",
        "line-separator-paid",
        "variation-selector-paid",
        "grapheme-joiner-paid",
        "hangul-filler-paid",
        "braille-blank-paid",
        "full-width-letter-paid",
    ],
)
def test_a_payment_that_only_looks_different_is_paid_before_and_nothing_is_sent(
    demo: SandboxServer, tmp_path: Path, paid_as: str, written: str
) -> None:
    _paid_through_the_service(demo, paid_as)
    path = _file(tmp_path, _payrun("2026-12-bonus", written), "bonus.yaml")
    since = request_seq(demo)

    applied = cli("apply", str(path), "--auto-approve", server=demo)

    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert "paid already in paylist 1 with the same amount, email and description" in applied.stdout
    assert paylist_posts(demo, since) == []
    assert len(_payments(demo)) == 1  # the worker was paid once


@pytest.mark.parametrize(
    ("description", "said"),
    [
        ("Prime de décembre\\u200B", "holds U+200B, which print as nothing"),
        ("\\u202EPrime de décembre", "holds U+202E"),
        ("Prime\\u00ADde décembre", "holds U+00AD"),
        ("Prime de décembre ", "white space at its start or end"),
        ("Prime\\u00A0de décembre", "holds U+00A0, white space a plan shows as a plain space"),
        ("Prime\\u3000de décembre", "holds U+3000, white space a plan shows as a plain space"),
        ("Prime\\u2028de décembre", "holds U+2028, white space a plan shows as a plain space"),
        ("Prime de décembre\\uFE0F", "holds U+FE0F, which print as nothing"),
        ("Prime de d\\u034Fécembre", "holds U+034F, which print as nothing"),
        ("Prime de décembre\\u3164", "holds U+3164, which print as nothing"),
        ("Prime de décembre\\u2800", "holds U+2800, which print as nothing"),
    ],
    ids=[
        "zero-width-space",
        "bidi-override",
        "soft-hyphen",
        "trailing-space",
        "no-break-space",
        "ideographic-space",
        "line-separator",
        "variation-selector",
        "grapheme-joiner",
        "hangul-filler",
        "braille-blank",
    ],
)
def test_a_description_with_a_hidden_character_is_refused_at_its_line(
    tmp_path: Path, description: str, said: str
) -> None:
    text = _payrun("2026-12-bonus", description)
    clean = _payrun("2026-12-bonus", "clean")
    payrun_level = clean.replace("description: December", f'description: "{description}"')
    for name, written, line in (("payment.yaml", text, 50), ("payrun.yaml", payrun_level, 48)):
        path = _file(tmp_path, written, name)
        validated = reconciler("validate", str(path))
        assert validated.returncode == 1, validated.stdout
        found = [row for row in validated.stdout.splitlines() if said in row]
        assert len(found) == 1, validated.stdout
        assert found[0].startswith(f"{path}:{line}:"), (found, validated.stdout)


def test_the_same_payment_written_in_nfc_and_nfd_is_a_duplicate_in_the_files(
    tmp_path: Path,
) -> None:
    text = _payrun("2026-12-bonus", PAID) + (
        f'      - {{email: "ADA@example.com", amount: "1500.00", description: "{NFD}"}}\n'
    )
    validated = reconciler("validate", str(_file(tmp_path, text, "twice.yaml")))
    assert validated.returncode == 1
    assert "is given twice" in validated.stdout and "first at line 50" in validated.stdout


def _seeded(tmp_path: Path, *emails: str) -> Path:
    """The demo seed, with ACTIVE workers (no externalId: outside the files) at these emails."""
    extra = "".join(
        f"  - firstName: P{n}\n    lastName: Q\n    email: {email}\n    country: DE\n"
        "    status: ACTIVE\n"
        for n, email in enumerate(emails)
    )
    text = SEED.read_text(encoding="utf-8").replace("webhook:\n", extra + "webhook:\n", 1)
    path = tmp_path / "seed.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_payee_is_paid_at_the_email_the_service_knows(tmp_path: Path) -> None:
    """ASCII case and the domain by IDNA name one mailbox: the payee is paid at the email the
    service holds. An NFD form, or `strasse@` for `straße@`, is another mailbox: refused,
    the look-alike named (escaped), and nothing is sent."""
    seed = _seeded(tmp_path, "rené@example.com", "straße@example.com")
    text = _payrun("2026-12-bonus", "one", "René@Example.COM")
    path = _file(tmp_path, text, "payees.yaml")
    nfd = unicodedata.normalize("NFD", "René@Example.COM")
    twins = _payrun("2026-12-twins", "one", nfd) + (
        '      - {email: "strasse@example.com", amount: "10.00", description: "two"}\n'
    )
    other = _file(tmp_path, twins, "twins.yaml")
    with SandboxServer(seed=seed, process_delay_ms=0) as server:
        planned = cli("plan", str(path), server=server)
        # Payment text is shown in ASCII: the non-ASCII characters escaped, as JSON does.
        assert '"ren\\u00e9@example.com"' in planned.stdout, planned.stdout
        since = request_seq(server)
        refused = cli("apply", str(other), "--auto-approve", server=server)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert '("ren\\u00e9@example.com" only looks alike' in refused.stdout, refused.stdout
        assert '("stra\\u00dfe@example.com" only looks alike' in refused.stdout, refused.stdout
        assert paylist_posts(server, since) == []
        applied = cli("apply", str(path), "--auto-approve", server=server)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        paid = sorted((p["worker_email"], p["status"]) for p in _payments(server))
    assert paid == [("rené@example.com", "SUCCESS")]


TWINS = [
    ("strasse@example.com", "straße@example.com"),
    ("sam@example.com", "\u017fam@example.com"),  # the long s
    ("fin@example.com", "\ufb01n@example.com"),  # the fi ligature
    ("kim@example.com", "\u212aim@example.com"),  # the Kelvin sign
]
TWIN_IDS = ["sharp-s", "long-s", "fi-ligature", "kelvin-sign"]


@pytest.mark.parametrize(("plain", "twin"), TWINS, ids=TWIN_IDS)
def test_a_payee_whose_only_active_look_alike_is_another_mailbox_is_refused(
    tmp_path: Path, plain: str, twin: str
) -> None:
    """The twin is never paid for the payee written, and its payments are not "paid before"."""
    seed = _seeded(tmp_path, twin)
    path = _file(tmp_path, _payrun("2026-12-bonus", "one", plain), "twin.yaml")
    with SandboxServer(seed=seed, process_delay_ms=0) as server:
        since = request_seq(server)
        applied = cli("apply", str(path), "--auto-approve", server=server)
        assert applied.returncode == 1, applied.stdout + applied.stderr
        hint = f"the payee has no ACTIVE agreement ({json.dumps(twin)} only looks alike"
        assert hint in applied.stdout, applied.stdout
        assert paylist_posts(server, since) == []


@pytest.mark.parametrize(("plain", "twin"), TWINS[:3], ids=TWIN_IDS[:3])
def test_two_active_mailboxes_that_look_alike_are_two_payees_flagged_for_review(
    tmp_path: Path, plain: str, twin: str
) -> None:
    """Unicode case folding or compatibility forms would join them; the service keeps them
    apart, so the payment goes to the mailbox written, and the plan flags the twin, escaped.
    (The sandbox lower-cases as Python does, which joins the Kelvin sign with `k`: it holds
    no two open agreements for those, so that pair is only refused, above.)"""
    seed = _seeded(tmp_path, plain, twin)
    path = _file(tmp_path, _payrun("2026-12-bonus", "one", plain.capitalize()), "both.yaml")
    with SandboxServer(seed=seed, process_delay_ms=0) as server:
        planned = cli("plan", str(path), server=server)
        assert f"! review the payee {json.dumps(plain)}: {json.dumps(twin)}" in planned.stdout, (
            planned.stdout
        )
        commented = cli("plan", str(path), "--format", "markdown", server=server)
        flag = f"review the payee {json.dumps(plain)}: {json.dumps(twin)}".replace("\\", "\\\\")
        assert flag in commented.stdout, commented.stdout
        applied = cli("apply", str(path), "--auto-approve", server=server)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        paid = [(p["worker_email"], p["status"]) for p in _payments(server)]
    assert paid == [(plain, "SUCCESS")]


def test_two_active_workers_at_one_mailbox_written_two_ways_are_refused_saying_what_to_do(
    tmp_path: Path,
) -> None:
    """The service keys `rene@bücher.example` and `rene@xn--bcher-kva.example` apart; the
    payee rule reads one mailbox in both. Whichever the file writes, it names both: the
    payrun is refused, saying to end the other agreement (writing it otherwise cannot help),
    and nothing is sent."""
    unicode_form, ascii_form = "rene@bücher.example", "rene@xn--bcher-kva.example"
    seed = _seeded(tmp_path, unicode_form, ascii_form)
    for written in (unicode_form, ascii_form):
        path = _file(tmp_path, _payrun("2026-12-bonus", "one", written), "idna.yaml")
        with SandboxServer(seed=seed, process_delay_ms=0) as server:
            since = request_seq(server)
            applied = cli("apply", str(path), "--auto-approve", server=server)
            said = " ".join(applied.stdout.split())
            assert applied.returncode == 1, said + applied.stderr
            assert "one mailbox written two ways" in said, said
            assert "end the agreement that is not the payee's" in said, said
            assert paylist_posts(server, since) == []
