"""A faster `__init__` for the frozen dataclasses a plan makes by the hundred thousand.

A frozen dataclass's generated `__init__` sets each field through `object.__setattr__` (its
own `__setattr__` refuses every assignment), a call looked up field by field: 1.5 to 2.2 us for
the eleven fields of a `Worker`, against 0.4 us for the same class unfrozen. A plan of 100,000
workers makes 100,000 of them a side. `quick_init` gives such a class an `__init__` of the same
signature that stores each field with its slot's own setter (the descriptor `__slots__` made),
bound once: about 0.9 us. The class stays frozen: assigning a field after `__init__` still
raises `FrozenInstanceError`, and equality, hashing, `repr`, `replace` and pickling are the
dataclass's own.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

C = TypeVar("C", bound=type)


def quick_init(cls: C) -> C:
    """`cls` (a frozen dataclass with `slots=True`, no `__post_init__`, no default factory)
    with the quicker `__init__`; anything else is refused, never silently changed."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: quick_init is for frozen dataclasses with slots")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: quick_init does not call __post_init__")
    namespace: dict[str, Any] = {}
    parameters, body = [], []
    for number, item in enumerate(dataclasses.fields(cls)):
        if item.default_factory is not dataclasses.MISSING or not item.init or item.kw_only:
            raise TypeError(f"{cls.__name__}.{item.name}: quick_init takes plain fields only")
        namespace[f"_set{number}"] = cls.__dict__[item.name].__set__
        if item.default is dataclasses.MISSING:
            parameters.append(item.name)
        else:
            namespace[f"_default{number}"] = item.default
            parameters.append(f"{item.name}=_default{number}")
        body.append(f"    _set{number}(self, {item.name})")
    source = f"def __init__(self, {', '.join(parameters)}):\n" + "\n".join(body) + "\n"
    exec(source, namespace)  # made here from the class's own field names
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__dict__["__init__"].__doc__
    cls.__init__ = init  # type: ignore[misc]
    return cls


def quick_function(name: str, parameters: str, expression: str, names: dict[str, Any]) -> Any:
    """`def name(parameters): return expression`, compiled once, with `names` as its globals:
    what a table of fields makes per field (a dict display, a chain of comparisons) runs as
    fast as the same code written out, instead of a loop of calls per field (`dict(zip(...))`
    over a plan's 100,000 workers costs three times the display). The caller writes the
    expression from its own identifiers and `repr`s only."""
    namespace = dict(names)
    exec(f"def {name}({parameters}):\n    return {expression}\n", namespace)
    return namespace[name]
