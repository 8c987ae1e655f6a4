"""A Secret can be compared and sent, never printed."""

from __future__ import annotations

import pickle

import pytest

from reconciler.secrets import MASK, Secret


def test_secret_is_masked_in_every_text_form() -> None:
    secret = Secret("hunter2-very-secret")
    for text in (repr(secret), str(secret), f"{secret}", f"{secret!r}", f"{[secret]}"):
        assert "hunter2" not in text
    assert MASK in str(secret)


def test_secret_compares_by_value_and_keeps_its_template() -> None:
    assert Secret("a") == Secret("a", template="${A}")
    assert Secret("a") != Secret("b")
    assert Secret("a", template="${A}").template == "${A}"
    assert Secret("a").reveal() == "a"


def test_hmac_depends_on_key_and_value() -> None:
    value = Secret("header-value")
    assert value.hmac(b"k1") != value.hmac(b"k2")
    assert value.hmac(b"k1") != Secret("other").hmac(b"k1")
    assert value.hmac(b"k1") == Secret("header-value").hmac(b"k1")


def test_secret_refuses_to_be_pickled() -> None:
    with pytest.raises(TypeError):
        pickle.dumps(Secret("x"))
