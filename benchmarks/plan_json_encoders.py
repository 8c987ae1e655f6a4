"""Benchmark: encoding the JSON plan of 100,000 workers, by encoder, in this process.

    PYTHONPATH=. python benchmarks/plan_json_encoders.py [--workers 100000] [--rounds 5]

Builds the plan of the `plan_100k.py` account in memory (100,000 workers in the file, 0.5%
added, 0.5% removed, 1% drifted, a webhook kept), then, in rounds that interleave them:

- the whole document (`plan_document`) encoded as `plan --format json` printed it until it
  streamed: the standard library's `json.dumps(indent=2, ensure_ascii=False)`;
- the same document encoded by orjson (`OPT_INDENT_2`) and by msgspec (`encode`, then `format`
  with an indent of 2, since its encoder has none), each checked byte for byte against the
  standard library's;
- what `plan --format json` does now: `write_plan_json`, the document made and encoded as it
  is written (here to a sink that keeps nothing).

Prints the median of `--rounds` for each, in CPU seconds of this process (what other jobs on
the machine disturb least) and wall seconds. msgspec is measured when it is installed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from reconciler.plan import Plan, PlanOptions, diff  # noqa: E402
from reconciler.render.json import plan_document, write_plan_json  # noqa: E402
from tests.plan.factories import (  # noqa: E402
    agreement,
    desired_state,
    desired_webhook,
    live_state,
    live_webhook,
    want,
)


def big_plan(n: int) -> Plan:
    share = n // 200
    drifted = range(share, share + n // 100)
    workers = [want(f"ENG-{i:06d}") for i in range(n)]
    agreements = [
        agreement(i + 1, f"ENG-{i:06d}", job_title="Senior" if i in drifted else "Engineer")
        for i in range(share, n + share)
    ]
    desired = desired_state(*workers, webhook=desired_webhook())
    return diff(desired, live_state(*agreements, webhook=live_webhook()), PlanOptions())


class _Sink:
    def write(self, data: bytes) -> int:
        return len(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    gc.disable()  # as plan does while it holds the states
    plan = big_plan(args.workers)
    document = plan_document(plan)
    reference = json.dumps(document, indent=2, ensure_ascii=False).encode()
    print(f"{args.workers} workers: a document of {len(reference) / 1e6:.1f} MB")

    encoders: dict[str, Callable[[], Any]] = {
        "json.dumps(indent=2), the document whole": lambda: json.dumps(
            document, indent=2, ensure_ascii=False
        ),
        "orjson OPT_INDENT_2, the document whole": lambda: orjson.dumps(
            document, option=orjson.OPT_INDENT_2
        ),
    }
    assert encoders["orjson OPT_INDENT_2, the document whole"]() == reference
    try:
        import msgspec
    except ImportError:
        print("msgspec: not installed, not measured")
    else:
        encoders["msgspec encode + format(indent=2), the document whole"] = lambda: (
            msgspec.json.format(msgspec.json.encode(document), indent=2)
        )
        assert encoders["msgspec encode + format(indent=2), the document whole"]() == reference
    encoders["write_plan_json: made and encoded as written (orjson)"] = lambda: write_plan_json(
        plan, _Sink()
    )

    cpu: dict[str, list[float]] = {name: [] for name in encoders}
    wall: dict[str, list[float]] = {name: [] for name in encoders}
    for _ in range(args.rounds):
        for name, encode in encoders.items():
            started, ticks = time.perf_counter(), time.process_time()
            encode()
            cpu[name].append(time.process_time() - ticks)
            wall[name].append(time.perf_counter() - started)
    for name in encoders:
        print(
            f"{name}: {statistics.median(cpu[name]):.3f} s of CPU, "
            f"{statistics.median(wall[name]):.3f} s wall (median of {args.rounds})"
        )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
