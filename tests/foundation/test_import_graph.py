"""No import circles: every package of `reconciler` imports in layers, and the sandbox is apart.

The graph is read from the source (module-level imports; `from pkg import sub` is an edge to
`pkg.sub`, and to `pkg` only when `pkg` runs imports of its own). A function-level import, or
one under `if TYPE_CHECKING:`, is not run when the module loads and is not an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "reconciler"


def _modules() -> dict[str, Path]:
    found = {}
    for file in ROOT.rglob("*.py"):
        name = ".".join(("reconciler", *file.relative_to(ROOT).with_suffix("").parts))
        found[name.removesuffix(".__init__")] = file
    return found


def _graph(*, every_import: bool = False) -> dict[str, set[str]]:
    """The module-level imports; with `every_import`, also those inside functions and under
    `if TYPE_CHECKING:` (a design's circle, even when no import runs it), each an edge to the
    module it names only (a package's lazy facade is no design edge)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, file in modules.items():
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in ast.walk(tree) if every_import else tree.body:
            if isinstance(node, ast.ImportFrom) and node.module:
                subs = {f"{node.module}.{a.name}" for a in node.names} & modules.keys()
                graph[name] |= subs or ({node.module} & modules.keys())
                if subs and node.module in modules and node.module != name and not every_import:
                    graph[name].add(node.module)  # the package's own imports run first
            elif isinstance(node, ast.Import):
                graph[name] |= {alias.name for alias in node.names} & modules.keys()
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_round() -> None:
    assert _cycles(_graph()) == []


def test_the_sandbox_has_no_circle_even_through_late_or_type_only_imports() -> None:
    """The sandbox's modules once named each other in a ring of nine (background, clients,
    context, events, login, payments, processing, wallet, webhooks) through a type-only import
    of the context; its modules now import in layers whichever import is counted."""
    graph = _graph(every_import=True)
    sandbox = {
        name: {i for i in imports if i.startswith("reconciler.sandbox")}
        for name, imports in graph.items()
        if name.startswith("reconciler.sandbox")
    }
    assert _cycles(sandbox) == []


def test_the_sandbox_imports_nothing_of_the_reconciler_and_the_core_nothing_of_it() -> None:
    graph = _graph()
    for name, imports in graph.items():
        if name.startswith("reconciler.sandbox"):
            assert all(i.startswith("reconciler.sandbox") for i in imports), (name, imports)
        elif not name.startswith(("reconciler.cli", "reconciler.__main__")):
            assert not any(i.startswith("reconciler.sandbox") for i in imports), (name, imports)


def test_the_check_sees_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
