"""One adopt's work in progress: the files' documents, the edits made to them, and what was
adopted, left (with why) and needs a variable; `--only` decides what is taken."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

import yaml

from reconciler.adopt.model import Adopted, NotAdopted, Variable, selects
from reconciler.adopt.yamledit import YamlDocument

#: A `${NAME}` reference in a value.
REFERENCE = r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}"


@dataclass(frozen=True, slots=True)
class AdoptOptions:
    """`--only` patterns, and `--into`: the file new workers go to (its name as loaded);
    `today`: the day a closure is seen, written as a worker's `ended:` (default: UTC today)."""

    only: tuple[str, ...] = ()
    into: str | None = None
    today: date | None = None


@dataclass(slots=True)
class Proposal:
    """The edits of one adopt as they are made, and what they adopted, left and need."""

    documents: list[YamlDocument]
    options: AdoptOptions
    adopted: list[Adopted] = field(default_factory=list)
    not_adopted: list[NotAdopted] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)
    passed_over: int = 0  # the changes and reasons `--only` leaves out
    created: dict[str, list[list[str]]] = field(default_factory=dict)  # new files' items
    new_lists: dict[str, list[list[str]]] = field(default_factory=dict)  # a `workers:` to add
    # The items to remove, by sequence: removed together, so an emptied list is written `[]`.
    removals: dict[int, tuple[YamlDocument, yaml.SequenceNode, yaml.Node, list[int]]] = field(
        default_factory=dict
    )

    def remove(
        self, document: YamlDocument, sequence: yaml.SequenceNode, key: yaml.Node, index: int
    ) -> None:
        self.removals.setdefault(id(sequence), (document, sequence, key, []))[3].append(index)

    def take(self, address: str, kind: str, detail: str, edit: Callable[[], None]) -> None:
        """Make `edit` and record it, when `--only` selects the address."""
        if selects(self.options.only, address):
            edit()
            self.adopted.append(Adopted(address, kind, detail))
        else:
            self.passed_over += 1

    def need(self, address: str, variable: Variable) -> None:
        """Record that the files read `variable` for `address`, when `--only` selects it."""
        if selects(self.options.only, address):
            self.variables.append(variable)

    def leave(self, address: str, why: str) -> None:
        if selects(self.options.only, address):
            self.not_adopted.append(NotAdopted(address, why))
        else:
            self.passed_over += 1
