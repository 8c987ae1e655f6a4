"""The layers contract (`[tool.importlinter]` in pyproject.toml, run by `lint-imports` in CI)
holds on the tree, and breaks on what it is there to refuse: a call up the layers, an import
circle between the modules of a package, and the core reaching into the sandbox.

Each case copies the package to a folder of its own, adds one import, and runs `lint-imports`
there, which must fail and name the import it refuses.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _lint(folder: Path) -> subprocess.CompletedProcess[str]:
    lint = Path(sys.executable).with_name("lint-imports")
    command = [str(lint)] if lint.exists() else ["lint-imports"]
    return subprocess.run(
        [*command, "--no-cache"],
        cwd=folder,
        env={"PATH": str(Path(sys.executable).parent), "PYTHONPATH": str(folder)},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "reconciler", tmp_path / "reconciler", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def _add_import(tree: Path, module: str, line: str) -> None:
    file = tree / (module.replace(".", "/") + ".py")
    text = file.read_text(encoding="utf-8")
    file.write_text(
        text.replace(
            "from __future__ import annotations\n",
            f"from __future__ import annotations\n\n{line}\n",
            1,
        ),
        encoding="utf-8",
    )


def test_the_tree_keeps_every_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_call_up_the_layers_breaks_the_contract(tree: Path) -> None:
    _add_import(tree, "reconciler.plan.diff", "import reconciler.apply.ledger  # noqa: F401")
    result = _lint(tree)
    assert result.returncode == 1, result.stdout
    assert "reconciler.plan is not allowed to import reconciler.apply" in result.stdout
    assert "reconciler.plan.diff -> reconciler.apply.ledger" in result.stdout


def test_a_circle_between_siblings_breaks_the_contract(tree: Path) -> None:
    """desired.load imports desired.keys: an import back closes a ring."""
    _add_import(tree, "reconciler.desired.keys", "import reconciler.desired.load  # noqa: F401")
    result = _lint(tree)
    assert result.returncode == 1, result.stdout
    assert "No cycles are allowed in reconciler.desired" in result.stdout


def test_the_core_reaching_into_the_sandbox_breaks_the_contract(tree: Path) -> None:
    _add_import(tree, "reconciler.service.client", "import reconciler.sandbox.store  # noqa: F401")
    result = _lint(tree)
    assert result.returncode == 1, result.stdout
    assert "reconciler.service.client -> reconciler.sandbox.store" in result.stdout


@pytest.mark.parametrize(
    ("module", "imported", "refused"),
    [
        ("reconciler.session.reading", "reconciler.accounts.run", "reconciler.accounts"),
        ("reconciler.adopt.files", "reconciler.gitops.adoption", "reconciler.gitops"),
    ],
)
def test_the_new_packages_cannot_call_up_either(
    tree: Path, module: str, imported: str, refused: str
) -> None:
    """The packages the command line's logic moved to sit in the layers like the others."""
    _add_import(tree, module, f"import {imported}  # noqa: F401")
    result = _lint(tree)
    assert result.returncode == 1, result.stdout
    package = module.rsplit(".", 1)[0]
    assert f"{package} is not allowed to import {refused}" in result.stdout
    assert f"{module} -> {imported}" in result.stdout


def test_adopt_and_the_sandbox_stay_apart_by_name(tree: Path) -> None:
    """Named in both sandbox contracts, not only caught through a package that imports adopt."""
    _add_import(tree, "reconciler.adopt.files", "import reconciler.sandbox.store  # noqa: F401")
    _add_import(tree, "reconciler.sandbox.store", "import reconciler.adopt.model  # noqa: F401")
    result = _lint(tree)
    assert result.returncode == 1, result.stdout
    assert "reconciler.adopt is not allowed to import reconciler.sandbox" in result.stdout
    assert "reconciler.sandbox is not allowed to import reconciler.adopt" in result.stdout


def test_the_text_safety_rules_sit_below_the_redaction(tree: Path) -> None:
    """Every layer uses `text_safety`, the redaction at the bottom too: it imports none of them."""
    _add_import(tree, "reconciler.text_safety", "import reconciler.redaction  # noqa: F401")
    result = _lint(tree)
    assert result.returncode == 1, result.stdout
    assert "reconciler.text_safety is not allowed to import reconciler.redaction" in result.stdout
