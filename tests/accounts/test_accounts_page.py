"""docs/accounts.md's walkthrough runs as written, from an empty folder to a combined plan
against two local sandboxes (on free ports instead of the page's 8701 and 8702)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from tests.cli import ROOT, user_environment

_STATUS = re.compile(r"#\s*exits (\d)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _script(text: str) -> str:
    """The page's bash blocks in order, each reconciler line checked for its exit status."""
    lines = ["set -u"]
    heredoc: str | None = None
    for block in re.findall(r"^```bash\n(.*?)^```$", text, re.S | re.M):
        for line in block.splitlines():
            if heredoc is not None:
                lines.append(line)
                heredoc = None if line == heredoc else heredoc
                continue
            found = re.search(r"<<'(\w+)'", line)
            if found:
                heredoc = found[1]
            lines.append(line)
            if line.startswith("reconciler ") and not line.rstrip().endswith("&"):
                said = _STATUS.search(line)
                expected = int(said[1]) if said else 0
                quoted = line.replace("'", "")
                lines.append(
                    f's=$?; [ "$s" -eq {expected} ] || {{ echo "exited $s: {quoted}" >&2; '
                    "kill %1 %2; exit 99; }"
                )
    return "\n".join(lines) + "\n"


def test_the_walkthrough_runs_as_written(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "accounts.md").read_text(encoding="utf-8")
    text = text.replace("8701", str(_free_port())).replace("8702", str(_free_port()))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "reconciler"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m reconciler "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = user_environment()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(
        ["bash", "-c", _script(text)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout[-3000:], result.stderr[-3000:])
    folder = tmp_path / "several-accounts"
    # Each plan, and the record that it was applied (`apply plans` again: already applied).
    found = sorted(p.name for p in (folder / "plans").iterdir())
    assert found == ["eu.applied", "eu.json", "us.applied", "us.json"]
    comment = (folder / "comment.md").read_text()
    assert "| `eu` |" in comment and "| `us` |" in comment
    assert "Traceback" not in result.stderr
