"""What binds a saved plan to its review: the files' digest, the pull request and its commit."""

from __future__ import annotations

import pytest

from reconciler.plan.review import OtherReview, Review, check_review, files_digest

KEY = b"k" * 32
FILES = [("workforce.yaml", "version: 1\n"), ("payruns.yaml", "payruns: []\n")]
DIGEST = files_digest(FILES, KEY)
HEAD = "9fceb02d0ae598e95dc970b74767f19372d61af8"
REVIEWED = Review(DIGEST, 42, HEAD)


def test_the_digest_is_of_names_and_texts_in_any_order_and_keyed() -> None:
    assert files_digest(reversed(FILES), KEY) == DIGEST
    assert files_digest(FILES, b"o" * 32) != DIGEST
    assert files_digest([*FILES, ("more.yaml", "")], KEY) != DIGEST
    assert files_digest([("workforce.yaml", "version: 1\n")], KEY) != DIGEST
    assert files_digest([("other.yaml", "version: 1\n"), FILES[1]], KEY) != DIGEST
    assert files_digest([("workforce.yaml", "version: 1 \n"), FILES[1]], KEY) != DIGEST


def test_the_same_review_passes() -> None:
    check_review(REVIEWED, Review(DIGEST, 42, HEAD), name="plan.json")
    check_review(Review(DIGEST), Review(DIGEST), name="plan.json")  # a plan made by hand


@pytest.mark.parametrize(
    ("merge", "named"),
    [
        (Review(DIGEST, 43, HEAD), "pull request differ"),
        (Review(DIGEST, 42, "0" * 40), "head commit differ"),
        (Review(files_digest(FILES[:1], KEY), 42, HEAD), "desired-state files differ"),
        (Review(DIGEST), "pull request and head commit differ"),
        (Review(files_digest(FILES[:1], KEY), 7, "1" * 40), "and desired-state files differ"),
    ],
)
def test_another_review_is_refused_naming_what_differs(merge: Review, named: str) -> None:
    with pytest.raises(OtherReview, match=named) as refused:
        check_review(REVIEWED, merge, name="plan.json")
    assert f"pull request #42 at commit {HEAD}" in refused.value.message
    assert "nothing was applied" in refused.value.message
