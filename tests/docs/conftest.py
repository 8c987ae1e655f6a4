"""The documentation site, built once per test process (each xdist worker builds its own)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.support import ROOT


def build_site(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of `config` into `site`, in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
    )


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of mkdocs.yml, built strict into a folder of this test process."""
    out = tmp_path_factory.mktemp("site")
    result = build_site(ROOT / "mkdocs.yml", out)
    assert result.returncode == 0, result.stderr
    return out
