"""`-n auto` starts two workers a core (tests/conftest.py), unless PYTEST_XDIST_AUTO_NUM_WORKERS,
xdist's own setting, says how many."""

from __future__ import annotations

import os

import pytest

from tests.conftest import pytest_xdist_auto_num_workers


def test_auto_is_two_workers_a_core(
    pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert pytest_xdist_auto_num_workers(pytestconfig) == 2 * (cores or 1)


def test_xdist_s_own_setting_is_left_to_xdist(
    pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """None: the next implementation of the hook answers, xdist's, which reads the variable."""
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "1")
    assert pytest_xdist_auto_num_workers(pytestconfig) is None
    assert pytestconfig.hook.pytest_xdist_auto_num_workers(config=pytestconfig) == 1
