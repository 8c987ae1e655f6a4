"""Every count a person reads has a thousands separator: "3,000 invitations", "2,839 of 3,000".

One plan of 3,000 invitations, as text, as the pull-request comment and as JSON (which keeps
plain integers for programs).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import yaml

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler


def _desired(path: Path, workers: int) -> Path:
    document = {
        "version": 1,
        "scope": {"externalIdPrefix": "NEW-"},
        "workers": [
            {"externalId": f"NEW-{n:04d}", "typeOfWorker": "Worker", "workerName": "New",
             "workerSurname": f"Person{n}", "workerEmail": f"new{n}@example.com",
             "countryIso": "GB"}
            for n in range(1, workers + 1)
        ],
    }  # fmt: skip
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


#: A count of four digits or more written without its separator, as in "3000 invitations".
_BARE = re.compile(r"(?<![\d.,:#\w-])\d{4,}(?![\d.,:\w-])")


def test_counts_in_text_markdown_and_comments_have_a_thousands_separator(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    desired = _desired(tmp_path / "workforce.yaml", 3000)

    text = reconciler("plan", str(desired), server=sandbox)
    assert text.returncode == 0, text.stderr
    assert "Plan: 3,000 to invite" in text.stdout
    assert "Apply would send 3,000 invitation e-mails" in text.stdout

    comment = reconciler("comment", str(desired), server=sandbox)
    assert comment.returncode == 0, comment.stderr
    body = comment.stdout
    assert "| 3,000 |" in body  # the summary table
    assert "<summary>Invitations (3,000)</summary>" in body
    assert re.search(
        r"Not shown here, to fit GitHub's comment limit: [\d,]+ of 3,000 invitations", body
    )
    assert _BARE.findall(body.replace("<!--", "")) == []

    plain = reconciler("plan", str(desired), "--format", "json", server=sandbox)
    assert json.loads(plain.stdout)["summary"]["invite"] == 3000  # JSON: a number, unchanged


def _is_len(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"


def _bare_length(node: ast.AST) -> bool:
    """`{len(x)}` or `{len(x) - 20}` in an f-string, with no format of its own."""
    if not isinstance(node, ast.FormattedValue) or node.format_spec is not None:
        return False
    if isinstance(node.value, ast.BinOp):
        return any(_is_len(inner) for inner in ast.walk(node.value))
    return _is_len(node.value)


def test_no_length_is_written_into_human_output_without_the_one_format() -> None:
    """`{len(...)}` in an f-string is a count written bare: it goes through `counted` (or
    `plural`) instead. The modules that write for people: renderers, commands, apply, GitHub."""
    root = Path(__file__).resolve().parents[2] / "reconciler"
    bare = [
        f"{path.relative_to(root)}:{node.lineno}"
        for folder in ("render", "gitops", "cli", "apply", "plan", "desired", "export", "accounts")
        for path in sorted((root / folder).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if _bare_length(node)
    ]
    assert bare == []
