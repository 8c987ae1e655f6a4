"""The account a saved plan belongs to: base URLs compared normalised, every difference named."""

from __future__ import annotations

import pytest

from reconciler.plan.account import Account, OtherAccount, check_account, normalise_base_url


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("https://api.example.com", "HTTPS://API.Example.com/"),
        ("https://api.example.com/v1", "https://api.example.com:443/v1/"),
        ("http://localhost", "http://LOCALHOST:80"),
        ("https://bücher.example", "https://xn--bcher-kva.example"),
        ("https://api.example.com/a/b", "https://api.example.com/a//b"),
    ],
)
def test_one_service_written_two_ways_is_one_base_url(one: str, other: str) -> None:
    assert normalise_base_url(one) == normalise_base_url(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("https://api.example.com", "https://staging.example.com"),
        ("https://api.example.com", "http://api.example.com"),
        ("https://api.example.com", "https://api.example.com:8443"),
        ("https://api.example.com/v1", "https://api.example.com/v2"),
    ],
)
def test_two_services_stay_two(one: str, other: str) -> None:
    assert normalise_base_url(one) != normalise_base_url(other)


PLANNED = Account.of("https://api.example.com", 7, "ops@example.com")


@pytest.mark.parametrize(
    ("current", "named"),
    [
        (Account.of("https://staging.example.com", 7, None), "base URL"),
        (Account.of("https://api.example.com", 8, None), "client id"),
        (Account.of("https://api.example.com", None, None), "client id"),
        (Account.of("https://api.example.com", 7, "someone@example.com"), "login email"),
    ],
)
def test_another_account_is_refused_naming_both(current: Account, named: str) -> None:
    with pytest.raises(OtherAccount, match=f"\\({named} differ") as refused:
        check_account(PLANNED, current, name="plan.json", doing="talks to")
    assert PLANNED.describe() in refused.value.message
    assert current.describe() in refused.value.message


@pytest.mark.parametrize(
    "current",
    [
        Account.of("HTTPS://API.example.com/", 7, "OPS@example.com"),
        Account.of("https://api.example.com", 7, None),  # a token now: no login to compare
    ],
)
def test_the_same_account_passes(current: Account) -> None:
    check_account(PLANNED, current, name="plan.json", doing="talks to")
