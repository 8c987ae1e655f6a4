"""`reconciler.quick.quick_init`: the same class, built faster, still frozen."""

from __future__ import annotations

import dataclasses
import pickle
from datetime import UTC, datetime
from typing import Any

import pytest

from reconciler.desired.model import DesiredWorker
from reconciler.quick import quick_init
from reconciler.service.models import Worker, WorkerStatus

NOW = datetime(2026, 11, 26, tzinfo=UTC)


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        (Worker(1, "a@example.com", WorkerStatus.ACTIVE, NOW), {"job_title": None}),
        (
            Worker(2, "b@example.com", WorkerStatus.ENDED, NOW, external_id="E-2"),
            {"external_id": "E-2", "first_name": None},
        ),
        (
            Worker(agreement_id=3, email="c", status=WorkerStatus.ACTIVE, created_at=NOW),
            {"agreement_id": 3, "email": "c"},
        ),
        (
            DesiredWorker("E-1", "Worker", "Ada", "L", "a@example.com", "GB"),
            {"ignore_changes": frozenset(), "location": None, "job_title": None},
        ),
    ],
)
def test_fields_and_defaults_are_the_dataclass_own(made: Any, expected: dict[str, Any]) -> None:
    for name, value in expected.items():
        assert getattr(made, name) == value
    again = type(made)(**{f.name: getattr(made, f.name) for f in dataclasses.fields(made)})
    assert again == made and hash(again) == hash(made)
    assert pickle.loads(pickle.dumps(made)) == made
    for item in dataclasses.fields(made):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(made, item.name, "x")


def test_missing_and_unknown_arguments_are_refused_as_before() -> None:
    with pytest.raises(TypeError, match="missing 3 required positional arguments"):
        Worker(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        Worker(1, "a", WorkerStatus.ACTIVE, NOW, nope=1)  # type: ignore[call-arg]


def test_a_class_it_cannot_build_the_same_is_refused() -> None:
    @dataclasses.dataclass(slots=True)
    class Mutable:
        a: int

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            pass

    for cls in (Mutable, NoSlots, Factory, Checked):
        with pytest.raises(TypeError, match="quick_init"):
            quick_init(cls)
