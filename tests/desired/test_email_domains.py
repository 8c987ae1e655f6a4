"""A plain domain is known valid without loading email-validator (a sixth of `validate`'s
start-up); every domain it would not vouch for is still email-validator's, so the verdicts on an
email stay email-validator's own."""

from __future__ import annotations

import email_validator
import pytest
from email_validator import EmailNotValidError, validate_email
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.desired import rules
from reconciler.desired.rules import SPECIAL_USE_DOMAINS, email_problem, plain_domain


def _accepted(address: str) -> bool:
    try:
        validate_email(address, check_deliverability=False)
    except EmailNotValidError:
        return False
    return True


def test_the_special_use_names_are_email_validators_own() -> None:
    assert set(email_validator.SPECIAL_USE_DOMAIN_NAMES) == SPECIAL_USE_DOMAINS


@pytest.mark.parametrize(
    ("domain", "plain"),
    [
        ("example.com", True),
        ("Mail.Example.CO.uk", True),
        ("a-b.c-d.example", True),
        ("x.io", True),
        ("1password.com", True),
        ("a" * 63 + ".com", True),
        ("a" * 64 + ".com", False),  # a label of 64
        (".".join(["a" * 63] * 3 + ["a" * 56]) + ".com", True),  # 252: "a@" and it make 254
        (".".join(["a" * 63] * 3 + ["a" * 57]) + ".com", False),  # 253: past an address's 254
        ("example", False),  # no dot
        ("example.c0m", False),  # the top-level label ends with a digit
        ("1.2.3.4", False),
        ("example.test", False),
        ("mail.LOCALHOST", False),
        ("relay.onion", False),
        ("x.arpa", False),
        ("xn--bcher-kva.example", False),  # Punycode: IDNA decides
        ("ab--cd.com", False),
        ("-example.com", False),
        ("example-.com", False),
        ("exa_mple.com", False),
        ("example..com", False),
        ("bücher.example", False),
        ("例え.jp", False),
        ("[127.0.0.1]", False),
    ],
)
def test_which_domains_are_plain(domain: str, plain: bool) -> None:
    assert plain_domain(domain) is plain
    if plain:
        assert _accepted(f"a@{domain}")


@pytest.mark.parametrize(
    "address",
    [
        "ada@example.com",
        "ada@example.test",
        "ada@mail.LOCALHOST",
        "ada@xn--bcher-kva.example",
        "ada@ab--cd.com",
        "ada@example.c0m",
        "ada@" + "a" * 64 + ".com",
        "ada@bücher.example",
        "ada@exa_mple.com",
    ],
)
def test_an_email_is_judged_as_email_validator_judges_it(address: str) -> None:
    rules._domain_problem.cache_clear()
    assert (email_problem(address) is None) is _accepted(address)


LABEL = st.text(alphabet="abcxyzAZ019-_", min_size=1, max_size=70)
SUFFIX = st.sampled_from(["com", "io", "x", "c0m", "test", "LOCAL", "arpa", "uk", "xn--p1ai", ""])


@settings(max_examples=400, deadline=None)
@given(labels=st.lists(LABEL, min_size=0, max_size=5), suffix=SUFFIX)
def test_a_plain_domain_is_one_email_validator_accepts(labels: list[str], suffix: str) -> None:
    domain = ".".join([*labels, suffix]) if suffix else ".".join(labels)
    if plain_domain(domain):
        assert _accepted(f"a@{domain}"), domain
