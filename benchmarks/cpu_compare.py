"""Benchmark: the CPU time of a few commands in two trees, run alternately.

    PYTHONPATH=$PWD python benchmarks/cpu_compare.py --against DIR [--rounds 3] [--runs 7]

DIR is another checkout (`git worktree add --detach DIR COMMIT`). Each command is run `--runs`
times in this tree, then in DIR, for `--rounds` rounds, and the median CPU time (user + system
of the process, from `getrusage(RUSAGE_CHILDREN)`) is printed for each. CPU time moves much less
with the machine's load than wall time, so it can tell a regression apart from a busy hour.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "validate examples/quickstart.yaml": ["validate", "examples/quickstart.yaml"],
    "--help": ["--help"],
    "plan --help": ["plan", "--help"],
}


def cpu_seconds(arguments: list[str], tree: Path, runs: int) -> float:
    """The median CPU time of `reconciler ARGUMENTS` run `runs` times in `tree`."""
    spent = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "reconciler", *arguments],
            cwd=tree,
            env=dict(os.environ, PYTHONPATH=str(tree)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--against", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    trees = {"this tree": ROOT, str(args.against): args.against.resolve()}
    for name, arguments in COMMANDS.items():
        found: dict[str, list[float]] = {tree: [] for tree in trees}
        for _ in range(args.rounds):
            for tree, folder in trees.items():
                found[tree].append(cpu_seconds(arguments, folder, args.runs))
        medians = ", ".join(f"{t}: {statistics.median(v) * 1000:.0f} ms" for t, v in found.items())
        print(f"reconciler {name}: CPU {medians}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
