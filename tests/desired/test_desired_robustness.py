"""Whatever a file holds, loading it answers a model or located problems, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pycountry
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.desired import DesiredState, InvalidDesiredState, load_desired_state
from reconciler.desired.model import COMPARABLE_FIELDS
from reconciler.identity import text_key as nfc

KEYS = st.sampled_from(
    [
        "version",
        "workers",
        "webhook",
        "scope",
        "policy",
        "externalId",
        "typeOfWorker",
        "workerEmail",
        "countryIso",
        "headers",
        "name",
        "value",
        "url",
        "event_types",
        "maxInactivations",
        "ignoreChanges",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**20),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["Worker", "Business", "GB", "KYC", "${X}", "TODO(export)", "a@b.co"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=5),
    max_leaves=25,
)
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI never fails by chance
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _load(path: Path) -> DesiredState | InvalidDesiredState:
    try:
        return load_desired_state(path, environ={"X": "x"})
    except InvalidDesiredState as error:
        for problem in error.problems:
            assert problem.location.line >= 1
            assert problem.location.column >= 1
            assert problem.message
        assert error.problems == sorted(error.problems)
        return error


@SETTINGS
@given(value=VALUES)
def test_any_structure(tmp_path: Path, value: object) -> None:
    path = tmp_path / "desired.yaml"
    path.write_text(yaml.safe_dump(value))
    _load(path)


@SETTINGS
@given(value=VALUES)
def test_any_structure_in_flow_style(tmp_path: Path, value: object) -> None:
    path = tmp_path / "desired.yaml"
    path.write_text(json.dumps(value))  # JSON is YAML in flow style
    _load(path)


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("ab:- \n\t[]{}'\"&*#!|>%@`,?~0")), max_size=80))
def test_any_text(tmp_path: Path, text: str) -> None:
    path = tmp_path / "desired.yaml"
    path.write_text(text)
    _load(path)


@SETTINGS
@given(data=st.binary(max_size=60))
def test_any_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "desired.yaml"
    path.write_bytes(data)
    _load(path)


COUNTRY_CODES = sorted(country.alpha_2 for country in pycountry.countries)
NAMES = st.text(alphabet=st.characters(categories=["L"]), min_size=1, max_size=30)
WORKER = st.fixed_dictionaries(
    {
        "typeOfWorker": st.sampled_from(["Worker", "Business"]),
        "workerName": NAMES,
        "workerSurname": NAMES,
        "workerLegalName": NAMES,
        "countryIso": st.sampled_from(COUNTRY_CODES),
    },
    optional={
        "jobTitle": NAMES,
        # Any text but control characters (line breaks and tabs aside), which validate refuses.
        "workerEmailText": st.text(
            alphabet=st.characters(exclude_categories=["Cc", "Cs"], include_characters="\n\t"),
            min_size=1,
            max_size=80,
        ).filter(str.strip),
        "ignoreChanges": st.lists(st.sampled_from(COMPARABLE_FIELDS), unique=True),
    },
)


@SETTINGS
@given(workers=st.lists(WORKER, max_size=8), prune=st.booleans(), limit=st.integers(0, 50))
def test_valid_workers_become_the_model(
    tmp_path: Path, workers: list[dict[str, Any]], prune: bool, limit: int
) -> None:
    for index, worker in enumerate(workers):
        worker["externalId"] = f"ENG-{index}"
        worker["workerEmail"] = f"worker{index}@example.com"
    document = {
        "version": 1,
        "scope": {"externalIdPrefix": "ENG-"},
        "policy": {"prune": prune, "maxInactivations": limit},
        "workers": workers,
    }
    path = tmp_path / "desired.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True))
    state = load_desired_state(path, environ={})
    assert (state.policy.prune, state.policy.max_inactivations.value) == (prune, limit)
    assert len(state.workers) == len(workers)
    for raw, got in zip(workers, state.workers, strict=True):
        wanted = {
            key: nfc(value) if isinstance(value, str) else value for key, value in raw.items()
        }
        assert got.external_id == wanted["externalId"]
        assert got.type_of_worker == wanted["typeOfWorker"]
        assert (got.worker_name, got.worker_surname) == (
            wanted["workerName"],
            wanted["workerSurname"],
        )
        assert got.worker_legal_name == wanted["workerLegalName"]
        assert got.country_iso == wanted["countryIso"]
        assert got.job_title == wanted.get("jobTitle")
        assert got.worker_email_text == wanted.get("workerEmailText")
        assert got.ignore_changes == frozenset(wanted.get("ignoreChanges", ()))
