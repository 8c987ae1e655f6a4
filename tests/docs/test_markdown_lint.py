"""pymarkdownlnt, configured in pyproject.toml, finds nothing in the README and the docs, and it
catches a fence that swallows the text after it (the README's `` ``` To run the``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.support import ROOT, documents


def _lint(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pymarkdown", "scan", *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=ROOT,  # where [tool.pymarkdown] is
        timeout=120,
    )


def test_the_readme_and_every_docs_page_lint_clean() -> None:
    result = _lint(*documents())
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


SWALLOWED = """\
# Title

```bash
reconciler plan --sandbox examples/payroll
``` To run the
same loop in GitHub Actions, ...

## Concepts

The words.

```yaml
version: 1
```
"""

UNCLOSED = """\
# Title

```bash
reconciler plan --sandbox examples/payroll

## Concepts

The words.
"""


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        (SWALLOWED, 5, "'``` To run the' inside a block fenced by ```"),
        (UNCLOSED, 3, "the fence opened here is never closed"),
    ],
)
def test_a_fence_that_swallows_the_headings_after_it_is_caught(
    tmp_path: Path, text: str, line: int, says: str
) -> None:
    page = tmp_path / "page.md"
    page.write_text(text)
    result = _lint(page)
    assert result.returncode == 1
    assert f"{page}:{line}:1: RCN001:" in result.stdout
    assert says in result.stdout


def test_a_longer_fence_may_show_a_fence(tmp_path: Path) -> None:
    """A Markdown example that shows a fence, written inside a longer one, is not reported."""
    page = tmp_path / "fence-example.md"
    page.write_text("# Title\n\n````markdown\n```bash\nreconciler plan\n```\n````\n")
    result = _lint(page)
    assert (result.returncode, result.stdout) == (0, "")
