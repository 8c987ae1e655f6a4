"""Through the command line: the YAML nodes one run reads are bounded while it reads them.

64 MiB of tiny items (`- a` lines) are 16 million nodes: the YAML reader took 1.7 GB of memory
and 12 s to refuse them for other reasons. A run reads at most `MAX_NODES` nodes in all its
files, refused at the line where the limit is passed, before the values are built; a usual
file is let through by a bound from its indicator characters, never counted one by one, so the
bound must hold for every YAML text (tested here on generated ones).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
import yaml_rs
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.desired.nodes import MAX_NODES, nodes_at_most, nodes_in
from reconciler.desired.problems import KEPT
from tests.cli import ROOT, reconciler, user_environment

MIB = 1024 * 1024
LIMIT_SAID = f"more than {MAX_NODES:,} YAML nodes in all the files one run reads"


def test_a_flow_sequence_past_the_limit_is_refused_at_the_node_that_passes_it(
    tmp_path: Path,
) -> None:
    head = "version: 1\nworkers: ["
    # Nodes before the items: the top mapping, `version` and 1, `workers` and its sequence.
    items = MAX_NODES - 5 + 1
    (tmp_path / "team.yaml").write_text(head + "1," * (items - 1) + "1]\n", encoding="utf-8")

    result = reconciler("validate", str(tmp_path / "team.yaml"))

    said = result.stdout + result.stderr
    assert result.returncode == 1, said[:2000]
    column = len("workers: [") + 2 * (items - 1) + 1
    assert f"team.yaml:2:{column}: refused: {LIMIT_SAID}" in said, said[:2000]
    assert "must be a mapping" not in said, said[:2000]  # nothing of it was built


def test_64_mib_of_tiny_items_is_refused_in_little_memory(tmp_path: Path) -> None:
    head = b"version: 1\nworkers:\n"
    big = tmp_path / "big.yaml"
    big.write_bytes(head + b"- a\n" * ((64 * MIB - len(head)) // 4))
    # A process of its own, whose only child is the command: its peak memory is the command's.
    measure = (
        "import resource, subprocess, sys; "
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
        "print(done.stdout, done.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "-m", "reconciler", "validate", str(big)],
        capture_output=True,
        text=True,
        env=user_environment(),
        cwd=ROOT,
        timeout=120,
    )

    first, _, said = result.stdout.partition("\n")
    code, peak_kib = (int(word) for word in first.split())
    assert code == 1, said[:2000]
    # Line 3 holds the first item: nodes 5 on. Before: 1.7 GB; now under 200 MB.
    assert f"big.yaml:{MAX_NODES - 5 + 3}:3: refused: {LIMIT_SAID}" in said, said[:2000]
    assert peak_kib < 400 * 1024, f"peak {peak_kib // 1024} MiB"


def test_the_limit_holds_in_all_the_files_of_a_folder(tmp_path: Path) -> None:
    """Each file alone is under the limit; the second takes the run over it."""
    third = MAX_NODES // 3
    for name, key in (("a.yaml", "notes"), ("b.yaml", "remarks")):
        items = "1," * (2 * third) + "1"
        (tmp_path / name).write_text(f"version: 1\n{key}: [{items}]\n", encoding="utf-8")

    result = reconciler("validate", str(tmp_path))

    said = result.stdout + result.stderr
    assert result.returncode == 1, said[:2000]
    assert "a.yaml:2:1: unknown key 'notes'" in said, said[:2000]  # read whole, under the limit
    assert "b.yaml:2:" in said and LIMIT_SAID in said, said[:2000]
    assert said.count(LIMIT_SAID) == 1, said[:2000]


def test_a_hostile_accounts_file_is_refused_at_its_line(tmp_path: Path) -> None:
    accounts = tmp_path / "reconciler.yaml"
    accounts.write_text("version: 1\naccounts:\n" + "- a\n" * (MAX_NODES + 1), encoding="utf-8")

    result = reconciler("accounts", "--accounts-file", str(accounts))

    said = result.stdout + result.stderr
    assert result.returncode != 0, said[:2000]
    assert f"reconciler.yaml:{MAX_NODES - 5 + 3}:3: refused: {LIMIT_SAID}" in said, said[:2000]


@pytest.mark.parametrize(
    ("body", "first"),
    [
        ("a: 1\n" * 5000, "duplicate key 'a'"),
        ("workers:\n" + "\t- a\n" * 5000, "a tab in the indentation"),
        ("".join(f"{n}: a\n" for n in range(1, 5000)), "the key 1 is not text"),
        ("workers:\n" + "- !!str a\n" * 5000, "the YAML tag !!str is not allowed"),
    ],
    ids=["duplicate keys", "tabs", "keys not text", "tags"],
)
def test_a_file_of_thousands_of_one_problem_lists_the_first_thousand(
    tmp_path: Path, body: str, first: str
) -> None:
    """Each was listed whole: 2.4 million duplicate keys took 88 s and 1.3 GB to refuse."""
    (tmp_path / "team.yaml").write_text("version: 1\n" + body, encoding="utf-8")

    result = reconciler("validate", str(tmp_path / "team.yaml"), "--format", "json")

    assert result.returncode == 1, result.stderr
    problems = json.loads(result.stdout)
    assert first in problems[0]["message"], problems[0]
    assert len(problems) == KEPT, len(problems)  # what JSON lists at most
    assert f"at least {KEPT + 1:,} problems found" in result.stderr, result.stderr[-300:]


def test_a_state_of_100_000_workers_is_far_under_the_bound() -> None:
    worker = (
        "  - externalId: ENG-000001\n    typeOfWorker: Worker\n    workerName: Name1\n"
        "    workerSurname: Surname1\n    workerEmail: worker1@example.com\n"
        "    countryIso: GB\n    jobTitle: Engineer\n    workerEmailText: Welcome aboard\n"
        "    ignoreChanges: [jobTitle]\n"
    )
    text = "version: 1\nworkers:\n" + worker * 100_000

    assert nodes_at_most(text.encode()) < MAX_NODES / 2


# The bound is what lets a usual file through uncounted: it must hold for any YAML text.
# Every style the writer has, and by hand the forms it never writes.
_SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=30,
)
_BY_HAND = [
    "{a, b, c}",
    "[a: b, c: d, e]",
    "? a\n? b\n? c\n",
    ": a\n",
    "- -\n- - -\n-\n",
    "--- \n---\n---\n",
    "a\n...\nb\n...\nc\n",
    '{"a":1,"b":[2,3],"c":{"d":4}}',
    "[[[[[]]]]]",
    "{? a, ? b : c}",
    "a: !!str\nb: &x\nc: *x\n",
    "- ? a\n  : b\n- [? c : d]\n",
    "a: |\n  - x\n  - y\nb: >\n  z\n",
]


def _nodes(text: str) -> list[int]:
    """The nodes of `text` as each YAML reader counts them, when it reads it (yaml-rs reads
    some forms PyYAML refuses: `: a`, bare documents after `...`)."""
    counts = []
    kinds = (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)
    with contextlib.suppress(yaml.YAMLError):
        events = yaml.parse(text, Loader=yaml.CSafeLoader)
        counts.append(sum(isinstance(event, kinds) for event in events))
    with contextlib.suppress(yaml_rs.YAMLDecodeError):
        counts.append(nodes_in(yaml_rs.loads(text, parse_datetime=False)))
    assert counts, f"no reader reads {text!r}"
    return counts


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.booleans(), st.integers(min_value=0, max_value=3))
def test_the_bound_holds_for_any_yaml_text(value: object, flow: bool, documents: int) -> None:
    text = yaml.safe_dump_all([value] * (documents + 1), default_flow_style=flow)
    assert all(nodes_at_most(text.encode()) >= count for count in _nodes(text)), text
    compact = json.dumps(value, separators=(",", ":"))  # JSON is YAML too
    assert all(nodes_at_most(compact.encode()) >= count for count in _nodes(compact)), compact


def test_the_bound_holds_for_the_forms_no_writer_uses() -> None:
    for text in _BY_HAND:
        assert all(nodes_at_most(text.encode()) >= count for count in _nodes(text)), text
