"""The adoption pull request's decisions and body, as tables of plain values."""

from __future__ import annotations

import json

import pytest

from reconciler.adopt.commit import read_adoption
from reconciler.adopt.model import ADDED, CHANGED, REMOVED, Adopted, Adoption, FileChange, Variable
from reconciler.adopt.request import adoption_body, branch_for
from reconciler.gitops.adoption import decide_adoption_pr
from reconciler.gitops.drift import DriftAction
from reconciler.gitops.forge import OpenRequest
from reconciler.render.marker import ADOPT, Marker

SOME = Adoption(
    files=(FileChange("w.yaml", "a\n", "b\n"),),
    adopted=(
        Adopted('worker["ENG-002"].jobTitle', CHANGED, '"Staff" -> "Lead"'),
        Adopted('worker["ENG-009"]', ADDED, "open agreement 9 (ACTIVE)"),
        Adopted('worker["ENG-007"]', REMOVED, "agreement 7 is ENDED in the service"),
    ),
    variables=(Variable("WEBHOOK_HEADER_X", 'the value of the webhook header "X"'),),
)
NONE = Adoption()
OPEN = OpenRequest(12, "the body", "https://github.com/o/r/pull/12")


@pytest.mark.parametrize(
    ("status", "adoption", "existing", "body", "action"),
    [
        (2, SOME, None, "b", DriftAction.OPEN),
        (2, SOME, OPEN, "the body", DriftAction.NOTHING),  # same commit, same diff
        (2, SOME, OPEN, "another", DriftAction.UPDATE),
        (2, NONE, OPEN, "", DriftAction.CLOSE),  # drift left, nothing of it adoptable
        (2, NONE, None, "", DriftAction.NOTHING),
        (0, None, OPEN, "", DriftAction.CLOSE),  # in sync: adopt did not even run
        (0, None, None, "", DriftAction.NOTHING),
        (2, None, OPEN, "", DriftAction.NOTHING),  # adopt failed: an error is not "nothing"
        (1, SOME, OPEN, "x", DriftAction.NOTHING),  # the drift check failed
    ],
)
def test_what_is_done_to_the_pull_request(
    status: int,
    adoption: Adoption | None,
    existing: OpenRequest | None,
    body: str,
    action: DriftAction,
) -> None:
    assert decide_adoption_pr(status, adoption, existing, body) is action


def test_the_body_puts_who_is_added_or_removed_first_and_says_what_to_set() -> None:
    body = adoption_body(SOME, Marker(ADOPT, "eu"), base_sha="f" * 40)
    assert body.startswith('<!-- reconciler:adopt key="eu" -->\n')
    risk, changed = body.index("Who is added or removed"), body.index("What changed live")
    assert risk < changed < body.index("Variables to set") < body.index("The diff")
    assert '**added** `worker["ENG-009"]`' in body and '**removed** `worker["ENG-007"]`' in body
    assert "`WEBHOOK_HEADER_X`" in body and f"Built on {'f' * 40}." in body


def test_the_body_shows_the_risks_first_escaped() -> None:
    """What `reconciler adopt` found it does to money and to where secrets go (issue 49, items
    2 and 3) is read first, before who is added or removed, escaped like the rest."""
    risky = Adoption(
        files=SOME.files,
        adopted=SOME.adopted,
        risks=(
            'worker["ENG-001"]: the payee\'s e-mail becomes mallory@evil.example: the unpaid '
            'payrun "nov" (1,500.00) is paid to it',
            "webhook: its host moves from hooks.example.com to attacker.example <b>[x](y)</b>",
        ),
    )
    body = adoption_body(risky, Marker(ADOPT, "eu"), base_sha="f" * 40)
    first = body.index("Review first: what this does to money and to where secrets go")

    assert first < body.index("Who is added or removed") < body.index("What changed live")
    assert "mallory`@`evil.example" in body[first:] and "1,500.00" in body[first:]
    assert "attacker.example" in body[first : body.index("Who is added or removed")]
    assert "<b>" not in body and "[x](y)" not in body
    assert "Review first" not in adoption_body(SOME, Marker(ADOPT, "eu"), base_sha="f" * 40)


def test_the_adoption_is_read_back_for_one_account_or_not_at_all() -> None:
    document = SOME.document()
    assert read_adoption(json.dumps(document), None) == Adoption(
        files=(FileChange("w.yaml", "", "b\n"),),
        adopted=SOME.adopted,
        variables=SOME.variables,
        diff_text=SOME.diff(),
    )
    fleet = {"accounts": [{"name": "eu", "error": {"message": "no"}},
                          {"name": "us", "adoption": document}]}  # fmt: skip
    assert read_adoption(json.dumps(fleet), "us") is not None
    assert read_adoption(json.dumps(fleet), "eu") is None
    assert read_adoption("", "eu") is None and read_adoption("{}", None) is None
    assert (
        branch_for("eu") == "reconciler/adopt-eu" and branch_for(None) == "reconciler/adopt-default"
    )
