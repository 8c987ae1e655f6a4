"""The three plan outputs: text, JSON (validated against its schema) and Markdown."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from reconciler.plan import Plan, PlanOptions, diff
from reconciler.render import JsonRenderer, MarkdownRenderer, TextRenderer, renderer_for
from reconciler.render.markdown import MAX_CHARACTERS
from tests.plan.factories import (
    agreement,
    desired_state,
    desired_webhook,
    live_state,
    live_webhook,
    quickstart,
    want,
)

SCHEMA = json.loads((Path(__file__).parents[2] / "schemas" / "plan.schema.json").read_text())
SECRET = "hV3q9Zt0PpXw7LmN2bKc"  # a high-entropy header value that must never be shown
OLD_SECRET = "Qr8sT1uVw2Xy3Za4Bc5D"


def everything() -> Plan:
    """A plan with one of every kind: invite, inactivate, replace, webhook, drift, conflict."""
    desired = desired_state(
        want("ENG-001", job_title="Staff"),
        want("ENG-002", job_title="Staff"),
        want("ENG-004", rehire=date(2026, 12, 1)),  # hired again: invited once
        want("ENG-005", worker_email="fred@example.com"),
        want("ENG-008"),
        webhook=desired_webhook(
            url="https://new.example.com/h",
            events=("KYC", "PAYMENT"),
            headers=(("X-Token", SECRET),),
        ),
    )
    live = live_state(
        agreement(1, "ENG-001"),
        agreement(2, "ENG-002"),
        agreement(3, "ENG-003"),
        agreement(4, "ENG-004", "ENDED"),
        agreement(8, "ENG-008"),
        agreement(9, "ENG-008", "INVITATION_SENT"),
        agreement(10, None, email="fred@example.com"),
        agreement(11, "OPS-001"),
        webhook=live_webhook(headers=(("X-Token", OLD_SECRET),)),
    )
    return diff(desired, live, PlanOptions(replaces=frozenset({"ENG-002"})))


def empty() -> Plan:
    return diff(desired_state(want("ENG-001")), live_state(agreement(1, "ENG-001")))


PLANS = {"quickstart": lambda: diff(*quickstart()), "everything": everything, "empty": empty}


# --- text -------------------------------------------------------------------------------------


def test_text_reads_like_terraform() -> None:
    text = TextRenderer().render(everything())
    assert '  + worker["ENG-004"] {' in text
    assert '      + workerEmail   = "eng-004@example.com"' in text
    assert '  # worker["ENG-004"] will be invited (past agreement: 4 ENDED)' in text
    assert '  - worker["ENG-003"] {' in text
    assert '  -/+ worker["ENG-002"] {' in text
    assert '      ~ jobTitle: "Engineer" -> "Staff"' in text
    assert "  ~ webhook {" in text
    assert (
        '      ~ url: "https://hooks.example.com/\u2026 (fingerprint f850c52f)" -> "https://new.example.com/h"'
        in text
    )
    assert '      ~ headers["X-Token"]: (sensitive value) -> (sensitive value)' in text
    assert '  ~ worker["ENG-001"] (agreement 1)' in text
    assert '  ! worker["ENG-008"]: several open agreements (8, 9)' in text
    assert '  ! worker["ENG-005"]: the email fred@example.com is held' in text
    assert text.endswith(
        "Review first: 2 in conflict or refused, 1 to inactivate, 1 to replace, the webhook "
        "updated.\nPlan: 1 to invite, 1 to inactivate, 1 to replace, 1 to update, 1 drifted, "
        "2 unmanaged, 2 in conflict.\nApply would send 2 invitation e-mails.\n"
    )


def test_markdown_puts_the_risky_sections_first_with_the_text_symbols() -> None:
    markdown = MarkdownRenderer().render(everything())
    titles = re.findall(r"<details( open)?><summary>(.*?)</summary>", markdown)
    assert titles == [
        (" open", "Conflicts and refused payruns (2)"),
        (" open", "Inactivations and replacements (2)"),
        (" open", "Webhook"),
        ("", "Invitations (1)"),
        ("", "Drift (1)"),
    ]
    assert '-/+   worker["ENG-002"] {' in markdown and '!   worker["ENG-008"]' in markdown
    assert "!   webhook" not in markdown and "~   webhook {" in markdown
    assert "`!` conflict or refused" in markdown  # the legend


def test_text_with_nothing_to_do() -> None:
    text = TextRenderer().render(empty())
    assert text.startswith("No changes. The account matches the file.")
    assert "Apply would send no invitation e-mails." in text


@pytest.mark.parametrize(
    ("desired", "live", "options", "headline"),
    [
        (
            desired_state(want("ENG-001", job_title="Staff")),
            live_state(agreement(1, "ENG-001")),
            PlanOptions(),
            "No changes to apply, but the account still differs from the file where the plan "
            "cannot act (below).",
        ),
        (
            desired_state(want("ENG-001"), want("ENG-002")),
            live_state(agreement(1, "ENG-001")),
            PlanOptions(targets=frozenset({"ENG-404"})),
            "No changes among what --target and --exclude selected.",
        ),
        (
            desired_state(want("ENG-001")),
            live_state(agreement(1, "ENG-001")),
            PlanOptions(),
            "No changes. The account matches the file.",
        ),
    ],
    ids=["drift only", "target matched nothing", "in sync"],
)
def test_no_changes_says_why_and_never_that_a_differing_account_matches(
    desired: Any, live: Any, options: PlanOptions, headline: str
) -> None:
    plan = diff(desired, live, options)
    assert not plan.changes
    assert TextRenderer().render(plan).startswith(headline + "\n")
    assert headline in MarkdownRenderer().render(plan)
    if headline != "No changes. The account matches the file.":
        for output in (TextRenderer().render(plan), MarkdownRenderer().render(plan)):
            assert "The account matches the file" not in output


def test_text_colour_only_when_asked() -> None:
    plan = diff(*quickstart())
    assert "\x1b[" not in TextRenderer(color=False).render(plan)
    coloured = TextRenderer(color=True).render(plan)
    assert "\x1b[32m" in coloured and "\x1b[31m" in coloured  # green +, red -
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == TextRenderer().render(plan)


def test_unmanaged_are_counted_and_listed_on_request() -> None:
    plan = diff(*quickstart())
    assert "Unmanaged: 2 open agreements not owned by this file (--show-unmanaged" in (
        TextRenderer().render(plan)
    )
    listed = TextRenderer(show_unmanaged=True).render(plan)
    assert '    agreement 8  externalId null  "freelance@example.com"  ACTIVE  (no externalId)' in (
        listed
    )
    assert '"OPS-001"' in listed


def test_control_characters_from_the_service_never_reach_the_terminal() -> None:
    desired = desired_state(want("ENG-001"))
    live = live_state(agreement(1, "ENG-001", first_name="Ada\x1b[2J\x07"))
    text = TextRenderer().render(diff(desired, live))
    assert "\x1b" not in text and "\x07" not in text
    assert '"Ada\\u001b[2J\\u0007"' in text


# --- every format -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
@pytest.mark.parametrize("name", sorted(PLANS))
def test_no_secret_in_any_format(fmt: str, name: str) -> None:
    output = renderer_for(fmt, show_unmanaged=True).render(PLANS[name]())
    assert SECRET not in output and OLD_SECRET not in output


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown plan format 'yaml'"):
        renderer_for("yaml")


# --- JSON -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PLANS))
def test_json_is_valid_against_the_schema(name: str) -> None:
    document = json.loads(JsonRenderer().render(PLANS[name]()))
    errors = sorted(Draft202012Validator(SCHEMA).iter_errors(document), key=str)
    assert errors == []


def test_the_schema_rejects_a_leaked_header_value() -> None:
    document = json.loads(JsonRenderer().render(everything()))
    webhook = next(c for c in document["resource_changes"] if c["address"] == "webhook")
    webhook["change"]["after"]["headers"][0]["value"] = SECRET
    assert list(Draft202012Validator(SCHEMA).iter_errors(document))


def test_json_in_terraforms_words() -> None:
    document = json.loads(JsonRenderer().render(everything()))
    assert document["format_version"] == "1.2"
    actions = {c["address"]: c["change"]["actions"] for c in document["resource_changes"]}
    assert actions == {
        'worker["ENG-002"]': ["delete", "create"],
        'worker["ENG-003"]': ["delete"],
        'worker["ENG-004"]': ["create"],
        "webhook": ["update"],
    }
    webhook = document["resource_changes"][-1]["change"]
    assert webhook["after"]["headers"] == [{"name": "X-Token", "value": "(sensitive value)"}]
    assert webhook["after_sensitive"] == {"headers": [{"value": True}]}
    assert webhook["changed_fields"] == ["url", "event_types", 'headers["X-Token"]']
    assert [d["address"] for d in document["resource_drift"]] == ['worker["ENG-001"]']
    assert [u["agreementId"] for u in document["unmanaged"]] == [10, 11]
    assert document["summary"]["invitation_emails"] == 2
    assert document["safety"]["safe"] is True


# --- Markdown ---------------------------------------------------------------------------------


def test_markdown_summary_warning_and_details() -> None:
    markdown = MarkdownRenderer().render(diff(*quickstart()))
    assert markdown.startswith("### reconciler plan\n\n| conflicts | to inactivate |")
    assert "| 0 | 1 | 0 | 0 | 1 | 1 | 1 | 2 |" in markdown
    assert "> :warning: **1 worker would be inactivated.**" in markdown
    titles = re.findall(r"<details( open)?><summary>(.*?)</summary>", markdown)
    assert titles == [
        (" open", "Inactivations and replacements (1)"),
        (" open", "Webhook"),
        ("", "Invitations (1)"),
        ("", "Drift (1)"),
    ]
    assert '+   worker["ENG-004"] {' in markdown
    assert '-   worker["ENG-006"] {' in markdown
    assert "~   webhook {" in markdown  # the text plan's symbols: `!` is only a conflict
    assert markdown.count("<details") == markdown.count("</details>")


def test_markdown_has_no_warning_without_inactivations() -> None:
    desired = desired_state(want("ENG-001"), want("ENG-002"))
    markdown = MarkdownRenderer().render(diff(desired, live_state(agreement(1, "ENG-001"))))
    assert "would be inactivated" not in markdown
    assert "Apply would send 1 invitation e-mail." in markdown


def test_markdown_is_byte_identical_for_the_same_plan() -> None:
    first = MarkdownRenderer().render(diff(*quickstart())).encode()
    again = MarkdownRenderer().render(diff(*quickstart())).encode()
    assert first == again
    assert not re.search(rb"\d{4}-\d{2}-\d{2}", first)  # no timestamps


def test_markdown_is_cut_safely_under_the_limit() -> None:
    desired = desired_state(*(want(f"ENG-{n:05d}") for n in range(3000)))
    plan = diff(desired, live_state())
    markdown = MarkdownRenderer().render(plan)
    assert len(markdown) < MAX_CHARACTERS
    assert "| 3,000 | 0 |" in markdown  # the summary is never cut
    note = re.search(
        r"_Not shown here, to fit GitHub's comment limit: ([\d,]+) of 3,000 ", markdown
    )
    assert note is not None
    shown = markdown.count("will be invited")
    assert int(note.group(1).replace(",", "")) == 3000 - shown > 0
    assert "job summary" in markdown and "plan.md" in markdown
    assert markdown.count("```") % 2 == 0
    assert markdown.count("<details") == markdown.count("</details>")
    assert markdown == MarkdownRenderer().render(plan)


def test_markdown_fence_outlasts_backticks_in_values() -> None:
    desired = desired_state(want("ENG-001", job_title="``` </details> # x"))
    markdown = MarkdownRenderer().render(diff(desired, live_state()))
    assert "\n````diff\n" in markdown
    assert markdown.count("\n</details>\n") == 1  # the one in the value sits inside the fence
