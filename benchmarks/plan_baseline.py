"""The two references `plan_100k.py` measures the plan against: the straightforward pipeline
(PyYAML's CSafeLoader, `Draft202012Validator(...).iter_errors` over the whole document, the same
refresh fetched sequentially, one `DeepDiff` of the two states), and the steps `plan` takes, each
timed in a child process of its own."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pycountry
import yaml
from deepdiff import DeepDiff
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parents[1]


#: The steps of `reconciler plan` (reconciler/cli/plan.py), timed one by one in a child.
_STEPS = """
import gc, json, sys, time
started = time.perf_counter()
from reconciler.cli import plan
from reconciler.desired import load_desired_state
from reconciler.plan import PlanOptions, diff
from reconciler.plan.refresh import refresh
from reconciler.render import renderer_for
from reconciler.service.client import ServiceClient
from reconciler.service.config import resolve_config
steps = {"import the command": time.perf_counter() - started}
gc.disable()  # as plan does while it builds the states
step = time.perf_counter()
desired = load_desired_state(sys.argv[1])
steps["load and validate the file"] = time.perf_counter() - step
step = time.perf_counter()
with ServiceClient(resolve_config(), read_only=True) as client:
    live = refresh(client, None, payruns=bool(desired.payruns))
steps["refresh"] = time.perf_counter() - step
step = time.perf_counter()
from pathlib import Path
from reconciler.cli.connection import ConnectionOptions
try:
    from reconciler.session.reading import file_and_account
except ImportError:  # a commit before the file and the account were read together
    file_and_account = None
if file_and_account is not None:
    with file_and_account(Path(sys.argv[1]), ConnectionOptions(), read_only=True) as ready:
        pass
    steps["both, as plan does: the file loaded while the account is read"] = (
        time.perf_counter() - step
    )
    step = time.perf_counter()
    diff(ready.desired, ready.live, PlanOptions())
    steps["diff after both (the pairs grouped and compared as the pages came)"] = (
        time.perf_counter() - step
    )
step = time.perf_counter()
result = diff(desired, live, PlanOptions())
steps["diff alone (of a refresh that knew no file)"] = time.perf_counter() - step
step = time.perf_counter()
renderer_for("text", color=False, show_unmanaged=False).render(result)
steps["render the text plan"] = time.perf_counter() - step
print(json.dumps(steps))
"""


def breakdown(desired: Path, env: dict[str, str], runs: int) -> dict[str, float]:
    """Seconds per step of `plan`, the best of `runs` children for each."""
    best: dict[str, float] = {}
    for _ in range(runs):
        result = subprocess.run(
            [sys.executable, "-c", _STEPS, str(desired)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        for name, seconds in json.loads(result.stdout).items():
            best[name] = min(seconds, best.get(name, seconds))
    return best


def straightforward_apart(desired: Path, base_url: str, token: str) -> dict[str, float]:
    """`straightforward` in a process of its own, so that this one stays small: the kernel
    counts in a child's peak what it held before its exec, this process's gigabytes after the
    pipeline, for a plan started later."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn) as pool:
        return pool.submit(straightforward, desired, base_url, token).result()


def straightforward(desired: Path, base_url: str, token: str) -> dict[str, float]:
    """The pipeline one would write first, timed step by step."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    document = yaml.load(desired.read_text(), Loader=yaml.CSafeLoader)
    timings["load (CSafeLoader)"] = time.perf_counter() - started

    step = time.perf_counter()
    schema = json.loads((ROOT / "schemas" / "desired-state.schema.json").read_text())
    errors = list(Draft202012Validator(schema).iter_errors(document))
    assert not errors, errors[:3]
    timings["validate (iter_errors)"] = time.perf_counter() - step

    step = time.perf_counter()
    live: list[dict[str, Any]] = []
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=60) as client:
        page = 0
        while True:
            answer = client.get("/contract/workers/list", params={"page": page, "size": 200})
            answer.raise_for_status()
            body = answer.json()
            live += body["content"]
            if body["last"]:
                break
            page += 1
        client.get("/webhooks/clients")
    timings["refresh (sequential)"] = time.perf_counter() - step

    step = time.perf_counter()
    names = {c.name: c.alpha_2 for c in pycountry.countries}
    fields = ("workerName", "workerSurname", "workerEmail", "countryIso", "jobTitle")
    wanted = {w["externalId"]: {f: w.get(f) for f in fields} for w in document["workers"]}
    have = {
        w["externalId"]: {
            "workerName": w["firstName"],
            "workerSurname": w["lastName"],
            "workerEmail": w["email"],
            "countryIso": names.get(w["country"], w["country"]),
            "jobTitle": w["jobTitle"],
        }
        for w in live
        if w["externalId"] and w["status"] in ("ACTIVE", "INVITATION_SENT", "VERIFICATION_PENDING")
    }
    difference = DeepDiff(have, wanted)
    assert difference, "the states should differ"
    timings["diff (one DeepDiff)"] = time.perf_counter() - step
    timings["total"] = time.perf_counter() - started
    return timings
