"""The size rule of docs/architecture.md: cohesion first, and no module over 600 lines."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOST_LINES = 600


def test_no_module_is_over_600_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted((ROOT / "reconciler").rglob("*.py"))
    }
    assert len(sizes) > 100  # the package itself, not an empty folder
    assert {name: lines for name, lines in sizes.items() if lines > MOST_LINES} == {}


def test_the_rule_is_the_one_the_architecture_says() -> None:
    said = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f"at most {MOST_LINES} lines" in said
