"""Benchmark: how fast the command line starts, beside Python with click and PyYAML alone.

    PYTHONPATH=. python benchmarks/startup.py [--runs 15]

Times, side by side in one run (interleaved, median of `--runs`): `python -c "import click,
yaml"` (the floor: what any click-and-YAML tool pays), `reconciler validate
examples/quickstart.yaml`, and `reconciler --help`. Passes when validate is within 2.0x of
the floor and `--help` within 1.5x.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 2.0
HELP_TOLERANCE = 1.5
COMMANDS = {
    "python -c 'import click, yaml'": [sys.executable, "-c", "import click, yaml"],
    "reconciler validate examples/quickstart.yaml": [
        sys.executable, "-m", "reconciler", "validate", "examples/quickstart.yaml",
    ],
    "reconciler --help": [sys.executable, "-m", "reconciler", "--help"],
}  # fmt: skip


def timed(command: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, command in COMMANDS.items():
            samples[name].append(timed(command))
    medians = {name: statistics.median(times) for name, times in samples.items()}
    floor = medians["python -c 'import click, yaml'"]
    for name, seconds in medians.items():
        print(f"{name}: {seconds * 1000:.0f} ms ({seconds / floor:.2f}x the floor)")
    ratio = medians["reconciler validate examples/quickstart.yaml"] / floor
    help_ratio = medians["reconciler --help"] / floor
    print(f"validate: {ratio:.2f}x (target <= {TOLERANCE}); --help: {help_ratio:.2f}x "
          f"(target <= {HELP_TOLERANCE})")  # fmt: skip
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}"
    )
    ok = ratio <= TOLERANCE and help_ratio <= HELP_TOLERANCE
    print("PASS" if ok else "MISS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
