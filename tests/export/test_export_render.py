"""The pure export: live values in, file text out; read back by the loader and planned."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from reconciler.desired import InvalidDesiredState, load_desired_state
from reconciler.export import PLACEHOLDER, Export, ExportOptions, SplitBy, render_export
from reconciler.export.render import SETTINGS_FILE
from reconciler.export.webhook import header_variables
from reconciler.plan import diff
from reconciler.plan.model import LiveState
from reconciler.secrets import reveal
from reconciler.service.models import Worker
from tests.export.support import fill, placeholder_lines
from tests.plan.factories import agreement, live_state, live_webhook

ENG = ExportOptions(scope_prefix="ENG-")


def worker_block(text: str, external_id: str) -> str:
    """The lines of one exported worker, from `- externalId:` to the next worker or key."""
    match = re.search(
        rf"^  - externalId: {re.escape(external_id)}\n(?:    .*\n)*", text, flags=re.MULTILINE
    )
    assert match, f"{external_id} not exported:\n{text}"
    return match.group(0)


def only_text(export: Export) -> str:
    assert len(export.files) == 1
    return export.files[0].text


#: The live webhook's URL has a path, so export writes `${WEBHOOK_URL}`: set as a user would.
HOOK = {"WEBHOOK_URL": "https://hooks.example.com/workforce"}


def load(tmp_path: Path, text: str, environ: Mapping[str, str] | None = None) -> object:
    path = tmp_path / "exported.yaml"
    path.write_text(text, encoding="utf-8")
    return load_desired_state(path, environ=environ or {})


# --- one worker: (live agreement, the lines written, the placeholders) ------------------------

WORKER_CASES = [
    pytest.param(
        agreement(1, "ENG-001"),
        """\
  - externalId: ENG-001
    typeOfWorker: Worker
    workerName: Ada
    workerSurname: Lovelace
    workerEmail: eng-001@example.com
    countryIso: GB
    jobTitle: Engineer
""",
        (),
        id="active person",
    ),
    pytest.param(
        agreement(
            1,
            "ENG-001",
            "VERIFICATION_PENDING",
            legal_name="Acme Consulting Ltd",
            first_name="Wile",
            last_name="Coyote",
            country_iso="US",
            job_title=None,
        ),
        """\
  - externalId: ENG-001
    typeOfWorker: Business
    workerName: Wile
    workerSurname: Coyote
    workerLegalName: Acme Consulting Ltd
    workerEmail: eng-001@example.com
    countryIso: US
""",
        (),
        id="business: a legal name shows, no job title",
    ),
    pytest.param(
        agreement(1, "ENG-001", "INVITATION_SENT"),
        f"""\
  - externalId: ENG-001
    typeOfWorker: {PLACEHOLDER}
    workerName: {PLACEHOLDER}
    workerSurname: {PLACEHOLDER}
    workerEmail: eng-001@example.com
    countryIso: {PLACEHOLDER}
    jobTitle: Engineer
""",
        ("typeOfWorker", "workerName", "workerSurname", "countryIso"),
        id="unanswered invitation",
    ),
    pytest.param(
        agreement(1, "ENG-001", country="Atlantis", country_iso=None),
        f"""\
  - externalId: ENG-001
    typeOfWorker: Worker
    workerName: Ada
    workerSurname: Lovelace
    workerEmail: eng-001@example.com
    countryIso: {PLACEHOLDER}
    jobTitle: Engineer
""",
        ("countryIso",),
        id="a country name with no ISO code",
    ),
    pytest.param(
        agreement(1, "ENG-001", first_name="Yes", last_name="null", country_iso="NO"),
        """\
  - externalId: ENG-001
    typeOfWorker: Worker
    workerName: "Yes"
    workerSurname: "null"
    workerEmail: eng-001@example.com
    countryIso: "NO"
    jobTitle: Engineer
""",
        (),
        id="values YAML would read as booleans and null are quoted",
    ),
]


@pytest.mark.parametrize(("live", "lines", "placeholders"), WORKER_CASES)
def test_one_worker(live: Worker, lines: str, placeholders: tuple[str, ...]) -> None:
    export = render_export(live_state(live), ENG)
    assert worker_block(only_text(export), "ENG-001") == lines
    assert [item.fields for item in export.unfinished] == ([placeholders] if placeholders else [])
    assert export.needs_placeholders is bool(placeholders)


def test_an_unmappable_country_is_explained_in_the_comment_block() -> None:
    text = only_text(
        render_export(
            live_state(agreement(1, "ENG-001", country="Atlantis", country_iso=None)), ENG
        )
    )
    assert 'the service shows the country as "Atlantis", which has no ISO code' in text


# --- what is exported ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "exported"),
    [
        ("ACTIVE", True),
        ("INVITATION_SENT", True),
        ("VERIFICATION_PENDING", True),
        ("ENDED", False),
        ("INACTIVATED", False),
        ("ARCHIVED", False),  # a status the service may add one day: not known to be open
    ],
)
def test_only_open_agreements_are_exported(status: str, exported: bool) -> None:
    export = render_export(live_state(agreement(1, "ENG-001", status)), ENG)
    assert ("ENG-001" in only_text(export)) is exported
    assert export.workers == int(exported)


def test_workers_are_sorted_by_external_id_whatever_the_service_order() -> None:
    ids = ["ENG-010", "ENG-002", "ENG-100", "ENG-001", "ENG-02"]
    live = live_state(*(agreement(number, eid) for number, eid in enumerate(ids, 1)))
    text = only_text(render_export(live, ENG))
    assert re.findall(r"externalId: (\S+)", text) == sorted(ids)


def test_scope_prefix_exports_only_its_workers_and_writes_the_scope() -> None:
    live = live_state(agreement(1, "ENG-001"), agreement(2, "OPS-001"), agreement(3, "ENG-002"))
    export = render_export(live, ENG)
    text = only_text(export)
    assert "scope:\n  externalIdPrefix: ENG-\n" in text
    assert "OPS-001" not in text and "ops-001@example.com" not in text
    assert (export.workers, export.outside_scope) == (2, 1)


def test_without_a_scope_every_external_id_is_exported_and_no_scope_written() -> None:
    live = live_state(agreement(1, "ENG-001"), agreement(2, "OPS-001"))
    export = render_export(live, ExportOptions())
    assert "scope:" not in only_text(export)
    assert (export.workers, export.outside_scope) == (2, 0)


def test_unmanaged_workers_are_left_out_unless_asked_for() -> None:
    live = live_state(agreement(1, "ENG-001"), agreement(7, None, "VERIFICATION_PENDING"))
    quiet = render_export(live, ENG)
    assert "a7@example.com" not in only_text(quiet)
    assert [worker.agreement_id for worker in quiet.unmanaged] == [7]
    listed = only_text(render_export(live, ExportOptions("ENG-", include_unmanaged=True)))
    assert (
        "#   - email: a7@example.com\n#     agreementId: 7\n#     status: VERIFICATION_PENDING\n"
    ) in listed
    assert "end its agreement in the service" in listed and "with an externalId" in listed


def test_a_comment_cannot_be_broken_out_of_by_a_value() -> None:
    hostile = "x@example.com\nworkers: []\n#"
    live = live_state(agreement(7, None, email=hostile))
    text = only_text(render_export(live, ExportOptions(include_unmanaged=True)))
    assert "\nworkers: []\n#\n" not in text
    assert '#   - email: "x@example.com\\nworkers: []\\n#"' in text


def test_several_open_agreements_export_the_first_and_list_the_others() -> None:
    live = live_state(agreement(9, "ENG-001"), agreement(4, "ENG-001", "INVITATION_SENT"))
    export = render_export(live, ENG)
    text = only_text(export)
    assert text.count("externalId: ENG-001") == 1
    assert worker_block(text, "ENG-001").count(PLACEHOLDER) == 4  # agreement 4, unanswered
    assert "#   - ENG-001: exported agreementId 4; also agreementId 9 (ACTIVE" in text
    assert [(c.exported.agreement_id, len(c.others)) for c in export.conflicts] == [(4, 1)]


def test_an_account_with_no_workers_exports_an_empty_list() -> None:
    text = only_text(render_export(live_state(), ENG))
    assert "\nworkers: []\n" in text


# --- the webhook -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "variables"),
    [
        (["X-Webhook-Token"], ["WEBHOOK_HEADER_X_WEBHOOK_TOKEN"]),
        (["authorization"], ["WEBHOOK_HEADER_AUTHORIZATION"]),
        (["x.api~key"], ["WEBHOOK_HEADER_X_API_KEY"]),
        (
            ["X-Token", "X_Token", "x.token"],
            [f"WEBHOOK_HEADER_X_TOKEN{s}" for s in ("", "_2", "_3")],
        ),
    ],
)
def test_header_variable_names(names: list[str], variables: list[str]) -> None:
    webhook = live_webhook(url="https://h.example.com", headers=tuple((n, "v") for n in names))
    assert [v.variable for v in header_variables(webhook)] == variables


def test_webhook_headers_become_placeholders_and_no_secret_is_written() -> None:
    secret = "s3cr3t-Vq8zK2pLx9"
    webhook = live_webhook(
        events=("KYC", "PAYMENT"), headers=(("X-Webhook-Token", secret), ("X-Env", "prod"))
    )
    export = render_export(live_state(webhook=webhook), ENG)
    text = only_text(export)
    assert secret not in text and "prod" not in text
    assert text.endswith(
        """\
webhook:
  url: "${WEBHOOK_URL}"
  enabled: true
  headers:
    - name: X-Webhook-Token
      value: "${WEBHOOK_HEADER_X_WEBHOOK_TOKEN}"
    - name: X-Env
      value: "${WEBHOOK_HEADER_X_ENV}"
  event_types:
    - KYC
    - PAYMENT
"""
    )
    assert [(v.variable, v.header) for v in export.header_variables] == [
        ("WEBHOOK_HEADER_X_WEBHOOK_TOKEN", "X-Webhook-Token"),
        ("WEBHOOK_HEADER_X_ENV", "X-Env"),
        ("WEBHOOK_URL", "url"),
    ]


def test_a_disabled_webhook_and_a_url_holding_a_dollar_brace(tmp_path: Path) -> None:
    url = "https://hooks.example.com/${x}/w"
    live = live_state(webhook=live_webhook(url=url, enabled=False))
    text = only_text(render_export(live, ENG))
    assert "  enabled: false\n" in text and '  url: "${WEBHOOK_URL}"\n' in text
    state = load(tmp_path, text, {"WEBHOOK_URL": url})
    assert state.webhook is not None and reveal(state.webhook.url) == url  # type: ignore[attr-defined]


URL_CASES = [
    ("https://h.example.com", "https://h.example.com", {}),
    ("https://h.example.com/", "https://h.example.com/", {}),
    ("https://h.example.com:8443", "https://h.example.com:8443", {}),
    # Anything past the host may be the credential: a path, a query, a fragment, a user.
    ("https://h.example.com/hook", "${WEBHOOK_URL}", {"WEBHOOK_URL": "url"}),
    ("https://h.example.com/T0/B0/s3cr3tPath", "${WEBHOOK_URL}", {"WEBHOOK_URL": "url"}),
    ("https://h.example.com/?token=s3cr3t", "${WEBHOOK_URL}", {"WEBHOOK_URL": "url"}),
    ("https://h.example.com#s3cr3t", "${WEBHOOK_URL}", {"WEBHOOK_URL": "url"}),
    ("https://user:pw@h.example.com", "${WEBHOOK_URL}", {"WEBHOOK_URL": "url"}),
]


@pytest.mark.parametrize(("url", "written", "variables"), URL_CASES)
def test_a_url_past_its_host_is_written_as_a_variable(
    tmp_path: Path, url: str, written: str, variables: dict[str, str]
) -> None:
    export = render_export(live_state(webhook=live_webhook(url=url)), ENG)
    text = only_text(export)
    assert f"  url: {written}\n" in text or f'  url: "{written}"\n' in text
    found = {v.variable: v.header for v in export.header_variables if v.in_url}
    assert found == variables
    if variables:
        assert url.split("//", 1)[1] not in text
    state = load(tmp_path, text, {"WEBHOOK_URL": url} if variables else {})
    assert state.webhook is not None and reveal(state.webhook.url) == url  # type: ignore[attr-defined]


def test_no_webhook_in_the_account_means_none_in_the_file() -> None:
    export = render_export(live_state(agreement(1, "ENG-001")), ENG)
    assert "webhook:" not in only_text(export) and not export.webhook


# --- the whole file --------------------------------------------------------------------------


def test_the_modeline_comes_first() -> None:
    options = ExportOptions("ENG-", schema_ref="../schemas/desired-state.schema.json")
    text = only_text(render_export(live_state(agreement(1, "ENG-001")), options))
    assert text.startswith("# yaml-language-server: $schema=../schemas/desired-state.schema.json\n")


def mixed_account() -> LiveState:
    """A bit of everything: statuses, a business, unanswered invitations, unmanaged, a webhook."""
    workers = [
        agreement(1, "ENG-001"),
        agreement(2, "ENG-002", "INVITATION_SENT"),
        agreement(3, "ENG-003", "VERIFICATION_PENDING", legal_name="Acme Ltd", country_iso="US"),
        agreement(4, "ENG-004", "ENDED"),
        agreement(5, "ENG-005", "INACTIVATED"),
        agreement(6, None, "ACTIVE"),
        agreement(7, "OPS-001"),
        agreement(8, "ENG-006", first_name="Zoë", job_title="R&D: *lead*", country_iso="NO"),
        agreement(9, "ENG-007", "INVITATION_SENT", job_title=None),
    ]
    webhook = live_webhook(events=("KYC",), headers=(("X-Webhook-Token", "t0k3n"),))
    return LiveState(tuple(workers), webhook)


def test_the_same_live_state_gives_the_same_bytes_in_any_service_order() -> None:
    live = mixed_account()
    shuffled = list(live.workers)
    random.Random(7).shuffle(shuffled)
    options = ExportOptions("ENG-", include_unmanaged=True)
    first = only_text(render_export(live, options))
    assert only_text(render_export(live, options)) == first
    assert only_text(render_export(LiveState(tuple(shuffled), live.webhook), options)) == first


def test_an_unfinished_export_fails_validation_at_exactly_its_placeholders(
    tmp_path: Path,
) -> None:
    text = only_text(render_export(mixed_account(), ENG))
    expected = placeholder_lines(text)
    assert len(expected) == 8  # two unanswered invitations, four fields each
    with pytest.raises(InvalidDesiredState) as raised:
        load(tmp_path, text, {"WEBHOOK_HEADER_X_WEBHOOK_TOKEN": "t0k3n", **HOOK})
    assert {problem.location.line for problem in raised.value.problems} == expected
    assert any(PLACEHOLDER in problem.message for problem in raised.value.problems)


def test_the_filled_export_validates_and_plans_no_changes(tmp_path: Path) -> None:
    live = mixed_account()
    text = fill(only_text(render_export(live, ExportOptions("ENG-", include_unmanaged=True))))
    state = load(tmp_path, text, {"WEBHOOK_HEADER_X_WEBHOOK_TOKEN": "t0k3n", **HOOK})
    plan = diff(state, live)  # type: ignore[arg-type]
    assert (plan.changes, plan.drift, plan.conflicts) == ((), (), ())
    assert len(plan.unmanaged) == 2  # the agreement with no externalId and OPS-001


def test_a_wrong_header_value_is_a_webhook_update(tmp_path: Path) -> None:
    """The placeholder carries the value only through the variable: a wrong one shows."""
    text = fill(only_text(render_export(mixed_account(), ENG)))
    state = load(tmp_path, text, {"WEBHOOK_HEADER_X_WEBHOOK_TOKEN": "something else", **HOOK})
    assert [change.address for change in diff(state, mixed_account()).changes] == ["webhook"]  # type: ignore[arg-type]


# --- split by country or job title -----------------------------------------------------------


@pytest.mark.parametrize(
    ("split_by", "names"),
    [
        (
            SplitBy.COUNTRY,
            [
                SETTINGS_FILE,
                "country-unknown.yaml",
                "country-gb.yaml",
                "country-no.yaml",
                "country-us.yaml",
            ],
        ),
        (
            SplitBy.JOB_TITLE,
            [
                SETTINGS_FILE,
                "job-title-none.yaml",
                "job-title-engineer.yaml",
                "job-title-r-d-lead.yaml",
            ],
        ),
    ],
)
def test_split_files_merge_to_the_single_file(
    tmp_path: Path, split_by: SplitBy, names: list[str]
) -> None:
    live = mixed_account()
    export = render_export(live, ExportOptions("ENG-", split_by=split_by))
    assert [file.name for file in export.files] == names
    folder = tmp_path / "split"
    folder.mkdir()
    for file in export.files:
        assert file.text.startswith("# Written by `reconciler export`")  # no schema given
        (folder / file.name).write_text(fill(file.text), encoding="utf-8")
    environ = {"WEBHOOK_HEADER_X_WEBHOOK_TOKEN": "t0k3n", **HOOK}
    merged = load_desired_state(folder, environ=environ)
    single = load(tmp_path, fill(only_text(render_export(live, ENG))), environ)
    assert sorted(merged.workers, key=lambda w: w.external_id) == list(single.workers)  # type: ignore[attr-defined]
    assert (merged.scope_prefix, merged.webhook) == ("ENG-", single.webhook)  # type: ignore[attr-defined]
    plan = diff(merged, live)
    assert (plan.changes, plan.drift) == ((), ())


def test_group_file_names_stay_distinct() -> None:
    live = live_state(
        agreement(1, "ENG-001", job_title="Engineer"),
        agreement(2, "ENG-002", job_title="engineer"),
        agreement(3, "ENG-003", job_title="ENGINEER!"),
        agreement(4, "ENG-004", job_title="None"),
        agreement(5, "ENG-005", job_title=None),
        agreement(6, "ENG-006", job_title="東京"),
    )
    names = [f.name for f in render_export(live, ExportOptions(split_by=SplitBy.JOB_TITLE)).files]
    assert names == [
        SETTINGS_FILE,
        "job-title-none.yaml",
        "job-title-engineer.yaml",  # ENGINEER! (sorted first)
        "job-title-engineer-2.yaml",  # Engineer
        "job-title-none-2.yaml",  # None, the title
        "job-title-engineer-3.yaml",  # engineer
        "job-title-other.yaml",  # nothing ASCII to name it by
    ]


def test_unmanaged_and_conflict_notes_go_to_the_settings_file() -> None:
    live = live_state(agreement(1, "ENG-001"), agreement(2, "ENG-001"), agreement(3, None))
    options = ExportOptions(include_unmanaged=True, split_by=SplitBy.COUNTRY)
    settings = render_export(live, options).files[0]
    assert settings.name == SETTINGS_FILE
    assert "agreementId: 3" in settings.text and "exported agreementId 1" in settings.text


def test_unfinished_workers_are_listed_at_the_top_before_any_key() -> None:
    live = live_state(agreement(1, "ENG-001"), agreement(2, "ENG-002", "INVITATION_SENT"))
    text = only_text(render_export(live, ENG))
    header = text[: text.index("\nversion: 1\n")]
    assert all(line.startswith("#") for line in header.splitlines())
    assert (
        "#   - ENG-002 eng-002@example.com (INVITATION_SENT): "
        "typeOfWorker, workerName, workerSurname, countryIso\n"
    ) in header
    assert "ENG-001" not in header


def test_long_descriptions_are_wrapped_as_comments() -> None:
    live = live_state(agreement(1, "ENG-001", job_title="A very long job title " * 5))
    export = render_export(live, ExportOptions("ENG-", split_by=SplitBy.JOB_TITLE))
    for file in export.files:
        head = file.text.split("\nworkers:")[0].split("\nversion:")[0]
        assert all(line.startswith("#") and len(line) <= 100 for line in head.splitlines())
