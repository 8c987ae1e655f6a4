"""Whatever a file holds, loading it answers a model or located problems, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.desired import DesiredState, InvalidDesiredState, load_desired_state

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
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
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
