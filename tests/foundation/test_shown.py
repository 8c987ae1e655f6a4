"""`redaction.shown`, the one way text from outside is shown: a table of what it keeps and
what it masks (the command-line tests are in tests/service/test_service_text.py)."""

from __future__ import annotations

import pytest

from reconciler.redaction import shown

KEPT = [
    "worker contractor-ada-lovelace-2026 not found",
    "agreement 123e4567-e89b-12d3-a456-426614174000 is closed",
    "MethodArgumentNotValidException: workerEmail must not be blank",
    "worker1000000@example.com is invited already",
    "POST /api/v1/agreements/12345/inactivate failed",
    "idempotence key reconciler-payrun-2026-12-retainers-ab12cd34ef56 reused",
    "amount 1500.00 is over the limit 1000.00 on 2026-12-01T10:00:00Z",
    "50% of 25%",
]
MASKED = [
    ("token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 refused", "aB3dE5fG7hJ9"),
    ("key a1b2c3d4e5f6g7h8 refused", "a1b2c3d4e5f6"),
    ("sig 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "9f86d081884c"),
    ("Authorization: Basic YWRhQGV4YW1wbGUuY29tOnMzY3JldCtwYXNz", "YWRhQGV4YW1w"),
    ("t=%74%6f%6b%5f%37%48%71%32 sent", "%74%6f%6b"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3", "eyJhbGciOiJI"),
    ("letters QwErTyUiOpAsDfGhJkLzXcVbNm only", "QwErTyUiOpAs"),
]


@pytest.mark.parametrize("text", KEPT)
def test_words_ids_and_paths_are_kept(text: str) -> None:
    assert shown(text, 500) == text


@pytest.mark.parametrize(("text", "part"), MASKED)
def test_a_run_that_could_be_a_credential_is_masked(text: str, part: str) -> None:
    said = shown(text, 500)
    assert part not in said and "[masked]" in said, said


def test_it_is_bounded_and_draws_no_control_character() -> None:
    said = shown("\x1b[31m" + "a " * 1000 + "\u202e", 100)
    assert said.startswith("\\u001b[31ma a")
    assert said.endswith("... (cut at 100 of 2,006 characters)")
    assert len(said) < 150
