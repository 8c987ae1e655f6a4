"""Which forge the job's environment names is decided once (`gitops.environment`): the apply's
forge lock and the approvals' reads share one client, closed when the last of them is done."""

from __future__ import annotations

import pytest

from reconciler.errors import ReconcilerError
from reconciler.gitops.approvals import ForgeReviews
from reconciler.gitops.environment import forge_of, shared_forge, source_from_env

GITHUB = {"GITHUB_REPOSITORY": "octo-org/payroll", "GITHUB_TOKEN": "ghs_" + "x" * 36,
          "GITHUB_API_URL": "http://127.0.0.1:9"}  # fmt: skip
GITLAB = {"GITLAB_TOKEN": "glpat-" + "y" * 20, "CI_API_V4_URL": "http://127.0.0.1:9/api/v4",
          "CI_PROJECT_ID": "4"}  # fmt: skip


@pytest.mark.parametrize("environ", [GITHUB, GITLAB], ids=["github", "gitlab"])
def test_the_lock_and_the_reviews_share_one_client_closed_after_both(
    environ: dict[str, str],
) -> None:
    with shared_forge(environ, configured=True) as lock_forge:
        assert lock_forge is not None
        source = source_from_env([31], environ)
        assert isinstance(source, ForgeReviews) and source.forge is lock_forge
        source.close()  # the reviews are done: the lock still holds the client
        assert not lock_forge._http.is_closed
        again = source_from_env([32], environ)
        assert isinstance(again, ForgeReviews) and again.forge is lock_forge
    assert not lock_forge._http.is_closed  # the reviews opened after still hold it
    again.close()
    assert lock_forge._http.is_closed


def test_a_forge_named_without_its_token_has_no_lock_and_refuses_the_reviews() -> None:
    environ = {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "octo-org/payroll"}
    assert forge_of(environ) == "github"
    with shared_forge(environ, configured=True) as lock_forge:
        assert lock_forge is None  # this machine's lock only, as outside CI
    with pytest.raises(ReconcilerError, match="GITHUB_TOKEN is not set"):
        source_from_env([1], environ)


def test_outside_ci_there_is_no_forge() -> None:
    with shared_forge({"HOME": "/root"}) as forge:
        assert forge is None
    assert source_from_env([1], {"HOME": "/root"}) is None
