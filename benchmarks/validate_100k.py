"""Benchmark: validating a generated desired-state file of 100,000 workers.

Measures, on the same generated files:
- the straightforward approach: PyYAML's C loader, then jsonschema over the whole document
  (and, when it has problems, PyYAML's marked nodes to locate them);
- this project's `load_desired_state` on a valid file, and on the same file with a dozen
  problems spread through it (every problem located, as `reconciler validate` prints them).

    PYTHONPATH=. python benchmarks/validate_100k.py [--workers 100000] [--skip-baseline] [--worst]

`--worst` adds a third file with a problem in every worker (ours only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import jsonschema
import yaml

from reconciler.desired import InvalidDesiredState, load_desired_state
from reconciler.desired.schema import desired_state_schema

# No "NO": PyYAML reads it as false (YAML 1.1), which would hand the straightforward approach
# 12,500 errors to locate; this project's YAML 1.2 parser keeps it the string Norway's code is.
COUNTRIES = ("GB", "US", "NL", "DE", "FR", "SE", "FI", "JP")
# (worker index, field, broken value): the problems planted in the second file.
BROKEN = (
    (10, "countryIso", "XX"),
    (5_000, "workerEmail", "not-an-email"),
    (20_000, "typeOfWorker", "Business"),
    (33_333, "workerName", '""'),
    (50_000, "externalId", "ENG-000001"),
    (61_000, "colour", "red"),
    (75_000, "countryIso", "gb"),
    (88_888, "workerEmail", "worker1@example.com"),
    (99_000, "jobTitle", "TODO(export)"),
)


def generate(count: int, broken: bool, worst: bool = False) -> str:
    """A desired-state file of `count` workers, with the planted problems when `broken`, or
    with a lower-case country in every worker when `worst`."""
    planted = {index: (field, value) for index, field, value in BROKEN if broken}
    lines = [
        "version: 1",
        "scope:",
        '  externalIdPrefix: "ENG-"',
        "policy:",
        "  prune: true",
        '  maxInactivations: "25%"',
        "workers:",
    ]
    for index in range(count):
        fields = {
            "externalId": f"ENG-{index:06d}",
            "typeOfWorker": "Worker",
            "workerName": f"Name{index}",
            "workerSurname": f"Surname{index}",
            "workerEmail": f"worker{index}@example.com",
            "countryIso": COUNTRIES[index % len(COUNTRIES)],
            "jobTitle": "Engineer",
            "workerEmailText": '"Welcome aboard"',
            "ignoreChanges": "[jobTitle]",
        }
        if worst:
            fields["countryIso"] = fields["countryIso"].lower()
        if index in planted:
            field, value = planted[index]
            fields[field] = value
        first, *rest = fields.items()
        lines.append(f"  - {first[0]}: {first[1]}")
        lines += [f"    {key}: {value}" for key, value in rest]
    lines += [
        "webhook:",
        "  url: https://hooks.example.com/workforce",
        "  event_types: [KYC, PAYMENT]",
    ]
    return "\n".join(lines) + "\n"


def straightforward(path: Path) -> int:
    """PyYAML's C loader, jsonschema over everything, marked nodes to locate any error."""
    text = path.read_text()
    data = yaml.load(text, Loader=yaml.CSafeLoader)
    errors = list(jsonschema.Draft202012Validator(desired_state_schema()).iter_errors(data))
    if errors:
        yaml.compose(text, Loader=yaml.CSafeLoader)  # the marks, to say where each error is
    return len(errors)


def ours(path: Path) -> int:
    try:
        load_desired_state(path, environ={})
    except InvalidDesiredState as error:
        for problem in error.problems[:20]:
            print(f"    {problem}")
        return len(error.problems)
    return 0


def timed(function: Callable[[Path], int], path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    found = function(path)
    return time.perf_counter() - start, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=100_000)
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--worst", action="store_true", help="also a problem in every worker")
    arguments = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}, workers: {arguments.workers}"
    )
    with tempfile.TemporaryDirectory() as directory:
        valid = Path(directory) / "valid.yaml"
        broken = Path(directory) / "broken.yaml"
        valid.write_text(generate(arguments.workers, broken=False))
        broken.write_text(generate(arguments.workers, broken=True))
        size = valid.stat().st_size / 1e6
        print(f"file: {size:.1f} MB")
        runs = [("ours", ours)]
        if not arguments.skip_baseline:
            runs.insert(0, ("straightforward", straightforward))
        files = [("valid", valid), ("broken", broken)]
        if arguments.worst:
            worst = Path(directory) / "worst.yaml"
            worst.write_text(generate(arguments.workers, broken=False, worst=True))
            files.append(("worst", worst))
        results = {}
        for name, function in runs:
            for label, path in files:
                if label == "worst" and function is not ours:
                    continue
                seconds, found = timed(function, path)
                results[f"{name}/{label}"] = {"seconds": round(seconds, 2), "problems": found}
                print(f"{name:>16} {label:>7}: {seconds:6.2f} s, {found} problems")
        print(json.dumps(results))


if __name__ == "__main__":
    main()
