"""`reconciler adopt` end to end: a subprocess against a seeded sandbox, the files on disk.

The account below was changed in the service's own screens: ENG-002's job title, ENG-006
invited and active but in no file, ENG-007's agreement ended, the webhook given another event
type, a second header and a new value for its token. Adopt only reads, so one sandbox serves
the module; each test writes its own files.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler as run
from tests.plan.test_plan_cli import last_seq, requests_since

LIVE_TOKEN = "live-token-4f1d9c"  # what the service holds for X-Hook-Token
LIVE_EXTRA = "extra-secret-77aa01"  # what it holds for the header no file names yet

SEED = f"""\
workers:
  - {{externalId: ENG-001, firstName: Ada, lastName: Lovelace, email: ada@example.com,
     country: GB, jobTitle: Engineer, status: ACTIVE}}
  - {{externalId: ENG-002, firstName: Grace, lastName: Hopper, email: grace@example.com,
     country: US, jobTitle: Principal Engineer, status: ACTIVE}}
  - {{externalId: ENG-006, firstName: Edsger, lastName: Dijkstra, email: edsger@example.com,
     country: NL, jobTitle: Researcher, status: ACTIVE}}
  - {{externalId: ENG-007, firstName: Barbara, lastName: Liskov, email: barbara@example.com,
     country: US, status: ENDED}}
  - {{externalId: OPS-001, firstName: Linus, lastName: Ops, email: linus@example.com,
     country: FI, status: ACTIVE}}
webhook:
  url: https://hooks.example.com/workforce
  event_types: [KYC, PAYMENT]
  headers:
    - {{name: X-Hook-Token, value: {LIVE_TOKEN}}}
    - {{name: X-Extra, value: {LIVE_EXTRA}}}
"""

SETTINGS = """\
# yaml-language-server: $schema=../schemas/desired-state.schema.json
version: 1
scope:
  externalIdPrefix: "ENG-"   # ours
policy:
  prune: true
"""

WORKERS = """\
# The engineering team.
workers:
  - externalId: ENG-001
    typeOfWorker: Worker
    workerName: 'Ada'          # quoted on purpose
    workerSurname: Lovelace
    workerEmail: ada@example.com
    countryIso: GB
    jobTitle: "Engineer"

  - externalId: ENG-002       # Grace
    typeOfWorker: Worker
    workerName: Grace
    workerSurname: Hopper
    workerEmail: grace@example.com
    countryIso: US
    jobTitle: "Staff Engineer"   # promoted?

  - externalId: ENG-007
    typeOfWorker: Worker
    workerName: Barbara
    workerSurname: Liskov
    workerEmail: barbara@example.com
    countryIso: US
# end of the team
"""

WEBHOOK = """\
webhook:
  url: https://hooks.example.com/workforce
  headers:
    - name: X-Hook-Token
      value: ${HOOK_TOKEN}   # from the CI's secrets
  event_types:
    - KYC
"""


@pytest.fixture(scope="module")
def account(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    seed = tmp_path_factory.mktemp("seed") / "seed.yaml"
    seed.write_text(SEED)
    with SandboxServer(seed=seed) as server:
        yield server


def state(tmp_path: Path) -> Path:
    """The desired state as a folder: the settings and the webhook, then the workers."""
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "00-settings.yaml").write_text(SETTINGS + WEBHOOK)
    (folder / "10-workers.yaml").write_text(WORKERS)
    return folder


def single(tmp_path: Path) -> Path:
    path = tmp_path / "state.yaml"
    path.write_text(SETTINGS + WORKERS + WEBHOOK)
    return path


def texts(folder: Path) -> dict[str, str]:
    return {file.name: file.read_text() for file in sorted(folder.iterdir())}


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    """The lines removed and the lines added, from one text to the other."""
    removed, added = [], []
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


def test_a_drifted_field_changes_its_one_line(account: SandboxServer, tmp_path: Path) -> None:
    folder = state(tmp_path)
    before = texts(folder)
    result = run(
        "adopt",
        str(folder),
        "--only",
        'worker["ENG-002"].jobTitle',
        server=account,
        HOOK_TOKEN=LIVE_TOKEN,
    )
    assert result.returncode == 0, result.stderr
    after = texts(folder)
    assert after["00-settings.yaml"] == before["00-settings.yaml"]
    removed, added = changed_lines(before["10-workers.yaml"], after["10-workers.yaml"])
    assert removed == ['    jobTitle: "Staff Engineer"   # promoted?']
    assert added == ['    jobTitle: "Principal Engineer"   # promoted?']
    assert '-    jobTitle: "Staff Engineer"   # promoted?' in result.stdout
    assert '+    jobTitle: "Principal Engineer"   # promoted?' in result.stdout
    assert 'worker["ENG-002"].jobTitle: "Staff Engineer" -> "Principal Engineer"' in result.stderr


def test_an_open_agreement_no_file_lists_is_added_and_nothing_else_changes(
    account: SandboxServer, tmp_path: Path
) -> None:
    folder = state(tmp_path)
    before = texts(folder)
    result = run(
        "adopt", str(folder), "--only", 'worker["ENG-006"]', server=account, HOOK_TOKEN="x"
    )
    assert result.returncode == 0, result.stderr
    after = texts(folder)
    removed, added = changed_lines(before["10-workers.yaml"], after["10-workers.yaml"])
    assert removed == []
    assert added == [
        "  - externalId: ENG-006",
        "    typeOfWorker: Worker",
        "    workerName: Edsger",
        "    workerSurname: Dijkstra",
        "    workerEmail: edsger@example.com",
        "    countryIso: NL",
        "    jobTitle: Researcher",
    ]
    # Only the file that holds the workers changed; ENG-006 was put after the last worker.
    assert {name for name in before if before[name] != after[name]} == {"10-workers.yaml"}
    assert after["10-workers.yaml"].index("ENG-006") > after["10-workers.yaml"].index("ENG-007")


def test_a_worker_whose_agreement_the_service_ended_gets_ended_written(
    account: SandboxServer, tmp_path: Path
) -> None:
    # Closed in the service (issue 48): the item stays, so a paid payrun naming it stays
    # valid; one line says the contract ended, the day adopt saw it.
    path = single(tmp_path)
    before = path.read_text()
    result = run("adopt", str(path), "--only", 'worker["ENG-007"]', server=account, HOOK_TOKEN="x")
    assert result.returncode == 0, result.stderr
    removed, added = changed_lines(before, path.read_text())
    assert removed == []
    assert added == [f'    ended: "{datetime.now(UTC).date().isoformat()}"']
    assert path.read_text().index("ended:") > path.read_text().index("barbara@example.com")
    assert "# end of the team" in path.read_text()
    assert 'worker["ENG-007"]: agreement' in result.stderr and "ENDED" in result.stderr


def test_webhook_headers_are_written_as_references_never_as_values(
    account: SandboxServer, tmp_path: Path
) -> None:
    folder = state(tmp_path)
    before = texts(folder)
    result = run(
        "adopt", str(folder), "--only", "webhook*", server=account, HOOK_TOKEN="an-old-value"
    )
    assert result.returncode == 0, result.stderr
    after = texts(folder)
    webhook = after["00-settings.yaml"]
    # The reference is kept (its line too); the new header reads a variable named after it.
    assert "      value: ${HOOK_TOKEN}   # from the CI's secrets" in webhook
    assert '    - name: X-Extra\n      value: "${WEBHOOK_HEADER_X_EXTRA}"' in webhook
    assert "    - KYC\n    - PAYMENT\n" in webhook
    assert after["10-workers.yaml"] == before["10-workers.yaml"]
    # adopt says which variables must hold what the service has, never the values.
    assert "HOOK_TOKEN" in result.stderr and "WEBHOOK_HEADER_X_EXTRA" in result.stderr
    everything = result.stdout + result.stderr + "".join(after.values())
    assert LIVE_TOKEN not in everything and LIVE_EXTRA not in everything
    assert not any(LIVE_EXTRA in file.read_text() for file in tmp_path.rglob("*") if file.is_file())


def test_after_adopting_everything_plan_has_no_changes_and_only_reads_were_sent(
    account: SandboxServer, tmp_path: Path
) -> None:
    folder = state(tmp_path)
    assert (
        run(
            "plan", str(folder), "--detailed-exitcode", server=account, HOOK_TOKEN=LIVE_TOKEN
        ).returncode
        == 2
    )
    since = last_seq(account)
    result = run("adopt", str(folder), server=account, HOOK_TOKEN=LIVE_TOKEN)
    assert result.returncode == 0, result.stderr
    methods = {entry["method"] for entry in requests_since(account, since)}
    assert methods == {"GET"}
    environ = {"HOOK_TOKEN": LIVE_TOKEN, "WEBHOOK_HEADER_X_EXTRA": LIVE_EXTRA}
    planned = run("plan", str(folder), "--detailed-exitcode", server=account, **environ)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "drifted" in planned.stdout and "0 drifted" in planned.stdout
    drift = run("drift", str(folder), server=account, **environ)
    assert drift.returncode == 0, drift.stdout
    again = run("adopt", str(folder), "--dry-run", server=account, **environ)
    assert again.returncode == 0 and again.stdout == ""
    assert "Nothing to adopt" in again.stderr


def test_only_adopts_what_it_names(account: SandboxServer, tmp_path: Path) -> None:
    path = single(tmp_path)
    before = path.read_text()
    result = run(
        "adopt", str(path), "--only", 'worker["ENG-00[2]"].*', server=account, HOOK_TOKEN="x"
    )
    assert result.returncode == 0, result.stderr
    assert path.read_text() == before  # brackets are the address's own, not a glob's class
    result = run(
        "adopt", str(path), "--only", "webhook.event_types", server=account, HOOK_TOKEN="x"
    )
    assert result.returncode == 0, result.stderr
    removed, added = changed_lines(before, path.read_text())
    assert (removed, added) == ([], ["    - PAYMENT"])
    assert "X-Extra" not in path.read_text() and "ENG-006" not in path.read_text()


def test_dry_run_prints_the_diff_writes_nothing_and_exits_2(
    account: SandboxServer, tmp_path: Path
) -> None:
    folder = state(tmp_path)
    before = texts(folder)
    result = run("adopt", str(folder), "--dry-run", server=account, HOOK_TOKEN=LIVE_TOKEN)
    assert result.returncode == 2, result.stderr
    assert texts(folder) == before
    assert f"--- a/{folder}/10-workers.yaml" in result.stdout
    assert "+  - externalId: ENG-006" in result.stdout
    assert f'+    ended: "{datetime.now(UTC).date().isoformat()}"' in result.stdout
    assert "Nothing written (--dry-run)." in result.stderr


def test_new_workers_go_into_the_file_named_by_into(account: SandboxServer, tmp_path: Path) -> None:
    folder = state(tmp_path)
    before = texts(folder)
    into = folder / "30-new.yaml"
    result = run(
        "adopt",
        str(folder),
        "--only",
        'worker["ENG-006"]',
        "--into",
        str(into),
        server=account,
        HOOK_TOKEN="x",
    )
    assert result.returncode == 0, result.stderr
    assert texts(folder) == before | {"30-new.yaml": into.read_text()}
    assert into.read_text().startswith("workers:\n  - externalId: ENG-006\n")
    outside = run(
        "adopt",
        str(folder),
        "--into",
        str(tmp_path / "elsewhere.yaml"),
        server=account,
        HOOK_TOKEN="x",
    )
    assert outside.returncode == 1 and "must be directly inside" in outside.stderr


def test_an_invalid_file_is_refused_unchanged(account: SandboxServer, tmp_path: Path) -> None:
    folder = state(tmp_path)
    broken = WORKERS.replace("countryIso: GB", "countryIso: XX")
    (folder / "10-workers.yaml").write_text(broken)
    before = texts(folder)
    since = last_seq(account)
    result = run("adopt", str(folder), server=account, HOOK_TOKEN="x")
    assert result.returncode == 1
    assert "10-workers.yaml:8:" in result.stderr and "XX" in result.stderr
    assert texts(folder) == before
    # The account is read while the files load (as for plan); nothing but reads is sent.
    assert {entry["method"] for entry in requests_since(account, since)} <= {"GET"}


def test_an_unanswered_invitation_is_listed_not_adopted(tmp_path: Path) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text(
        "workers:\n"
        "  - {externalId: ENG-009, firstName: Kat, lastName: Johnson, email: kat@example.com,\n"
        "     country: US, status: INVITATION_SENT}\n"
    )
    path = tmp_path / "state.yaml"
    path.write_text("version: 1\nworkers: []\n")
    with SandboxServer(seed=seed) as server:
        result = run("adopt", str(path), "--dry-run", server=server)
    assert result.returncode == 0, result.stderr
    assert path.read_text() == "version: 1\nworkers: []\n"
    assert 'worker["ENG-009"]: the service does not show its typeOfWorker' in result.stderr
    assert "until the worker answers the invitation" in result.stderr


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_block_scalar_is_replaced_and_the_blank_lines_after_it_stay(
    account: SandboxServer, tmp_path: Path, newline: str
) -> None:
    # A block scalar's end mark lies past the blank lines after it: they are the file's own.
    path = tmp_path / "state.yaml"
    folded = WORKERS.replace(
        '    jobTitle: "Staff Engineer"   # promoted?\n',
        "    jobTitle: >-\n      Staff\n      Engineer\n\n",
    )
    text = SETTINGS + folded + WEBHOOK
    path.write_bytes(text.replace("\n", newline).encode())
    only = 'worker["ENG-002"].jobTitle'
    result = run("adopt", str(path), "--only", only, server=account, HOOK_TOKEN="x")
    assert result.returncode == 0, result.stderr
    wanted = text.replace(
        "    jobTitle: >-\n      Staff\n      Engineer\n", "    jobTitle: Principal Engineer\n"
    )
    assert path.read_bytes() == wanted.replace("\n", newline).encode()


def test_a_live_value_no_file_can_hold_is_listed_and_the_rest_adopted(tmp_path: Path) -> None:
    # The service's screens took what a file refuses (a line break, a tab, only
    # spaces): that item is listed with why; the others are still adopted.
    seed = tmp_path / "seed.yaml"
    seed.write_text(
        "workers:\n"
        "  - {externalId: ENG-001, firstName: Ada, lastName: Lovelace, email: ada@example.com,\n"
        '     country: GB, jobTitle: "Principal\\nEngineer", status: ACTIVE}\n'
        "  - {externalId: ENG-002, firstName: Grace, lastName: Hopper, email: grace@example.com,\n"
        "     country: US, jobTitle: Director, status: ACTIVE}\n"
        "  - {externalId: ENG-003, firstName: Alan, lastName: Turing, email: alan@example.com,\n"
        '     country: GB, jobTitle: "   ", status: ACTIVE}\n'
        '  - {externalId: ENG-004, firstName: "Kat\\tJ", lastName: Johnson,\n'
        "     email: kat@example.com, country: US, status: ACTIVE}\n"
        "  - {externalId: ENG-005, firstName: Edsger, lastName: Dijkstra,\n"
        "     email: edsger@example.com, country: NL, status: ACTIVE}\n"
    )
    path = tmp_path / "state.yaml"
    text = "version: 1\nworkers:\n" + "".join(
        f"  - externalId: ENG-00{n}\n    typeOfWorker: Worker\n    workerName: {first}\n"
        f"    workerSurname: {last}\n    workerEmail: {email}\n    countryIso: {country}\n"
        "    jobTitle: Engineer\n"
        for n, first, last, email, country in [
            (1, "Ada", "Lovelace", "ada@example.com", "GB"),
            (2, "Grace", "Hopper", "grace@example.com", "US"),
            (3, "Alan", "Turing", "alan@example.com", "GB"),
        ]
    )
    path.write_text(text)
    with SandboxServer(seed=seed) as server:
        result = run("adopt", str(path), server=server)
    assert result.returncode == 0, result.stderr
    removed, added = changed_lines(text, path.read_text())
    assert removed == ["    jobTitle: Engineer"]
    assert added[0] == "    jobTitle: Director"
    assert "externalId: ENG-005" in added[1] and "ENG-004" not in path.read_text()
    assert (
        'worker["ENG-001"].jobTitle: the service\'s value "Principal\\nEngineer" holds the '
        "control character U+000A" in result.stderr
    )
    assert 'worker["ENG-003"].jobTitle: the service\'s value' in result.stderr
    assert "is empty or blank" in result.stderr
    assert (
        'worker["ENG-004"]: the service\'s workerName "Kat\\tJ" holds the control character'
        " U+0009" in result.stderr
    )


def test_an_only_that_names_nothing_does_not_say_the_files_agree(
    account: SandboxServer, tmp_path: Path
) -> None:
    path = single(tmp_path)
    before = path.read_text()
    only = 'worker["ENG-02"]'  # a typo for ENG-002, which has drifted
    typo = run("adopt", str(path), "--dry-run", "--only", only, server=account, HOOK_TOKEN="x")
    assert typo.returncode == 0 and typo.stdout == "" and path.read_text() == before
    assert "Nothing to adopt that --only names: it leaves out" in typo.stderr
    assert "already say what the account has" not in typo.stderr
    # The webhook is not what --only names: no variable of its headers is asked for either.
    assert "HOOK_TOKEN" not in typo.stderr and "WEBHOOK_HEADER" not in typo.stderr


def test_an_empty_list_given_its_first_worker_keeps_its_comment_on_its_line(
    account: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "state.yaml"
    text = SETTINGS + "workers: []   # none yet\n" + WEBHOOK
    path.write_text(text)
    only = 'worker["ENG-006"]'
    result = run("adopt", str(path), "--only", only, server=account, HOOK_TOKEN="x")
    assert result.returncode == 0, result.stderr
    removed, added = changed_lines(text, path.read_text())
    assert removed == ["workers: []   # none yet"]
    assert added[:2] == ["workers:   # none yet", "  - externalId: ENG-006"]
    assert added[-1] == "    jobTitle: Researcher"


def test_a_new_header_never_reads_a_variable_the_files_already_read(
    account: SandboxServer, tmp_path: Path
) -> None:
    # X-Hook-Token reads the very name adopt would give X-Extra: sharing it would send one
    # header's secret as the other's (or change both when the variable is set as told).
    path = tmp_path / "state.yaml"
    text = WEBHOOK.replace("${HOOK_TOKEN}", "${WEBHOOK_HEADER_X_EXTRA}")
    path.write_text("version: 1\n" + text)
    environ = {"WEBHOOK_HEADER_X_EXTRA": LIVE_TOKEN}
    result = run("adopt", str(path), "--only", "webhook.headers*", server=account, **environ)
    assert result.returncode == 0, result.stderr
    assert '    - name: X-Extra\n      value: "${WEBHOOK_HEADER_X_EXTRA_2}"' in path.read_text()
    assert 'WEBHOOK_HEADER_X_EXTRA_2: the value of the webhook header "X-Extra"' in result.stderr
    environ |= {"WEBHOOK_HEADER_X_EXTRA_2": LIVE_EXTRA}
    planned = run("plan", str(path), server=account, **environ)
    assert planned.returncode == 0, planned.stderr
    assert "headers[" not in planned.stdout


def test_a_block_list_of_event_types_all_replaced_stays_a_block_list(
    account: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "state.yaml"
    text = "version: 1\n" + WEBHOOK.replace("    - KYC\n", "    - CLIENT_WALLET_TOP_UP\n")
    path.write_text(text)
    only = "webhook.event_types"
    result = run("adopt", str(path), "--only", only, server=account, HOOK_TOKEN=LIVE_TOKEN)
    assert result.returncode == 0, result.stderr
    removed, added = changed_lines(text, path.read_text())
    assert (removed, added) == (["    - CLIENT_WALLET_TOP_UP"], ["    - KYC", "    - PAYMENT"])


def test_what_the_service_holds_is_shown_escaped_never_acting_on_the_terminal(
    tmp_path: Path,
) -> None:
    # A right-to-left override in an externalId reorders what a terminal shows after it;
    # a Cyrillic letter makes it read as another id: neither can be written, both are shown.
    seed = tmp_path / "seed.yaml"
    seed.write_text(
        "workers:\n"
        '  - {externalId: "ENG-\\u202e10", firstName: Ada, lastName: Lovelace,\n'
        "     email: ada@example.com, country: GB, status: ACTIVE}\n"
        '  - {externalId: "ENG-\\u041001", firstName: Alan, lastName: Turing,\n'
        "     email: alan@example.com, country: GB, status: ACTIVE}\n"
        "  - {externalId: ENG-002, firstName: Grace, lastName: Hopper, email: grace@example.com,\n"
        "     country: US, status: ACTIVE}\n"
    )
    path = tmp_path / "state.yaml"
    path.write_text("version: 1\nscope:\n  externalIdPrefix: ENG-\nworkers: []\n")
    with SandboxServer(seed=seed) as server:
        result = run("adopt", str(path), server=server)
    assert result.returncode == 0, result.stderr
    assert "\u202e" not in result.stderr and 'worker["ENG-\\u202e10"]: ' in result.stderr
    assert "the service's externalId mixes the Latin and Cyrillic scripts" in result.stderr
    assert "externalId: ENG-002" in path.read_text() and "ENG-\u0410" not in path.read_text()


def test_a_bidi_control_in_a_live_value_is_written_escaped(tmp_path: Path) -> None:
    # Raw, U+202E would reorder what the diff, an editor or a review shows after it.
    seed = tmp_path / "seed.yaml"
    seed.write_text(
        "workers:\n"
        '  - {externalId: ENG-001, firstName: "Ad\\u202ea", lastName: Lovelace,\n'
        "     email: ada@example.com, country: GB, status: ACTIVE}\n"
    )
    path = tmp_path / "state.yaml"
    path.write_text(
        "version: 1\nworkers:\n  - {externalId: ENG-001, typeOfWorker: Worker, workerName: Ada,"
        " workerSurname: Lovelace, workerEmail: ada@example.com, countryIso: GB}\n"
    )
    with SandboxServer(seed=seed) as server:
        result = run("adopt", str(path), server=server)
        assert result.returncode == 0, result.stderr
        assert "\u202e" not in result.stdout + result.stderr + path.read_text()
        assert 'workerName: "Ad\\u202ea"' in path.read_text()
        planned = run("plan", str(path), "--detailed-exitcode", server=server)
    assert planned.returncode == 0, planned.stdout + planned.stderr


def test_a_header_written_around_a_reference_asks_for_its_part_only(
    account: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "state.yaml"
    text = "version: 1\n" + WEBHOOK.replace("${HOOK_TOKEN}", '"Bearer ${HOOK_TOKEN}"')
    path.write_text(text)
    only = 'webhook.headers["X-Hook-Token"]'
    result = run("adopt", str(path), "--only", only, server=account, HOOK_TOKEN="old")
    assert result.returncode == 0 and path.read_text() == text, result.stderr
    # Set to the header's whole value, HOOK_TOKEN would send "Bearer Bearer ...".
    assert 'HOOK_TOKEN: its part of the value of the webhook header "X-Hook-Token"' in (
        result.stderr
    )
    assert "already say what the account has" not in result.stderr
    assert "the variables below must change" in result.stderr
